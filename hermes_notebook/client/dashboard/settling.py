"""After a Dashboard turn ends, Hermes holds its session a moment longer: a prompt for it waits until Hermes
has let go of it (or, where the server can queue it safely, a short grace).

Hermes emits a turn's ``message.complete``, then does its post-turn work (the ``/goal`` judge, titles) and
only then clears the session's "running" flag and reports the session (``session.info``, ``running: false``).
A prompt that lands in between is taken as busy: queued behind a turn that has already ended, and the default
``busy_input_mode`` interrupts "the running turn" for it from a thread of its own, an interrupt that can hit
the queued prompt's own run (Hermes 0.19.0: "Operation interrupted: waiting for model response"). So
:meth:`DashboardConnection.submit <.connection.DashboardConnection.submit>` calls :func:`until_let_go` before
it sends a prompt: every caller of the client is safe, not only the turn runner.

Detected, never assumed: a session is held (:meth:`.core.DashboardCore.held`) only on a server whose
``session.info`` was seen to say ``running``; elsewhere nothing waits. A server that takes ``prompt.submit``'s
``queued`` key (:attr:`.core.DashboardCore.takes_queued`, newer Dashboards) can be given the prompt while it
holds the session, with ``queued: true``: queued without the interrupt, it runs once Hermes let go. There the
wait is only :data:`QUEUE_GRACE`: Hermes starts a queued prompt only after its post-turn housekeeping, so
letting a short window pass and sending a plain prompt answers sooner (benchmarks/bench_settling.py), while a
long post-turn (a model judging a goal) never blocks the caller. The wait listens to the session only while it
waits (almost always not at all: the report follows ``message.complete`` within milliseconds).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import TYPE_CHECKING

from .session import Listener, ListenerItem, SessionRef

if TYPE_CHECKING:
    from .core import DashboardCore

__all__ = ["QUEUE_GRACE", "SETTLE_TIMEOUT", "until_let_go"]

#: Seconds a submit waits for Hermes to let go of the session (its post-turn work may call a model); past it
#: the prompt is sent anyway.
SETTLE_TIMEOUT = 60.0
#: The wait on a server that takes ``queued``: past it the prompt goes out with ``queued: true``.
QUEUE_GRACE = 0.5

Listen = Callable[[SessionRef, Listener], Callable[[], None]]


async def until_let_go(core: DashboardCore, listen: Listen, ref: SessionRef) -> None:
    """Return once Hermes no longer holds the session after its last turn, or the wait is over (at once when
    it does not hold it); ``listen`` is the connection's (it resumes the session if needed)."""
    key = ref.stored_id
    if not core.held(key):
        return
    let_go = asyncio.Event()

    def on_item(item: ListenerItem) -> None:
        if item.kind == "connection" or not core.held(key):  # a drop ends it too: a resume reports anew
            let_go.set()

    off = listen(ref, on_item)
    try:
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(let_go.wait(), QUEUE_GRACE if core.takes_queued else SETTLE_TIMEOUT)
    finally:
        off()
