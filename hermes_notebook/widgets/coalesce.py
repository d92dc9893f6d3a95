"""Coalesced delivery of change records to a view, at most ``max_rate`` batches per second.

A model can stream thousands of tiny deltas a second. Sending each as its own comm message floods the
browser and the kernel's IOPub channel; resending whole messages per delta costs O(n^2) bytes. Instead changes
are buffered, consecutive ``append`` records for the same part are merged into one, and the buffer is flushed
on a timer (the first change in a quiet period is sent at once, so latency stays low when traffic is light).

:func:`merge_appends` is pure. :class:`Coalescer` owns the timer; it is driven by an asyncio loop (the package
loop in practice) and hands each batch to a ``send(batch)`` callable with a growing sequence number.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any

__all__ = ["DEFAULT_MAX_RATE", "Coalescer", "merge_appends"]

#: Batches per second sent to a browser view at most (the chat widget's contract).
DEFAULT_MAX_RATE = 30.0

Change = dict[str, Any]


def merge_appends(changes: Iterable[Change]) -> list[Change]:
    """Merge runs of ``append`` records aimed at the same part into one record (order is kept)."""
    merged: list[Change] = []
    pending: list[str] = []
    for change in changes:
        last = merged[-1] if merged else None
        if (
            change.get("op") == "append"
            and last is not None
            and last.get("op") == "append"
            and last["message_id"] == change["message_id"]
            and last["part_id"] == change["part_id"]
        ):
            pending.append(change["text"])
            continue
        if pending:
            assert last is not None
            merged[-1] = {**last, "text": last["text"] + "".join(pending)}
            pending = []
        merged.append(change)
    if pending:
        last = merged[-1]
        merged[-1] = {**last, "text": last["text"] + "".join(pending)}
    return merged


class Coalescer:
    """Buffers change records and flushes them to ``send`` at most ``max_rate`` times a second.

    Thread-safe ``push``: changes may come from the package loop (live turns) or the kernel thread.
    ``send(seq, changes)`` is called on the given loop; ``seq`` grows by one per batch so a view that asked
    for a snapshot can drop what the snapshot already holds.
    """

    def __init__(
        self,
        send: Callable[[int, list[Change]], None],
        *,
        loop: asyncio.AbstractEventLoop,
        max_rate: float = DEFAULT_MAX_RATE,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if max_rate <= 0:
            raise ValueError(f"max_rate must be positive, got {max_rate}")
        self._send = send
        self._loop = loop
        self._interval = 1.0 / max_rate
        self._clock = clock
        self._lock = threading.Lock()
        self._buffer: list[Change] = []
        self._scheduled = False
        self._last_flush = float("-inf")
        self.seq = 0
        #: Batches sent so far (benchmarks read it).
        self.batches_sent = 0

    def push(self, changes: Iterable[Change]) -> None:
        """Queue changes; schedule a flush if none is pending."""
        with self._lock:
            self._buffer.extend(changes)
            if self._scheduled or not self._buffer:
                return
            self._scheduled = True
            delay = max(0.0, self._last_flush + self._interval - self._clock())
        self._loop.call_soon_threadsafe(self._schedule, delay)

    def _schedule(self, delay: float) -> None:
        if delay <= 0:
            self.flush()
        else:
            self._loop.call_later(delay, self.flush)

    def flush(self) -> None:
        """Send whatever is buffered now (called by the timer, or before a snapshot/boundary)."""
        with self._lock:
            batch, self._buffer = self._buffer, []
            self._scheduled = False
            if not batch:
                return
            self.seq += 1
            seq = self.seq
            self._last_flush = self._clock()
        self.batches_sent += 1
        self._send(seq, merge_appends(batch))

    def snapshot_seq(self) -> int:
        """Flush pending changes and return the sequence number a snapshot taken now corresponds to."""
        self.flush()
        return self.seq
