"""After a Dashboard turn ends, Hermes holds its session a moment longer: a prompt for it waits until Hermes
has let go of it, or goes out as one that runs after where the server takes that.

Hermes emits a turn's ``message.complete``, then does its post-turn work (the ``/goal`` judge, titles) and
only then clears the session's "running" flag and reports the session (``session.info``, ``running: false``).
A prompt that lands in between is taken as busy: queued behind a turn that has already ended, and the default
``busy_input_mode`` interrupts "the running turn" for it from a thread of its own, an interrupt that can hit
the queued prompt's own run (Hermes 0.19.0: "Operation interrupted: waiting for model response"). So
:meth:`DashboardConnection.submit <.connection.DashboardConnection.submit>` calls :func:`until_let_go` before
it sends a prompt: every caller of the client is safe, not only the turn runner.

Detected, never assumed: a session is held (:meth:`.core.DashboardCore.held`) only on a server whose
``session.info`` was seen to say ``running``; elsewhere nothing waits. A server that takes ``prompt.submit``'s
``queued`` key (:attr:`.core.DashboardCore.takes_queued`, newer Dashboards) gets the prompt at once with
``queued: true``: queued without the interrupt, it runs once Hermes let go, so nothing waits there either (a
long post-turn, a model judging a goal, never blocks the caller, and the prompt goes before Hermes' own goal
continuation). Measured, waiting instead gains nothing there (benchmarks/bench_settling.py). The wait listens
to the session only while it waits (almost always not at all: the report follows ``message.complete`` within
milliseconds); it is bounded by :data:`SETTLE_TIMEOUT`.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import TYPE_CHECKING

from .session import Listener, ListenerItem, SessionRef

if TYPE_CHECKING:
    from .core import DashboardCore

__all__ = ["SETTLE_TIMEOUT", "until_let_go"]

#: Seconds a submit waits for Hermes to let go of the session (its post-turn work may call a model); past it
#: the prompt is sent anyway.
SETTLE_TIMEOUT = 60.0

Listen = Callable[[SessionRef, Listener], Callable[[], None]]


async def until_let_go(core: DashboardCore, listen: Listen, ref: SessionRef) -> None:
    """Return once Hermes no longer holds the session after its last turn (at once when it does not, or when
    the prompt can go out queued); ``listen`` is the connection's (it resumes the session if needed)."""
    key = ref.stored_id
    if core.takes_queued or not core.held(key):
        return
    let_go = asyncio.Event()

    def on_item(item: ListenerItem) -> None:
        if item.kind == "connection" or not core.held(key):  # a drop ends it too: a resume reports anew
            let_go.set()

    off = listen(ref, on_item)
    try:
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(let_go.wait(), SETTLE_TIMEOUT)
    finally:
        off()
