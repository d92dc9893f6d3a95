"""A stop that reaches the server before its turn has started: make sure the turn ends, and stops.

``prompt.submit`` answers ``streaming`` before the turn thread has begun (it first waits for the session's
agent to be built, docs/protocol/dashboard.md §3.1). A ``session.interrupt`` in that window has two outcomes
the wire does not report on 0.19.0:

- the turn thread sees the cancel flag and returns with no ``message.start``, ``message.complete`` or
  ``error``: the turn we opened would wait forever. We ask ``session.active_list`` whether the session still
  runs; once it is idle with our turn unstarted, the turn ends ``cancelled`` here.
- the interrupt lands after that check but before the agent clears its interrupt flag at turn entry: the stop
  is lost and the turn runs to its end. Once our turn has started we send the interrupt again.

Newer servers emit an ``error`` event ("Turn cancelled before the agent was ready") in the first case, which
:class:`~.turn_state.TurnState` ends as ``cancelled`` when a stop was sent; the follow-up then finds the turn
done.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from ...errors import HermesError
from .channel import Channel
from .routing import SessionState
from .turn_state import TurnState

__all__ = ["FOLLOW_UP_LIMIT", "POLL_INTERVAL", "follow_up", "session_runs"]

#: Seconds between two looks at the session, and how long to keep looking (the agent build can take a while).
POLL_INTERVAL = 0.5
FOLLOW_UP_LIMIT = 120.0


async def follow_up(channel: Channel, session: SessionState, turn: TurnState) -> None:
    """Watch an interrupted turn that had not started until it ends, resending the stop once it starts."""
    deadline = time.monotonic() + FOLLOW_UP_LIMIT
    while not turn.done and time.monotonic() < deadline:
        if turn.started:
            with contextlib.suppress(
                HermesError
            ):  # the turn already ended, or the socket went: nothing to stop
                await channel.call("session.interrupt", {"session_id": turn.ref.live_id})
            return
        if not await session_runs(channel.call, turn.ref.live_id):
            await asyncio.sleep(0)  # let events already read off the socket reach the turn first
            if not turn.started and not turn.done:
                session.drop(turn)
            return
        await asyncio.sleep(POLL_INTERVAL)


async def session_runs(call: Callable[[str, Mapping[str, Any]], Awaitable[Any]], live_id: str) -> bool:
    """Whether the server still has a turn running or starting in that session (``session.active_list``).

    When it cannot tell (an error, an unknown method, a row missing), the answer is "still running": a wrong
    "no" would end a turn that goes on; a wrong "yes" only keeps us looking until the turn's own events
    arrive.
    """
    try:
        result: Any = await call("session.active_list", {})
    except HermesError:
        return True
    rows = result.get("sessions") if isinstance(result, Mapping) else None
    for row in rows if isinstance(rows, list) else []:
        if isinstance(row, Mapping) and row.get("id") == live_id:
            return row.get("status") != "idle"
    return True
