"""The kernel's Interrupt ends every running preview copy, whichever thread the signal lands on.

Python runs a signal handler on the main thread only, between any two of its bytecodes, and only once that
thread runs Python again. So two paths carry an Interrupt here:

- a ``SIGINT`` handler installed at the fork (:func:`follow_interrupts`), which ends every live copy and then
  does what the handler before it did; it can run in the middle of the main thread's own preview code, so
  everything it touches is guarded by reentrant locks (a plain lock held by the main thread when the signal
  came would deadlock the kernel);
- a wakeup pipe (``signal.set_wakeup_fd``, where nobody else holds it; ipykernel does not), which the threads
  waiting for copies watch: a ``SIGINT`` that lands on another thread leaves an idle main thread asleep in
  its event loop, but its number is written to the pipe.

While a copy is forked and registered, :func:`interrupts_held` holds the Interrupt back, so none is lost
before the copy can be ended and none raises where nobody would end it.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Iterator
from typing import Any, Protocol

__all__ = [
    "LIVE",
    "SIGNALS",
    "HeldInterrupts",
    "LiveCopies",
    "follow_interrupts",
    "ignore_interrupts_in_copy",
    "interrupts_held",
]


class Stoppable(Protocol):
    """A running copy, as the Interrupt sees it."""

    def stop(self, ending: str = ..., reason: str = ...) -> None: ...


class LiveCopies:
    """The copies running now."""

    def __init__(self) -> None:
        self._copies: set[Stoppable] = set()
        self._lock = threading.RLock()  # reentrant: the handler may run while the main thread holds it

    def add(self, copy: Stoppable) -> None:
        with self._lock:
            self._copies.add(copy)

    def discard(self, copy: Stoppable) -> None:
        with self._lock:
            self._copies.discard(copy)

    def interrupt(self) -> int:
        """End every live copy; how many there were."""
        with self._lock:
            copies = list(self._copies)
        for copy in copies:
            copy.stop("interrupted")
        return len(copies)


LIVE = LiveCopies()


class WakeupPipe:
    """The signal numbers Python writes to a pipe of ours (see the module docstring)."""

    def __init__(self) -> None:
        self.fd = -1

    def watch(self) -> None:
        """On the main thread, once: take the wakeup fd if nobody holds it."""
        if self.fd >= 0:
            return
        read, write = os.pipe()
        os.set_blocking(read, False)
        os.set_blocking(write, False)
        try:
            before = signal.set_wakeup_fd(write, warn_on_full_buffer=False)
        except ValueError:  # not the main thread
            before = -2
        if before != -1:  # someone else's (an asyncio loop's signal handlers): theirs stays
            if before >= 0:
                signal.set_wakeup_fd(before)
            os.close(read)
            os.close(write)
            return
        self.fd = read

    def arrived(self) -> None:
        """Read what came through the pipe: on ``SIGINT``, end every live copy."""
        with contextlib.suppress(BlockingIOError, OSError):
            if signal.SIGINT in os.read(self.fd, 256):
                LIVE.interrupt()


SIGNALS = WakeupPipe()


def _on_interrupt(previous: Any) -> Any:
    def handler(signum: int, frame: Any) -> Any:
        LIVE.interrupt()
        if callable(previous):
            return previous(signum, frame)
        if previous == signal.SIG_DFL:
            raise KeyboardInterrupt
        return None

    handler.hermes_preview = True  # type: ignore[attr-defined]
    return handler


def follow_interrupts(shell: Any) -> None:
    """On the main thread: the kernel's Interrupt also ends the live copies.

    ipykernel swaps the handler around each request it handles (``pre_handler_hook`` saves the one there in
    the kernel's ``saved_sigint_handler``, ``post_handler_hook`` puts it back), and a job can run inside that
    window: the saved handler is wrapped too, so the hook is what comes back after the request."""
    current = signal.getsignal(signal.SIGINT)
    if not getattr(current, "hermes_preview", False):
        with contextlib.suppress(ValueError):  # not the main thread: a preview from a thread cannot hook it
            signal.signal(signal.SIGINT, _on_interrupt(current))
    kernel = getattr(shell, "kernel", None)
    saved = getattr(kernel, "saved_sigint_handler", None)
    if kernel is not None and saved is not None and not getattr(saved, "hermes_preview", False):
        kernel.saved_sigint_handler = _on_interrupt(saved)
    SIGNALS.watch()
    if SIGNALS.fd >= 0:  # what is in the pipe came before this fork (an Interrupt of a cell, say)
        SIGNALS.arrived()


class HeldInterrupts:
    """What :func:`interrupts_held` saw: whether an Interrupt came, and the handler to pass it on to."""

    def __init__(self, handler: Any) -> None:
        self.came = False
        self._handler = handler

    def count(self, signum: int, frame: Any) -> None:
        self.came = True

    def pass_on(self) -> None:
        """Do what the kernel's handler does with the Interrupt that came (end the live copies, and in a
        running cell raise ``KeyboardInterrupt``)."""
        if self.came and callable(self._handler):
            self._handler(signal.SIGINT, None)


@contextlib.contextmanager
def interrupts_held() -> Iterator[HeldInterrupts]:
    """Hold the kernel's Interrupt back while a copy is forked and registered, then say whether one came.

    The handler only notes it meanwhile, so nothing raises between the fork and the registration (a
    ``KeyboardInterrupt`` there would leave the copy running with nobody to end it); ``SIGINT`` is blocked on
    this thread, so the copy starts with it blocked (it inherits the mask) and ignores it before it lets it
    through: the kernel's handler never runs in the copy."""
    before = signal.getsignal(signal.SIGINT)
    held = HeldInterrupts(before)
    swapped = False
    with contextlib.suppress(ValueError):  # not the main thread: no handler runs here anyway
        signal.signal(signal.SIGINT, held.count)
        swapped = True
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield held
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)  # runs the handlers of what was held: `held.count`
        if swapped:
            signal.signal(signal.SIGINT, before)


def ignore_interrupts_in_copy() -> None:
    """In the copy, first thing: the kernel's Interrupt handler and wakeup pipe are not the copy's (the
    kernel ends the copy's whole process group itself); then let signals through again."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    with contextlib.suppress(ValueError):
        signal.set_wakeup_fd(-1)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
