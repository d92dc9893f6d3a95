"""The chat's Steer and Stop on a running subagent (a ``subagent:<id>`` part), on the kernel side.

The view asks ``{"type": "subagent_controls"}`` once (answered with which of the two this Hermes offers: the
conversation learns it from the server's answers, see :mod:`hermes_notebook.session.subagents`) and shows only
those; ``{"type": "subagent_steer", "subagent_id", "text"}`` and ``{"type": "subagent_stop", "subagent_id"}``
go to the conversation. The outcome is said on the notice line; nothing here is synced state.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Coroutine
from typing import Any, Protocol

from ..errors import HermesError
from ..session import Conversation
from . import inbound
from .replies import answer, refusal

__all__ = ["SubagentChat", "install_subagents"]

log = logging.getLogger(__name__)


class SubagentChat(Protocol):
    """What these handlers use of :class:`~hermes_notebook.widgets.chat.Chat` (its public surface only)."""

    conversation: Conversation
    notice: str

    @property
    def session_id(self) -> str | None: ...

    def on_action(self, name: str, handler: Callable[[dict[str, Any]], object]) -> None: ...
    def run_in_background(self, coro: Coroutine[Any, Any, None], what: str) -> Any: ...
    def send_to_views(self, content: dict[str, Any]) -> None: ...


def install_subagents(chat: SubagentChat) -> None:
    """Answer ``subagent_controls``; act on ``subagent_steer`` and ``subagent_stop``."""
    chat.on_action(
        "subagent_controls", lambda q: chat.run_in_background(_controls(chat, q), "asking about subagents")
    )
    chat.on_action(
        "subagent_steer",
        lambda c: chat.run_in_background(_steer(chat, c["subagent_id"], c["text"]), "steering the subagent"),
    )
    chat.on_action(
        "subagent_stop",
        lambda c: chat.run_in_background(_stop(chat, c["subagent_id"]), "stopping the subagent"),
    )


def _session(chat: SubagentChat) -> str:
    if chat.session_id is None:
        raise inbound.Refused("the session is not open yet")
    return chat.session_id


async def _controls(chat: SubagentChat, question: dict[str, Any]) -> None:
    try:
        offered = await chat.conversation.subagent_controls(_session(chat))
    except (
        HermesError,
        inbound.Refused,
    ) as exc:  # no Dashboard, no session: the view offers nothing, no notice
        log.info("no subagent controls: %s", exc)
        chat.send_to_views(refusal(question, str(exc)[:500]))
        return
    chat.send_to_views(
        answer(
            question,
            {
                "type": "subagent_controls",
                "steer": bool(offered.get("steer")),
                "stop": bool(offered.get("stop")),
            },
        )
    )


async def _steer(chat: SubagentChat, subagent_id: str, text: str) -> None:
    outcome = await chat.conversation.steer_subagent(_session(chat), subagent_id, text)
    chat.notice = (
        "Sent to the subagent: it reads it after its current step."
        if outcome.status == "queued"
        else "The subagent did not take the steer (it may have finished)."
    )


async def _stop(chat: SubagentChat, subagent_id: str) -> None:
    found = await chat.conversation.stop_subagent(_session(chat), subagent_id)
    chat.notice = "Stopped the subagent." if found else "That subagent had already finished."
