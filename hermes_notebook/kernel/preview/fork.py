"""The kernel's side of a preview: fork on the main thread, then wait, watch, kill and reap from any thread.

Why the main thread forks: the copy must see the namespace between cells, as Run would, and the fork itself is
all the main thread pays (a few ms: the page tables are copied, not the memory). Everything after it, the wait
for the copy's report, the time limit, the memory watch and the reaping, runs on the thread that asked.

Ending a copy kills its process group (``SIGKILL``: the copy and whatever it started), then ``waitpid`` reaps
it, so no zombie is left; Stop (:meth:`Preview.stop`), the time limit, the memory budget (its private memory
read from ``/proc``) and the kernel's Interrupt (:mod:`.interrupts`) all end up there.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import threading
import time
from typing import Any

from .copy import run_in_copy
from .interrupts import LIVE, SIGNALS, follow_interrupts, ignore_interrupts_in_copy, interrupts_held
from .limits import PreviewLimits
from .report import PreviewReport

__all__ = ["Preview", "fork_copy", "private_memory"]

#: Seconds between checks of a copy's memory and of the time.
POLL = 0.05


def private_memory(pid: int) -> int:
    """Bytes of memory ``pid`` has of its own (pages it wrote or allocated since the fork), 0 when unknown."""
    try:
        with open(f"/proc/{pid}/smaps_rollup", encoding="ascii") as rollup:
            total = 0
            for line in rollup:
                if line.startswith(("Private_Clean:", "Private_Dirty:")):
                    total += int(line.split()[1]) * 1024
            return total
    except (OSError, ValueError, IndexError):
        return 0


class Preview:
    """One running copy: :meth:`wait` for its report, :meth:`stop` it from any thread."""

    def __init__(self, pid: int, result: int, log: int, limits: PreviewLimits) -> None:
        self.pid, self.limits = pid, limits
        self.started = time.monotonic()
        self._fds = {result: bytearray(), log: bytearray()}
        self._result, self._log = result, log
        self._ending: tuple[str, str] | None = None
        # reentrant: the Interrupt handler may run while the main thread holds it
        self._lock = threading.RLock()
        self._reaped = False
        self._eof: set[int] = set()
        for fd in self._fds:
            os.set_blocking(fd, False)

    def stop(self, ending: str = "stopped", reason: str = "") -> None:
        """End the copy and all it started (its process group); the waiting thread reaps it and reports."""
        with self._lock:
            if self._ending is None:
                self._ending = (ending, reason)
            if self._reaped:
                return
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.pid, signal.SIGKILL)

    def _read(self, timeout: float) -> None:
        open_fds = [fd for fd in self._fds if fd not in self._eof]
        if not open_fds:  # both pipes closed: the copy is ending, look again soon
            time.sleep(min(timeout, 0.002))
            return
        wake = SIGNALS.fd
        try:
            readable, _, _ = select.select(open_fds + ([wake] if wake >= 0 else []), [], [], timeout)
        except InterruptedError:
            return
        if wake in readable:
            SIGNALS.arrived()
            readable.remove(wake)
        for fd in readable:
            with contextlib.suppress(BlockingIOError):
                chunk = os.read(fd, 1 << 16)
                if not chunk:
                    self._eof.add(fd)
                self._fds[fd].extend(chunk)
                if fd == self._log:
                    del self._fds[fd][:-64000]

    def _exited(self) -> bool:
        try:
            pid, _status = os.waitpid(self.pid, os.WNOHANG)
        except ChildProcessError:  # reaped elsewhere
            return True
        return pid != 0

    def wait(self) -> PreviewReport:
        """Wait for the report (or the end of the copy), then kill what is left of its group and reap it."""
        try:
            while not self._exited():
                elapsed = time.monotonic() - self.started
                if elapsed > self.limits.seconds:
                    self.stop("time limit", f"{self.limits.seconds:g} s")
                elif private_memory(self.pid) > self.limits.memory:
                    self.stop("memory budget", self.limits.describe_memory())
                self._read(POLL)
            with self._lock:
                self._reaped = True
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.pid, signal.SIGKILL)  # anything the copy left running in its group
            for _ in range(100):  # what is still in the pipes (EOF, or empty once the writers are gone)
                before = sum(len(b) for b in self._fds.values())
                self._read(0)
                if sum(len(b) for b in self._fds.values()) == before:
                    break
        finally:
            self._close()
        return self._report(time.monotonic() - self.started)

    def _report(self, seconds: float) -> PreviewReport:
        shell_output = self._fds[self._log].decode("utf-8", "replace")
        if self._ending is not None:
            ending, reason = self._ending
            return PreviewReport(ending, reason, printed=shell_output, seconds=seconds, pid=self.pid)
        try:
            payload: Any = json.loads(bytes(self._fds[self._result]))
        except ValueError:
            payload = {"failed": "the copy ended without a report"}
        if not isinstance(payload, dict):
            payload = {"failed": "the copy's report was not readable"}
        report = PreviewReport.from_copy(payload, shell_output, seconds, self.pid)
        if report.ended == "memory budget":
            report.reason = self.limits.describe_memory()
        return report

    def _close(self) -> None:
        LIVE.discard(self)
        if not self._reaped:  # the wait itself was interrupted: end the copy and reap it here
            self.stop("interrupted")
            with contextlib.suppress(ChildProcessError):
                os.waitpid(self.pid, 0)
            self._reaped = True
        for fd in list(self._fds):
            with contextlib.suppress(OSError):
                os.close(fd)


def fork_copy(shell: Any, namespace: dict[str, Any], source: str, limits: PreviewLimits) -> Preview:
    """Fork the copy (call this on the main thread, between cells) and return its :class:`Preview`.

    An Interrupt that comes meanwhile is held back until the copy is registered, then ends it; where it
    raises (``KeyboardInterrupt`` in a running cell), the copy is reaped first, so none is left behind."""
    follow_interrupts(shell)
    result_r, result_w = os.pipe()
    log_r, log_w = os.pipe()
    preview: Preview | None = None
    try:
        with interrupts_held() as held:
            pid = os.fork()
            if pid == 0:  # the copy: never returns
                try:
                    ignore_interrupts_in_copy()
                    os.close(result_r)
                    os.close(log_r)
                finally:
                    run_in_copy(shell, namespace, source, limits.memory, result_w, log_w)
            os.close(result_w)
            os.close(log_w)
            with contextlib.suppress(OSError):  # the copy may have done it first, or already exited
                os.setpgid(pid, pid)
            preview = Preview(pid, result_r, log_r, limits)
            LIVE.add(preview)
        if held.came:
            preview.stop("interrupted")
            held.pass_on()
    except BaseException:
        if preview is not None:
            preview.stop("interrupted")
            preview.wait()
        raise
    return preview
