"""One turn at a time per session, in the order they were asked, whichever face asked.

Why: a second prompt to a busy Dashboard session interrupts the running turn (``busy_input_mode`` "interrupt")
or is refused as busy, so a turn waits for the one before it. ``hermes.ask()``, ``%hermes`` and a Chat prompt
on the same session all wait in the same line here, and so do undo, branch and the rewind before a regenerate:
the one mechanism that serialises a session's turns (``tests/test_conventions.py`` counts them).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import AsyncIterator

__all__ = ["TurnQueue"]


class TurnQueue:
    """Per-session lines of waiting turns (package loop only). ``async with queue.turn(key):`` holds the
    session.

    A waiter that is cancelled (a Chat's queued prompt dropped by its stop button, a timed-out ask) leaves the
    line without ever holding the session; the one holding it hands it to the next on the way out.
    """

    def __init__(self) -> None:
        self._lines: dict[str, deque[asyncio.Future[None]]] = {}

    def busy(self, key: str) -> bool:
        """True while a turn holds the session ``key`` or waits for it."""
        return key in self._lines

    def waiting(self, key: str) -> int:
        """How many turns wait behind the one holding the session ``key``."""
        return max(0, len(self._lines.get(key, ())) - 1)

    @contextlib.asynccontextmanager
    async def turn(self, key: str) -> AsyncIterator[None]:
        """Wait for the session's earlier turns, then hold it for the ``async with`` body."""
        line = self._lines.setdefault(key, deque())
        ticket: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        if not line:
            ticket.set_result(None)
        line.append(ticket)
        try:
            await ticket
            yield
        finally:
            holding = line[0] is ticket
            line.remove(ticket)
            if holding and line and not line[0].done():
                line[0].set_result(None)  # the next in line holds the session now
            if not line and self._lines.get(key) is line:
                del self._lines[key]
