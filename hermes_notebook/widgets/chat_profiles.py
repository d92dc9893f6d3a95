"""The chat's profile picker and its Queue/Steer choice.

Profiles: the header's picker asks ``{"type": "profiles"}`` (a question, answered with the profiles this
Hermes serves and the chat's own); choosing one sends ``{"type": "switch_profile", "profile"}``. A profile is
a whole Hermes home (its sessions, model, jobs), and a connection is kept in one (``Settings.profile``), so
switching means a new :class:`~hermes_notebook.session.Conversation` for that profile, owned by the chat, and
a new session
there: the notebook's ``hermes`` (and its asks, its kernel tools) stays where it was, which is what one
expects from a picker in one widget. The name is checked against the list before anything else is sent; a
0.19.0 Hermes lists no profiles, so the question is refused in one line (its picker stays hidden).

Steer: a composer message sent while a turn runs goes into the queue (as before) unless the user chose Steer:
``{"type": "steer", "text"}`` goes into the running turn (``conversation.steer``), and the turn shows a marker
where it went in (the client adds it). Nothing here is synced state: profile names are server text, scrubbed.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Coroutine
from typing import Any, Protocol

from ..errors import HermesError
from ..session import Conversation
from . import inbound
from .replies import answer, refusal

__all__ = ["ProfileChat", "install_profiles"]

log = logging.getLogger(__name__)


class ProfileChat(Protocol):
    """What these handlers use of :class:`~hermes_notebook.widgets.chat.Chat` (its public surface only)."""

    conversation: Conversation
    busy: bool
    notice: str
    kernel_modes: dict[str, Any] | None

    @property
    def session_id(self) -> str | None: ...

    def on_action(self, name: str, handler: Callable[[dict[str, Any]], object]) -> None: ...
    def run_in_background(self, coro: Coroutine[Any, Any, None], what: str) -> Any: ...
    def send_to_views(self, content: dict[str, Any]) -> None: ...
    def scrub_value(self, value: Any) -> Any: ...
    async def rebind(self, conversation: Conversation) -> None: ...


def install_profiles(chat: ProfileChat) -> None:
    """Answer ``profiles``; act on ``switch_profile`` and ``steer``."""
    chat.on_action(
        "profiles", lambda question: chat.run_in_background(_profiles(chat, question), "listing profiles")
    )
    chat.on_action(
        "switch_profile",
        lambda c: chat.run_in_background(_switch(chat, c["profile"]), "switching the profile"),
    )
    chat.on_action(
        "steer", lambda c: chat.run_in_background(_steer(chat, c["text"]), "steering the running turn")
    )


async def _profiles(chat: ProfileChat, question: dict[str, Any]) -> None:
    try:
        listed = await chat.conversation.profiles()
    except (
        HermesError
    ) as exc:  # e.g. 0.19.0 lists none: the view hides its picker, no notice (it asks on open)
        log.info("no profiles to pick from: %s", exc)
        chat.send_to_views(refusal(question, chat.scrub_value(str(exc))))
        return
    current = chat.conversation.profile or next((p.name for p in listed if p.is_default), None)
    rows = [
        {"name": p.name, "default": p.is_default, "model": p.model or "", "description": p.description}
        for p in listed
    ]
    chat.send_to_views(
        answer(question, chat.scrub_value({"type": "profiles", "profiles": rows, "current": current}))
    )


async def _switch(chat: ProfileChat, name: str) -> None:
    from ..settings import check_profile_name

    conversation = chat.conversation
    current = conversation.profile
    if name == current:
        return
    if chat.busy:
        raise inbound.Refused("stop the running turn before changing profiles")
    if conversation.settings is None:
        raise inbound.Refused(
            "this chat was given a connection: open a chat from connect(profile=...) instead"
        )
    profile = check_profile_name(name)
    known = {
        p.name: p for p in await conversation.profiles()
    }  # a name that is none is refused before anything
    if profile not in known:
        raise inbound.Refused(
            f"this Hermes has no profile {profile!r} (its profiles: {', '.join(sorted(known))})"
        )
    chosen = None if known[profile].is_default and current is None else profile
    await chat.rebind(Conversation(conversation.settings.with_(profile=chosen)))
    chat.kernel_modes = None  # the kernel's tools stay with the notebook's connection (its profile)
    chat.notice = (
        f"Profile {profile}: a new session in that profile (the notebook's connection, and the kernel "
        "tools it shares, keep theirs)."
    )


async def _steer(chat: ProfileChat, text: str) -> None:
    if not text.strip():
        raise inbound.Refused("the steer is empty")
    if not chat.busy or chat.session_id is None:
        raise inbound.Refused("no turn is running: send the text as a prompt")
    outcome = await chat.conversation.steer(chat.session_id, text)
    if outcome.status != "queued":
        chat.notice = (
            "Hermes did not take the steer (the turn makes no more tool calls): send it as a prompt."
        )
