"""Undo, branch and the turn to send again: rewinding a Dashboard session, through the connection's public
API.

What the server offers (docs/protocol/dashboard-newer.md §5.8):

- ``session.undo`` drops the last user turn and everything after it from an idle session. On a newer Dashboard
  it rewrites the stored transcript (``session_workdir.py::_rewind_active_session_history`` through
  ``SessionDB.rewind_user_turn``). hermes-agent 0.19.0 has a ``session.undo`` too, but it only pops the
  model's in-memory context: its stored transcript, which every view shows, keeps the exchange; and its
  ``session.branch`` answers no stored id and copies no partial history. So both are offered only by a server
  that has ``session.branch_whole`` (the same generation); a server without it is told "not offered" before
  anything changes. The probe is a call without a session: "session not found" means the method is there.
- Regenerate and edit are undo (``intent: "retry"`` for a regenerate, as Hermes' own /retry sends) followed by
  a new prompt. ``prompt.submit``'s truncation parameters would do it in one call, but the newer server
  refuses an ordinal-only cut of a stored session (4004) and wants ``truncate_before_row_id``, the stored row
  of the user turn, which a live turn here does not know (``user_row_id`` is absent "whenever persistence is
  not yet proven").
- A branch copies the whole history (``session.branch_whole``: without echoing it back); a branch at an
  earlier message then undoes the turns after it in the new session. ``session.branch``'s ``count`` counts
  stored rows (tool calls, empty assistant rows...), not the turns a user sees.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

from ...errors import HermesNotOfferedError, HermesRPCError, HermesUsageError

if TYPE_CHECKING:
    from .connection import DashboardConnection
    from .session import SessionRef

__all__ = [
    "BUSY",
    "SETTLE_SECONDS",
    "branch_session",
    "check_rewind",
    "last_user_text",
    "turns_after",
    "undo_turn",
]

METHOD_NOT_FOUND = -32601
BUSY = 4009  # a turn is running (§1 error codes)
# message.complete comes before the server marks the session idle: an undo right after a turn may be told
# "busy" for a moment; retry for this long while no turn of the session is open here.
SETTLE_SECONDS = 3.0
RETRY_EVERY = 0.1
PROBE = "session.branch_whole"


def _message_field(message: Any, name: str) -> Any:
    return message.get(name) if isinstance(message, Mapping) else getattr(message, name, None)


def turns_after(messages: Sequence[Any], message_id: str | int) -> int:
    """How many user turns follow message ``message_id`` (Message objects or their dicts); refused if absent.
    A negative number ``-N`` means the last N turns, refused unless at least one turn is left before them."""
    if isinstance(message_id, int):
        if message_id >= 0:
            raise HermesUsageError(f"at={message_id}: a number must be -N, to leave out the last N exchanges")
        prompts = sum(1 for m in messages if _message_field(m, "role") == "user")
        if -message_id >= prompts:
            raise HermesUsageError(
                f"the session has {prompts} exchange(s): leaving out the last {-message_id} "
                "would leave none to copy"
            )
        return -message_id
    ids = [_message_field(m, "id") for m in messages]
    if message_id not in ids:
        raise HermesUsageError(f"there is no message {message_id!r} in this session's history")
    return sum(1 for m in messages[ids.index(message_id) + 1 :] if _message_field(m, "role") == "user")


def last_user_text(messages: Sequence[Any]) -> str:
    """The text of the session's last user message (what a regenerate sends again)."""
    for message in reversed(messages):
        if _message_field(message, "role") != "user":
            continue
        parts = _message_field(message, "parts") or ()
        texts = [_message_field(p, "text") or "" for p in parts if _message_field(p, "kind") == "text"]
        if "".join(texts).strip():
            return "".join(texts)
    raise HermesUsageError("there is no prompt in this session to send again")


async def check_rewind(conn: DashboardConnection, what: str) -> None:
    """Refuse in one line when the server cannot rewind a stored session (see the module docstring)."""
    try:
        await conn.request(PROBE, {"session_id": ""})
    except HermesRPCError as exc:
        if exc.code == METHOD_NOT_FOUND:
            raise HermesNotOfferedError(
                what,
                "session.undo that rewrites the stored transcript",
                detail=f"; this server has no {PROBE}",
            ) from None


async def _call_idle(conn: DashboardConnection, ref: SessionRef, method: str, params: dict[str, Any]) -> Any:
    deadline = asyncio.get_running_loop().time() + SETTLE_SECONDS
    while True:
        try:
            return await conn.request(method, params)
        except HermesRPCError as exc:
            if exc.code == METHOD_NOT_FOUND:
                raise HermesNotOfferedError("this", method) from None
            late = asyncio.get_running_loop().time() > deadline
            if exc.code != BUSY or conn.open_turns(ref) or late:
                raise
            await asyncio.sleep(RETRY_EVERY)


async def undo_turn(
    conn: DashboardConnection,
    ref: SessionRef,
    *,
    intent: Literal["undo", "retry"] = "undo",
    checked: bool = False,
) -> int:
    """``session.undo``: drop the session's last exchange; returns how many stored rows went (0: nothing to
    undo)."""
    if not checked:
        await check_rewind(conn, "undo")
    result = await _call_idle(conn, ref, "session.undo", {"session_id": ref, "intent": intent})
    return int(result.get("removed") or 0) if isinstance(result, Mapping) else 0


async def branch_session(
    conn: DashboardConnection, ref: SessionRef, *, drop_turns: int = 0, name: str | None = None
) -> SessionRef:
    """A new session holding this one's history without its last ``drop_turns`` user turns; returns its
    ref."""
    if drop_turns < 0:
        raise HermesUsageError("drop_turns must be 0 or more")
    params: dict[str, Any] = {"session_id": ref}
    if name:
        params["name"] = name
    try:
        result = await _call_idle(conn, ref, PROBE, params)
    except HermesNotOfferedError:
        raise HermesNotOfferedError("branching", PROBE) from None
    stored = str(result.get("stored_session_id") or "") if isinstance(result, Mapping) else ""
    if not stored:
        raise HermesNotOfferedError("branching", PROBE, detail=" named no stored session")
    child = await conn.resume(stored)  # the same live id the branch was given (§5: resume of a live session)
    for _ in range(drop_turns):
        if not await undo_turn(conn, child, checked=True):
            break
    return child
