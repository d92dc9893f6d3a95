"""The reconnect delay policy of the Dashboard connection (docs/architecture.md, ``client/dashboard/``).

After a drop the connection waits :data:`BACKOFF_MIN_DELAY` before the first attempt, multiplies the wait by
:data:`BACKOFF_FACTOR` after each failure, never waits longer than :data:`BACKOFF_MAX_DELAY`, and starts over
after a successful connection. The seed adapter's ``reconnect.minDelayMs``/``maxDelayMs`` are the same knobs.
Unlike websockets' own ``backoff()`` there is no random first delay: one notebook kernel reconnecting to one
local Dashboard has no thundering herd to spread.
"""

from __future__ import annotations

from collections.abc import Iterator

__all__ = ["BACKOFF_FACTOR", "BACKOFF_MAX_DELAY", "BACKOFF_MIN_DELAY", "Backoff"]

#: Seconds to wait before the first reconnect attempt.
BACKOFF_MIN_DELAY = 1.0
#: Upper bound of any wait, in seconds.
BACKOFF_MAX_DELAY = 30.0
#: Growth of the wait after each failed attempt.
BACKOFF_FACTOR = 2.0


class Backoff:
    """Exponential reconnect delays, from ``min_delay`` up to ``max_delay``, growing by ``factor``.

    Use it either as an iterable (each ``iter()`` starts a fresh schedule, so "reset" is simply a new
    iterator) or statefully with :meth:`next_delay` and :meth:`reset`.
    """

    __slots__ = ("_current", "factor", "max_delay", "min_delay")

    def __init__(
        self,
        min_delay: float = BACKOFF_MIN_DELAY,
        max_delay: float = BACKOFF_MAX_DELAY,
        factor: float = BACKOFF_FACTOR,
    ) -> None:
        if min_delay < 0:
            raise ValueError(f"min_delay must be >= 0, got {min_delay!r}")
        if max_delay < min_delay:
            raise ValueError(f"max_delay ({max_delay!r}) must be >= min_delay ({min_delay!r})")
        if factor < 1:
            raise ValueError(f"factor must be >= 1, got {factor!r}")
        self.min_delay = float(min_delay)
        self.max_delay = float(max_delay)
        self.factor = float(factor)
        self._current: float | None = None

    def __iter__(self) -> Iterator[float]:
        """Yield the delays of one schedule, forever: min, min*factor, ... capped at max."""
        delay = self.min_delay
        while True:
            yield delay
            delay = min(delay * self.factor, self.max_delay)

    def next_delay(self) -> float:
        """The next delay of the running schedule (the stateful form of iterating)."""
        if self._current is None:
            self._current = self.min_delay
        else:
            self._current = min(self._current * self.factor, self.max_delay)
        return self._current

    def reset(self) -> None:
        """Start the schedule over; call it after a successful connection."""
        self._current = None

    def __repr__(self) -> str:
        return f"Backoff(min_delay={self.min_delay:g}, max_delay={self.max_delay:g}, factor={self.factor:g})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Backoff):
            return NotImplemented
        return (self.min_delay, self.max_delay, self.factor) == (
            other.min_delay,
            other.max_delay,
            other.factor,
        )

    def __hash__(self) -> int:
        return hash((self.min_delay, self.max_delay, self.factor))
