"""The chat's message buttons (undo, regenerate, branch, edit) and its file attachments, on the kernel side.

The view sends ``{"type": "undo" | "regenerate" | "branch", "message_id"}`` (an undo with ``"files": true``
puts the files the turn changed back too: ``Conversation.undo(files=True)``), ``{"type": "edit", "message_id",
"text"}`` and ``{"type": "send_files", "text", "images", "files": [{"name", "data" (base64)}]}``
(checked by :mod:`.inbound`). Which message a button may act on is checked here against the kernel's copy of
the
conversation: undo and regenerate only the last reply, edit only the last prompt, and nothing while a turn
runs. The work itself is the conversation's (:class:`~hermes_notebook.session.Conversation`: ``undo``,
``resend``, ``branch``, ``attach``; why 0.19.0 is told "not offered" is said there). After an undo the history
is fetched again (the same path as Refresh); after a branch the chat opens the new session (the same path as
the picker).

Undo with files is offered only where it works: for the last reply the view asks ``{"type": "turn_files",
"message_id"}`` and shows the choice only when the answer names files (``Conversation.changes``: Hermes took a
checkpoint before that turn changed them). A Hermes that cannot rewind (0.19.0) refuses the question, and the
view then offers nothing; no notice, since nobody clicked. The answer also says whether Hermes takes
checkpoints
here: the view then offers Branch with files (``{"type": "branch", "message_id", "files": true}``: the files
changed after that message go back, ``Conversation.branch(files=True)``). File names are the server's text:
scrubbed, shown inert.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Sequence
from typing import Any, Protocol

from ..errors import HermesError
from ..session import Conversation
from ..turns import MessageDict
from . import inbound
from .chat_subagents import install_subagents
from .replies import answer, refusal

__all__ = ["ChatLike", "install_actions"]


class ChatLike(Protocol):
    """What these handlers use of :class:`~hermes_notebook.widgets.chat.Chat` (its public surface only)."""

    conversation: Conversation
    busy: bool
    notice: str

    @property
    def session_id(self) -> str | None: ...

    def on_action(self, name: str, handler: Callable[[dict[str, Any]], object]) -> None: ...
    def send_to_views(self, content: dict[str, Any]) -> None: ...
    def scrub_value(self, value: Any) -> Any: ...
    def run_in_background(self, coro: Coroutine[Any, Any, None], what: str) -> Any: ...
    def snapshot(self) -> list[dict[str, Any]]: ...
    async def refetch(self) -> None: ...
    async def switch(self, session: str | None) -> None: ...
    def send_prompt(self, text: str, images: Sequence[tuple[str, bytes]] = ()) -> None: ...


def install_actions(chat: ChatLike) -> None:
    """Register the handlers of the message buttons (and the subagent parts' ones) and of prompts with
    files."""
    handlers: dict[str, tuple[Callable[[ChatLike, dict[str, Any]], Coroutine[Any, Any, None]], str]] = {
        "undo": (_undo, "undoing the last exchange"),
        "regenerate": (_regenerate, "regenerating the reply"),
        "edit": (_edit, "editing the prompt"),
        "branch": (_branch, "branching the session"),
        "send_files": (_send_files, "attaching the files"),
        "turn_files": (_turn_files, "listing the files the turn changed"),
        "branch_files": (_branch_files, "listing the files a branch would put back"),
    }
    for name, (handler, what) in handlers.items():
        chat.on_action(name, _bind(chat, handler, what))
    install_subagents(chat)  # the Steer and Stop buttons of a running subagent's part (chat_subagents.py)


def _bind(
    chat: ChatLike, handler: Callable[[ChatLike, dict[str, Any]], Coroutine[Any, Any, None]], what: str
) -> Callable[[dict[str, Any]], None]:
    return lambda content: chat.run_in_background(handler(chat, content), what)


def _last(messages: list[dict[str, Any]], role: str) -> str | None:
    return next((m["id"] for m in reversed(messages) if m.get("role") == role), None)


async def _idle_session(chat: ChatLike, what: str) -> tuple[str, list[dict[str, Any]]]:
    if chat.busy:
        raise inbound.Refused(f"wait for the running turn to end (or stop it) before you {what}")
    session = chat.session_id
    if session is None:
        raise inbound.Refused("the session is not open yet")
    await chat.conversation.rewindable(what)
    return session, chat.snapshot()


def _require(message_id: str, expected: str | None, what: str) -> None:
    if message_id != expected:
        raise inbound.Refused(f"only the last {what} can be changed this way")


def _messages(messages: list[dict[str, Any]]) -> list[MessageDict]:
    return messages  # type: ignore[return-value]  # the store's dicts are message dicts


async def _undo(chat: ChatLike, content: dict[str, Any]) -> None:
    session, messages = await _idle_session(chat, "undo")
    _require(content["message_id"], _last(messages, "assistant"), "reply")
    removed = await chat.conversation.undo(session, files=content.get("files") is True)
    await chat.refetch()
    notice = "Undid the last exchange." if removed else "There was nothing to undo."
    if removed.files:
        notice += f" Put back {len(removed.files)} file(s): {', '.join(removed.files)}."
    if removed.skipped:
        notice += f" Kept (changed since): {', '.join(removed.skipped)}."
    chat.notice = chat.scrub_value(notice)[:2000]


async def _turn_files(chat: ChatLike, question: dict[str, Any]) -> None:
    """Answer which files the last reply's turn changed (empty: Undo with files is not offered for it)."""
    rows: list[dict[str, Any]] = []
    try:
        session, messages = await _idle_session(chat, "undo with files")
        _require(question["message_id"], _last(messages, "assistant"), "reply")
        changes = await chat.conversation.changes(session)
    except (HermesError, inbound.Refused) as exc:  # 0.19.0, no session, a turn running: nothing to offer
        chat.send_to_views(refusal(question, chat.scrub_value(str(exc))))
        return
    if changes.diff is not None:
        rows = [
            {"path": c.path, "status": c.status, "added": c.added, "removed": c.removed}
            for c in changes.diff.files
        ]
    chat.send_to_views(
        answer(
            question,
            chat.scrub_value(
                {
                    "type": "turn_files",
                    "message_id": question["message_id"],
                    "files": rows,
                    "checkpoints": changes.enabled,
                }
            ),
        )
    )


async def _branch_files(chat: ChatLike, question: dict[str, Any]) -> None:
    """Answer which files a branch with files at the message would put back (asked before it branches)."""
    try:
        session, messages = await _idle_session(chat, "branch")
        found = await chat.conversation.branch_files(
            session, at=question["message_id"], messages=_messages(messages)
        )
    except (HermesError, inbound.Refused) as exc:  # no checkpoints, turns that did not run here, 0.19.0
        chat.send_to_views(refusal(question, chat.scrub_value(str(exc))))
        return
    rows = [{"path": c.path, "status": c.status, "added": c.added, "removed": c.removed} for c in found]
    content = {"type": "branch_files", "message_id": question["message_id"], "files": rows}
    chat.send_to_views(answer(question, chat.scrub_value(content)))


async def _resend(chat: ChatLike, text: str | None, message_id: str) -> None:
    what, role = ("regenerate", "assistant") if text is None else ("edit", "user")
    session, messages = await _idle_session(chat, what)
    _require(message_id, _last(messages, role), "reply" if text is None else "prompt")
    prompt = await chat.conversation.resend(session, text, messages=_messages(messages))
    await chat.refetch()
    chat.send_prompt(prompt)


async def _regenerate(chat: ChatLike, content: dict[str, Any]) -> None:
    await _resend(chat, None, content["message_id"])


async def _edit(chat: ChatLike, content: dict[str, Any]) -> None:
    if not content["text"].strip():
        raise inbound.Refused("the edited prompt is empty")
    await _resend(chat, content["text"], content["message_id"])


async def _branch(chat: ChatLike, content: dict[str, Any]) -> None:
    session, messages = await _idle_session(chat, "branch")
    child = await chat.conversation.branch(
        session,
        at=content["message_id"],
        messages=_messages(messages),
        follow=False,
        files=content.get("files") is True,
    )
    await chat.switch(child)
    notice = "Branched: this chat continues in a copy; the original is in the session list."
    if content.get("files") is True:
        put, kept = getattr(child, "files", ()), getattr(child, "skipped", ())
        notice += f" Put back {len(put)} file(s)" + (f": {', '.join(put)}." if put else ".")
        if kept:
            notice += f" Left as they are (created since): {', '.join(kept)}."
    chat.notice = chat.scrub_value(notice)[:2000]


async def _send_files(chat: ChatLike, content: dict[str, Any]) -> None:
    files = inbound.decode_files(content["files"])
    images = inbound.decode_images(content["images"])
    if chat.session_id is None:
        raise inbound.Refused("the session is not open yet")
    prompt = await chat.conversation.attach(chat.session_id, content["text"], files)
    chat.notice = ""
    chat.send_prompt(prompt, images)
