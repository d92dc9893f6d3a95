"""Drops and reconnects: fail or keep what was open, tell listeners, and bring sessions back with growing
waits.

After a drop the connection waits (its :class:`~.backoff.Backoff`), reconnects and resumes every listened
session and every session whose turns a newer server lets us keep (docs/protocol/dashboard.md §5,
docs/protocol/dashboard-newer.md §4). Listeners are told ``disconnected``, ``reconnecting`` and
``reconnected``. The waits reset only after a successful resubscribe round, so a server that accepts and drops
is retried at 1, 2, 4... s rather than every second.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from ...errors import HermesClosedError, HermesGatewayClosedError
from .backoff import Backoff
from .callbacks import Callbacks
from .channel import Channel
from .core import DashboardCore
from .session import ListenerItem

__all__ = ["LOSSLESS_RECONNECT_WINDOW", "Reconnector"]

logger = logging.getLogger("hermes_notebook.client.dashboard.connection")

#: Seconds open turns are kept across a drop (newer Dashboards) before they fail like on 0.19.0.
LOSSLESS_RECONNECT_WINDOW = 60.0


class Reconnector:
    """The reconnect policy and loop of one connection.

    ``backoff`` None means automatic reconnects are off (listeners are still told ``disconnected``). ``open``
    dials a socket; ``resume`` resumes a session by stored id; ``sleep`` waits between attempts (tests pass a
    fake clock).
    """

    def __init__(
        self,
        backoff: Backoff | None,
        core: DashboardCore,
        channel: Channel,
        callbacks: Callbacks,
        *,
        open: Callable[[], Awaitable[None]],
        resume: Callable[[str], Awaitable[Any]],
        sleep: Callable[[float], Awaitable[Any]],
    ) -> None:
        self.backoff = backoff
        self._core = core
        self._channel = channel
        self._callbacks = callbacks
        self._open = open
        self._resume = resume
        self._sleep = sleep
        self._task: asyncio.Task[None] | None = None
        self._wake: asyncio.Event | None = None
        self._told_disconnected: set[str] = set()  # stored ids whose listeners wait for "reconnected"
        self._dropped_at = 0.0
        self._drop_text = ""

    def dropped(self, detail: str) -> None:
        """The socket closed (``detail``: its close code): fail or keep open turns, tell listeners, start
        retrying."""
        core, channel = self._core, self._channel
        text = f"The Dashboard connection closed before the turn finished{detail}."
        # A newer server keeps a replay ring per session (replay_epoch): open turns stay open across the drop
        # and are caught up after the reconnect (session.events.since) instead of failing.
        core.dropped(text, self.backoff is not None and core.replay_epoch is not None and not channel.closed)
        if channel.closed:
            return
        self._dropped_at = asyncio.get_running_loop().time()
        self._drop_text = text
        will_retry = self.backoff is not None and (bool(core.listeners) or core.has_suspended())
        retry_in = self.backoff.min_delay if will_retry and self.backoff else None
        error = HermesGatewayClosedError(f"the Dashboard connection to {channel.url} closed{detail}")
        for stored_id in list(core.listeners):
            self._told_disconnected.add(stored_id)
            self.notify(stored_id, "disconnected", retry_in, error)
        if will_retry:
            self.start()

    def start(self) -> None:
        """Start the reconnect loop unless it runs already."""
        if self._task is None or self._task.done():
            self._task = asyncio.ensure_future(self._loop())

    def wake(self) -> None:
        """A caller connected: a loop waiting out its backoff can resubscribe right away."""
        if self._wake is not None:
            self._wake.set()

    def stop(self) -> None:
        """The connection closed: end the loop."""
        if self._task is not None:
            self._task.cancel()

    async def bring_back(self) -> None:
        """Resume what belongs on the current socket now; what fails is retried by the reconnect loop."""
        if await self.resubscribe() and self.backoff is not None:
            self.start()

    async def resubscribe(self) -> list[str]:
        """Resume every listened session not yet bound to this socket; returns the stored ids that failed."""
        failed: list[str] = []
        for stored_id in self._core.maintained():
            if self._core.is_bound(stored_id, caught_up=True):
                continue
            try:
                await self._resume(stored_id)
            except HermesClosedError:
                return failed
            except Exception as exc:  # noqa: BLE001 - reported, then retried by the reconnect loop
                failed.append(stored_id)
                self._callbacks.report("listen", exc)
                continue
            if stored_id in self._told_disconnected:
                self._told_disconnected.discard(stored_id)
                self.notify(stored_id, "reconnected", None, None)
        return failed

    def notify(
        self, stored_id: str, status: Any, retry_in: float | None, error: BaseException | None
    ) -> None:
        """Hand a ``connection`` item (disconnected, reconnecting, reconnected) to the session's listeners."""
        core = self._core
        listeners = core.listeners.get(stored_id)
        if listeners:
            session = core.sessions.get(stored_id)
            item = ListenerItem(
                "connection", session.ref if session else None, status=status, retry_in=retry_in, error=error
            )
            self._callbacks.deliver(listeners, item)

    def _wanted(self) -> bool:
        """Whether some session to maintain is not back on an open socket (and reconnects are on)."""
        if self._channel.closed or self.backoff is None:
            return False
        core = self._core
        wanted = core.maintained()
        if not wanted:
            return False
        return not self._channel.connected or not all(core.is_bound(sid, caught_up=True) for sid in wanted)

    async def _loop(self) -> None:
        """Wait, connect, resume listened sessions; repeat with growing waits until all are back (§5)."""
        assert self.backoff is not None
        delays = iter(self.backoff)
        while self._wanted():
            delay = next(delays)
            await self._pause(delay)
            if not self._wanted():
                break
            if not self._channel.connected:
                try:
                    await self._open()
                except HermesClosedError:
                    return
                except Exception as exc:  # noqa: BLE001 - every failure is retried; cancellation passes
                    logger.info("Dashboard connect failed; reconnecting in %.1f s: %s", delay, exc)
                    for stored_id in list(self._core.listeners):
                        self.notify(stored_id, "reconnecting", delay, exc)
                    self._give_up_suspended()
                    continue
            generation = self._core.generation
            failed = await self.resubscribe()
            if not failed and self._channel.connected and self._core.generation == generation:
                # Reset only once the sessions are back on a socket that is still open: a server that accepts
                # and then drops (or fails every resume) keeps the waits growing.
                delays = iter(self.backoff)

    async def _pause(self, delay: float) -> None:
        """Sleep ``delay`` with the injectable clock, or less if a caller connected meanwhile."""
        if self._wake is None:
            self._wake = asyncio.Event()
        self._wake.clear()
        sleeper = asyncio.ensure_future(self._sleep(delay))
        waker = asyncio.ensure_future(self._wake.wait())
        try:
            await asyncio.wait({sleeper, waker}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            sleeper.cancel()
            waker.cancel()

    def _give_up_suspended(self) -> None:
        """Open turns kept across a drop fail once the server has been away longer than the catch-up
        window."""
        if self._channel.connected or not self._core.has_suspended():
            return
        if asyncio.get_running_loop().time() - self._dropped_at < LOSSLESS_RECONNECT_WINDOW:
            return
        self._core.give_up(self._drop_text)
