"""The chat's session details: the active model, the context window's breakdown, and Hermes' own commands.

Handlers a :class:`~hermes_notebook.widgets.chat.Chat` installs (:func:`install_session_details`), over its
public methods and its conversation only. ``model`` and ``context_usage`` are small synced traitlets (the
header's model label and session usage gauge), refreshed when a session opens and after every turn. The
command catalog is never state (a saved notebook would keep it): a view asks (``commands``, with a request id)
when its ``/`` menu opens, and the kernel answers with a ``commands`` message. A ``command`` question runs
``/name args`` on the session; its output comes back as a ``command_output`` answer, which the view shows as
text. Everything here is server
text: scrubbed of the connection's key and token before it leaves the kernel.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Coroutine, Mapping
from typing import Any, Protocol

from ..session import Conversation
from . import inbound
from .chat_reproduce import REPRODUCE, REPRODUCE_ENTRY, reproduce_output
from .replies import answer, refusal

__all__ = ["ChatDetails", "banner", "context_state", "install_session_details", "session_entry", "short"]

log = logging.getLogger(__name__)

#: Categories kept from a context breakdown (a few are expected: system prompt, tools, conversation ...).
MAX_CATEGORIES = 12


def context_state(
    usage: Mapping[str, Any] | None, breakdown: Mapping[str, Any] | None
) -> dict[str, Any] | None:
    """The ``context_usage`` traitlet: ``{"used", "max", "percent", "categories": [{"id", "label",
    "tokens"}]}`` or None."""
    source = breakdown if breakdown and breakdown.get("context_max") else usage or {}
    used, most = source.get("context_used"), source.get("context_max")
    if not isinstance(used, int) or not isinstance(most, int) or most <= 0:
        return None
    categories = []
    for item in (breakdown or {}).get("categories") or ():
        if isinstance(item, Mapping) and isinstance(item.get("tokens"), int):
            categories.append(
                {
                    "id": str(item.get("id") or "")[:40],
                    "label": str(item.get("label") or "")[:80],
                    "tokens": int(item["tokens"]),
                }
            )
    percent = source.get("context_percent")
    return {
        "used": used,
        "max": most,
        "percent": percent if isinstance(percent, (int, float)) else 100 * used / most,
        "categories": categories[:MAX_CATEGORIES],
    }


class ChatDetails(Protocol):
    """What these handlers use of :class:`~hermes_notebook.widgets.chat.Chat` (its public surface only)."""

    conversation: Conversation
    model: str
    context_usage: dict[str, Any] | None
    notice: str

    @property
    def session_id(self) -> str | None: ...

    def on_action(self, name: str, handler: Callable[[dict[str, Any]], object]) -> None: ...
    def observe(self, handler: Callable[[Any], None], names: Any = ..., type: str = ...) -> None: ...
    def run_in_background(self, coro: Coroutine[Any, Any, None], what: str) -> Any: ...
    def send_prompt(self, text: str, images: Any = ()) -> None: ...
    def send_to_views(self, content: dict[str, Any]) -> None: ...
    def scrub_value(self, value: Any) -> Any: ...


def install_session_details(chat: ChatDetails) -> None:
    """Answer the view's ``commands`` and ``command`` questions; keep the model label and the gauge
    current."""
    chat.on_action(
        "commands", lambda question: _answer(chat, question, _catalog(chat), "listing Hermes' commands")
    )
    chat.on_action(
        "command",
        lambda question: _answer(chat, question, _command(chat, question["line"]), "running the command"),
    )

    def session_opened(change: Any) -> None:
        if (change["old"] or {}).get("id") == (change["new"] or {}).get("id"):
            return  # a new title only
        chat.model, chat.context_usage = "", None
        if change["new"] is not None:
            chat.run_in_background(refresh_session_info(chat), "reading the session's model")

    def turn_ended(change: Any) -> None:
        if change["old"] and not change["new"]:
            chat.run_in_background(refresh_session_info(chat), "reading the session's usage")

    chat.observe(session_opened, names="session")
    chat.observe(turn_ended, names="busy")


def _answer(
    chat: ChatDetails, question: dict[str, Any], reply: Coroutine[Any, Any, dict[str, Any]], what: str
) -> None:
    """Answer ``question`` with what ``reply`` gives; a failure is the notice line and the view's error
    answer."""

    async def run() -> None:
        try:
            chat.send_to_views(answer(question, await reply))
        except Exception as exc:
            chat.send_to_views(refusal(question, chat.scrub_value(str(exc))))
            raise

    chat.run_in_background(run(), what)


async def refresh_session_info(chat: ChatDetails) -> None:
    """Read the open session's model and context window; best effort: a failure is logged, never the
    notice."""
    session = chat.session_id
    if session is None:
        return
    label = chat.model  # a set_model that lands while we read wins: its label is newer than what we read
    try:
        model = await chat.conversation.model(session)
        if model and chat.session_id == session and chat.model == label:
            chat.model = chat.scrub_value(model)[:200]
        breakdown = await chat.conversation.context_window(session)
    except Exception as exc:
        log.info("could not read the session's model and usage: %s", exc)
        return
    if chat.session_id == session:
        chat.context_usage = chat.scrub_value(context_state(None, breakdown))


async def _catalog(chat: ChatDetails) -> dict[str, Any]:
    entries = await chat.conversation.commands(chat.session_id)
    return {"type": "commands", "commands": chat.scrub_value([*entries, REPRODUCE_ENTRY])}


async def _command(chat: ChatDetails, line: str) -> dict[str, Any]:
    if line.split()[:1] == [REPRODUCE]:  # ours: the check runs here, nothing goes to Hermes
        return chat.scrub_value(await reproduce_output(line))
    if chat.session_id is None:
        raise inbound.Refused("the session is not open")
    outcome = await chat.conversation.command(line, chat.session_id)
    if outcome.kind in ("send", "skill") and outcome.message.strip():
        chat.send_prompt(outcome.message)
        text = outcome.display or f"{outcome.command} sent a prompt"
    else:
        text = outcome.output or outcome.display or outcome.message or "(no output)"
    if outcome.command.split()[0] in ("/model", "/provider"):  # it may have switched models
        chat.run_in_background(refresh_session_info(chat), "reading the session's model")
    return chat.scrub_value(
        {
            "type": "command_output",
            "command": outcome.command,
            "output": text,
            "warning": outcome.warning,
            "prefill": outcome.message if outcome.kind == "prefill" else "",
        }
    )


# --- small values the chat shows: a picker entry, the connection banner ---


def session_entry(item: Mapping[str, Any]) -> dict[str, Any]:
    """A session picker entry: its id and title (no preview: synced state is saved, a first message can hold
    anything)."""
    sid = item.get("id") or item.get("stored_id") or item.get("session_id")
    return {"id": str(sid), "title": item.get("title") or None}


def short(value: Any, limit: int = 200) -> str:
    """``value`` as one line of at most ``limit`` characters (a banner's message)."""
    text = " ".join(str(value).split())
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"


def banner(status: str, retry_in: float | None, message: str | None) -> dict[str, Any]:
    """The ``connection`` traitlet value the front end's banner reads."""
    return {"status": status, "retry_in": retry_in, "message": message}
