"""After a Dashboard turn ends, Hermes holds its session a moment longer: a session's next prompt waits until
Hermes has let go of it.

Hermes emits a turn's ``message.complete``, then does its post-turn work (the ``/goal`` judge, titles) and
only then clears the session's "running" flag and reports the session (``session.info``, ``running: false``).
A prompt that lands in between is taken as busy: queued behind a turn that has already ended, and the default
``busy_input_mode`` interrupts "the running turn" for it from a thread of its own, an interrupt that can hit
the queued prompt's own run (Hermes 0.19.0: "Operation interrupted: waiting for model response"). So
:class:`Settling` follows each turn's session events and holds the session's next submit until that report.

Detected, never assumed: a server is waited for only once its ``session.info`` has been seen to carry
``running``. Until then a submit waits at most :data:`PROBE_TIMEOUT` for the report (and stops waiting on a
server that never sends one); once seen, at most :data:`SETTLE_TIMEOUT` (a slow judge). A turn that ended
without ``message.complete`` (a dropped connection) is not waited for. Nothing is held per finished turn: a
watch lets go of its listener as soon as the report arrives.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..client.dashboard import DashboardConnection, SessionRef
    from ..client.dashboard.session import ListenerItem

__all__ = ["PROBE_TIMEOUT", "SETTLE_TIMEOUT", "Settling", "TurnWatch"]

#: Seconds a submit waits for the report while the server has not yet been seen to send one.
PROBE_TIMEOUT = 2.0
#: Seconds a submit waits for the report from a server that sends one (its post-turn work may call a model).
SETTLE_TIMEOUT = 60.0


class TurnWatch:
    """One turn's view of its session's events: has the turn ended (``message.complete``), and has Hermes
    reported the session idle since?"""

    def __init__(self, settling: Settling, key: str) -> None:
        self._settling = settling
        self.key = key
        self.completed = False
        self.idle = asyncio.Event()
        self.off: Callable[[], None] = lambda: None

    def __call__(self, item: ListenerItem) -> None:
        """A listener item of the session (package loop)."""
        if item.kind != "event":
            if item.status == "disconnected":  # the turn ended with the socket: a resume reports afresh
                self.settle()
            return
        event = item.event
        if event is None:
            return
        if event.type == "message.complete":
            self.completed = True
        elif event.type == "message.start":  # a turn Hermes started itself (a queued prompt, a goal's next)
            self.completed = False
        elif event.type == "session.info" and isinstance(event.payload.get("running"), bool):
            self._settling.reports = True
            if self.completed and event.payload["running"] is False:
                self.settle()

    def settle(self) -> None:
        """Hermes let go of the session (or there is nothing to wait for): wake the waiter, stop listening
        (once)."""
        if self.idle.is_set():
            return
        self.idle.set()
        self.off()
        self._settling.forget(self)


class Settling:
    """Which sessions Hermes still holds after a turn that ended here (package loop only; one per runner)."""

    def __init__(self) -> None:
        self._held: dict[str, TurnWatch] = {}  # stored id -> the watch of its last turn, until Hermes let go
        #: Whether this server's session.info says ``running`` (None: not seen yet).
        self.reports: bool | None = None

    def __len__(self) -> int:
        return len(self._held)

    def watch(self, conn: DashboardConnection, ref: SessionRef) -> TurnWatch:
        """Before a submit: follow the session's events for the turn about to start."""
        watch = TurnWatch(self, ref.stored_id)
        watch.off = conn.listen(ref, watch)
        return watch

    def ended(self, watch: TurnWatch) -> None:
        """The turn ended here: its session is held until Hermes reports it idle, if the turn completed."""
        if watch.idle.is_set():
            return
        if not watch.completed or self.reports is False:
            watch.settle()
            return
        self._held[watch.key] = watch

    def forget(self, watch: TurnWatch) -> None:
        """Drop ``watch`` from the held sessions (it settled)."""
        if self._held.get(watch.key) is watch:
            del self._held[watch.key]

    async def wait(self, key: str) -> None:
        """Before a submit to the session ``key``: return once Hermes let go of it after its last turn."""
        watch = self._held.get(key)
        if watch is None:
            return
        timeout = SETTLE_TIMEOUT if self.reports else PROBE_TIMEOUT
        try:
            await asyncio.wait_for(watch.idle.wait(), timeout)
        except asyncio.TimeoutError:
            if self.reports is None:
                self.reports = False  # this server does not report: never wait for it again
        finally:
            watch.settle()
