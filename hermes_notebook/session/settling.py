"""After a Dashboard turn ends, Hermes holds its session a moment longer: a session's next prompt waits until
Hermes has let go of it.

Hermes emits a turn's ``message.complete``, then does its post-turn work (the ``/goal`` judge, titles) and
only then clears the session's "running" flag and reports the session (``session.info``, ``running: false``).
A prompt that lands in between is taken as busy: queued behind a turn that has already ended, and the default
``busy_input_mode`` interrupts "the running turn" for it from a thread of its own, an interrupt that can hit
the queued prompt's own run (Hermes 0.19.0: "Operation interrupted: waiting for model response"). So the
runner's Dashboard driver calls :func:`until_let_go` before each submit.

Detected, never assumed: the connection's routing state knows a session is held (``DashboardConnection.held``)
only on a server whose ``session.info`` was seen to say ``running``; elsewhere nothing waits. The wait listens
to the session only while it waits (almost always not at all: the report follows ``message.complete`` within
milliseconds), so a turn's events cost nothing more; it is bounded by :data:`SETTLE_TIMEOUT`.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..client.dashboard import DashboardConnection, SessionRef
    from ..client.dashboard.session import ListenerItem

__all__ = ["SETTLE_TIMEOUT", "until_let_go"]

#: Seconds a submit waits for Hermes to let go of the session (its post-turn work may call a model); past it
#: the prompt is sent anyway.
SETTLE_TIMEOUT = 60.0


async def until_let_go(conn: DashboardConnection, ref: SessionRef, timeout: float = SETTLE_TIMEOUT) -> None:
    """Return once Hermes no longer holds the session after its last turn (at once if it does not)."""
    if not conn.held(ref):
        return
    let_go = asyncio.Event()

    def on_item(item: ListenerItem) -> None:
        if item.kind == "connection" or not conn.held(ref):  # a drop ends the wait too: a resume reports anew
            let_go.set()

    off = conn.listen(ref, on_item)
    try:
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(let_go.wait(), timeout)
    finally:
        off()
