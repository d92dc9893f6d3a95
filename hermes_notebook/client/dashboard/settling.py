"""After a Dashboard turn ends, Hermes holds its session a moment longer: a prompt for it waits until Hermes
has let go of it, or goes out as one that must run after.

Hermes emits a turn's ``message.complete``, then does its post-turn work (the ``/goal`` judge, titles) and
only then clears the session's "running" flag and reports the session (``session.info``, ``running: false``).
A prompt that lands in between is taken as busy: queued behind a turn that has already ended, and the default
``busy_input_mode`` interrupts "the running turn" for it from a thread of its own, an interrupt that can hit
the queued prompt's own run (Hermes 0.19.0: "Operation interrupted: waiting for model response"). So
:meth:`DashboardConnection.submit <.connection.DashboardConnection.submit>` calls :func:`until_let_go` before
it sends a prompt: every caller of the client is safe, not only the turn runner.

Detected, never assumed: a session is held (:meth:`.core.DashboardCore.must_settle`) only on a server whose
``session.info`` was seen to say ``running``; a server that takes ``prompt.submit``'s ``queued`` key (newer
Dashboards) gets the prompt at once with ``queued: true`` instead, which queues it without interrupting
anything, so nothing waits there. The wait listens to the session only while it waits (almost always not at
all: the report follows ``message.complete`` within milliseconds); it is bounded by :data:`SETTLE_TIMEOUT`.
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


async def until_let_go(
    core: DashboardCore, listen: Listen, ref: SessionRef, timeout: float = SETTLE_TIMEOUT
) -> None:
    """Return once a prompt for the session no longer needs to wait (at once when it never did); ``listen`` is
    the connection's (it resumes the session if needed)."""
    if not core.must_settle(ref.stored_id):
        return
    let_go = asyncio.Event()

    def on_item(item: ListenerItem) -> None:
        if item.kind == "connection" or not core.must_settle(
            ref.stored_id
        ):  # a drop ends it: a resume reports anew
            let_go.set()

    off = listen(ref, on_item)
    try:
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(let_go.wait(), timeout)
    finally:
        off()
