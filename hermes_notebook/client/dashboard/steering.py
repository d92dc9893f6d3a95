"""Steering a running turn or a subagent: ``session.steer``, ``subagent.steer``, ``subagent.interrupt``.

A steer is guidance for the turn that is running now, not a new prompt: Hermes adds the text to the next tool
result (docs/protocol/dashboard-newer.md §16). So a steer is sent only while a turn of the session runs here
(else it is a prompt: send it with ``submit``), and an accepted one is marked in that turn where it went in
(:mod:`hermes_notebook.turns.steering`). A turn that makes no further tool call never reads it: the newer
server then runs it as the next turn. ``subagent.steer`` is the newer server's (0.19.0: not offered);
``subagent.interrupt`` stops one delegated child on both.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from ...errors import HermesRPCError, HermesUsageError
from ...turns.steering import steer_marker
from .offered import call_offered, not_offered

if TYPE_CHECKING:
    from .connection import DashboardConnection
    from .session import SessionRef

__all__ = ["MAX_STEER_CHARS", "SteerOutcome", "interrupt_subagent", "steer_subagent", "steer_turn"]

#: Longest steer sent (a prompt-sized text; Hermes adds it to a tool result the model reads).
MAX_STEER_CHARS = 20_000
_NO_STEER = 4010  # "agent does not support steer"


@dataclass(frozen=True)
class SteerOutcome:
    """``queued``: Hermes took the text for the running turn's next tool result; ``rejected``: it did not
    (send it as a prompt instead)."""

    status: Literal["queued", "rejected"]
    text: str


def _text(text: object) -> str:
    if not isinstance(text, str) or not text.strip():
        raise HermesUsageError("a steer is a non-empty text")
    if len(text) > MAX_STEER_CHARS:
        raise HermesUsageError(
            f"a steer is at most {MAX_STEER_CHARS:,} characters (this one has {len(text):,})"
        )
    return text


def _outcome(result: object, text: str) -> SteerOutcome:
    status = result.get("status") if isinstance(result, Mapping) else None
    return SteerOutcome("queued" if status == "queued" else "rejected", text)


async def steer_turn(conn: DashboardConnection, ref: SessionRef, text: str) -> SteerOutcome:
    """Send ``text`` into the session's running turn (``session.steer``) and mark it there when Hermes took
    it.

    Refused before anything is sent when no turn of the session runs on this connection.
    """
    text = _text(text)
    running = [
        turn for turn in conn.running_turns() if turn.ref is ref or turn.ref.stored_id == ref.stored_id
    ]
    if not running:
        raise HermesUsageError("there is no running turn to steer in this session: send the text as a prompt")
    try:
        result = await call_offered(
            conn, "session.steer", {"text": text}, what="steering a running turn", ref=ref
        )
    except HermesRPCError as exc:
        if exc.code == _NO_STEER:
            raise not_offered("steering a running turn", "session.steer") from None
        raise
    outcome = _outcome(result, text)
    if outcome.status == "queued":
        running[0].add_marker(steer_marker(text))
    return outcome


async def steer_subagent(
    conn: DashboardConnection, ref: SessionRef, subagent_id: str, text: str
) -> SteerOutcome:
    """Send ``text`` to one running subagent of the session (``subagent.steer``, newer servers)."""
    if not isinstance(subagent_id, str) or not subagent_id.strip():
        raise HermesUsageError("subagent_id names a subagent of this session (its part's subagent id)")
    text = _text(text)
    params = {"subagent_id": subagent_id, "text": text}
    return _outcome(
        await call_offered(conn, "subagent.steer", params, what="steering a subagent", ref=ref), text
    )


async def interrupt_subagent(conn: DashboardConnection, ref: SessionRef, subagent_id: str) -> bool:
    """Stop one subagent of the session (``subagent.interrupt``); False when it had already finished."""
    if not isinstance(subagent_id, str) or not subagent_id.strip():
        raise HermesUsageError("subagent_id names a subagent of this session (its part's subagent id)")
    result = await call_offered(
        conn, "subagent.interrupt", {"subagent_id": subagent_id}, what="stopping a subagent", ref=ref
    )
    return isinstance(result, Mapping) and result.get("found") is True
