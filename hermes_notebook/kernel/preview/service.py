"""One preview from a request (the Preview button, the agent's ``preview`` tool, or code in a cell): refuse in
one line, or fork on the kernel's main thread and wait for the copy's report off it.

A click is a user action handled like Run: the fork is a job on the kernel's main thread
(:data:`..execute.JOBS`), taken between cells (or by a blocking ``%hermes`` wait); the request's own thread
then waits for the copy, so the main thread is held only for the fork. Called on the main thread itself (code
in a cell), the preview forks there and waits there; the kernel's Interrupt then ends it.
"""

from __future__ import annotations

import concurrent.futures
import threading
import time
from typing import Any

from ..execute import JOBS
from ..outputs import OUTPUTS
from .fork import Preview, fork_copy
from .limits import PreviewLimits, refusal
from .report import PreviewReport

__all__ = ["PreviewRequest", "preview_source"]


def _cell_running() -> bool:
    """A user's cell runs now (a blocking ``%hermes`` wait that takes jobs is not one)."""
    return OUTPUTS.busy and not JOBS.serving


class PreviewRequest:
    """One preview asked for: :meth:`result` waits for its report, :meth:`stop` ends it (queued or
    running)."""

    def __init__(self, shell: Any, namespace: dict[str, Any], source: str, limits: PreviewLimits) -> None:
        self.shell, self.namespace, self.source, self.limits = shell, namespace, source, limits
        self._preview: Preview | None = None
        self._stopped = False
        self._lock = threading.Lock()
        self._job: Any = None
        #: Seconds the main thread spent on this preview (the check and the fork; benchmarks read it).
        self.blocked = 0.0
        #: Resolved once the copy forked, or once the request ended without one (refused, stopped).
        self.forked: concurrent.futures.Future[None] = concurrent.futures.Future()

    def _fork(self, queued: bool = True) -> Preview | PreviewReport:
        """On the main thread: check again (a cell may have started since it was queued), then fork."""
        started = time.perf_counter()
        try:
            return self._fork_now(queued)
        finally:
            self.blocked = time.perf_counter() - started

    def _fork_now(self, queued: bool) -> Preview | PreviewReport:
        reason = refusal(queued and _cell_running())
        if reason is not None:
            return PreviewReport.refused(reason)
        with self._lock:
            if self._stopped:
                return PreviewReport("stopped")
            self._preview = fork_copy(self.shell, self.namespace, self.source, self.limits)
        self.forked.set_result(None)
        return self._preview

    def result(self, timeout: float | None = None) -> PreviewReport:
        """Queue the fork on the main thread (or fork here, on it) and wait for the copy's report."""
        try:
            return self._result(timeout)
        finally:
            if not self.forked.done():
                self.forked.set_result(None)

    def _result(self, timeout: float | None) -> PreviewReport:
        reason = refusal(_cell_running() and threading.current_thread() is not threading.main_thread())
        if reason is not None:
            return PreviewReport.refused(reason)
        if threading.current_thread() is threading.main_thread():
            started = self._fork(queued=False)
        else:
            self._job = JOBS.submit(self._fork)
            try:
                started = self._job.future.result(timeout)
            except concurrent.futures.CancelledError:
                return PreviewReport("stopped")
            except KeyboardInterrupt:  # the kernel's Interrupt came while the copy was forked (and reaped)
                return PreviewReport("interrupted")
        return started if isinstance(started, PreviewReport) else started.wait()

    def stop(self) -> None:
        """Stop: a queued preview never forks; a running copy is killed with its process group."""
        with self._lock:
            self._stopped = True
            job, preview = self._job, self._preview
        if job is not None:
            job.stop()
        if preview is not None:
            preview.stop("stopped")

    @property
    def pid(self) -> int | None:
        """The copy's process id once it forked."""
        return None if self._preview is None else self._preview.pid


def preview_source(
    source: str,
    namespace: dict[str, Any] | None = None,
    shell: Any = None,
    *,
    seconds: float | None = None,
    memory_mb: float | None = None,
) -> PreviewReport:
    """Preview ``source`` in a copy of this kernel (the shell's namespace by default) and return its
    report."""
    if shell is None:
        from ...shell.host import ipython

        shell = ipython()
    if namespace is None:
        namespace = shell.user_ns if shell is not None else {}
    return PreviewRequest(shell, namespace, source, PreviewLimits.resolve(seconds, memory_mb)).result()
