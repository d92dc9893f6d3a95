"""Stopping one turn: :class:`TurnControl`, shared by the face that asked (a stop button, ``%hermes stop``, a
timeout) and the turn runner (which knows how to interrupt it on the server once the turn is sent).

Why its own object: a stop can come from any thread at any time, before the turn was sent (it must still stop
once it is) or after it ended (nothing to do); the runner arms the interrupt when the server has the turn.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

from .. import runtime
from ..errors import HermesError

__all__ = ["TurnControl"]

log = logging.getLogger(__name__)


class TurnControl:
    """A turn's stop: :meth:`stop` from any thread; :meth:`arm`, :meth:`watch` and :meth:`interrupt_now` on
    the package loop (the runner's side)."""

    def __init__(self) -> None:
        self._stop_requested = False
        self._stop_event: asyncio.Event | None = None
        self._interrupt: Callable[[], Awaitable[Any]] | None = None
        self._interrupted = False
        #: When :meth:`stop` was first called (``time.time()``; latency measurements).
        self.stop_requested_at: float | None = None

    @property
    def stop_requested(self) -> bool:
        """True once :meth:`stop` was called."""
        return self._stop_requested

    def stop(self) -> None:
        """Ask for the turn to be interrupted on the server (returns at once; thread-safe)."""
        if self.stop_requested_at is None:
            self.stop_requested_at = time.time()
        self._stop_requested = True
        event = self._stop_event
        if event is not None:
            with contextlib.suppress(RuntimeError):  # the loop is gone: nothing left to stop
                runtime.call_soon(event.set)

    async def watch(self) -> None:
        """Wait for :meth:`stop`, then interrupt the turn on the server."""
        event = self._stop_event = asyncio.Event()
        if self._stop_requested:
            event.set()
        await event.wait()
        await self.interrupt_now()

    async def arm(self, interrupt: Callable[[], Awaitable[Any]]) -> None:
        """Set how to interrupt this turn on the server; interrupts at once if a stop came before."""
        self._interrupt = interrupt
        if self._stop_requested:
            await self.interrupt_now()

    async def interrupt_now(self) -> None:
        """Interrupt the turn on the server (once; a no-op before :meth:`arm`)."""
        if self._interrupted or self._interrupt is None:
            return
        self._interrupted = True
        try:
            await self._interrupt()
        except HermesError as exc:  # e.g. the run already ended: nothing to stop
            log.debug("interrupt: %s", exc)
