"""Running code the user approved, on the kernel's main thread: a queue of stoppable jobs, and ``run_code``'s
report.

Why the main thread: IPython's shell and most user objects are not thread-safe, and code run for the agent
must see and change the namespace exactly as a cell would. A request arrives on the tool server's thread, so
the job is queued and taken by whichever comes first on the main thread: the blocking wait of a ``%hermes``
cell (:func:`hermes_notebook.notebook.wait.wait_blocking` calls :func:`run_pending` between pump rounds,
inside :meth:`MainThreadJobs.serving`), or the kernel's own event loop once it is idle (a user's cell
finished).

A :class:`Job` can be stopped (Stop on its card, or its time limit): a queued one is dropped, never run later;
a running one gets :class:`RunStopped` raised inside it at its next Python line (``PyThreadState_SetAsyncExc``
on the main thread, only while that job runs: the job's end and a stop exclude each other under a lock, and
the job clears a stop that did not fire before it returns, so it never lands in the cell that runs next). Code
blocked in C (``time.sleep``, a long numpy call) stops when it returns to Python; the kernel's Interrupt stops
it at once.
"""

from __future__ import annotations

import ast
import concurrent.futures
import contextlib
import ctypes
import io
import linecache
import logging
import queue
import sys
import threading
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from ..shell.values import summarize
from .images import ToolAnswer
from .outputs import KEPT_MIMES, OUTPUTS, Capture
from .reading import bounded

__all__ = [
    "JOBS",
    "OUTPUT_CHARS",
    "Job",
    "MainThreadJobs",
    "RunReport",
    "RunStopped",
    "run_code",
    "run_pending",
    "run_source",
]

log = logging.getLogger(__name__)

#: Characters of captured output at most (the end is kept: it is usually what matters).
OUTPUT_CHARS = 4000

_counter = 0


class RunStopped(BaseException):
    """Raised inside approved code when the user clicks Stop or its time limit passes (a BaseException, so the
    code's own ``except Exception`` does not swallow it)."""


@dataclass
class RunReport:
    """What approved code did: what it printed, its result, what it displayed, its error."""

    printed: str = ""
    result: Any = None
    #: The result as a notebook shows it (``shell.display_formatter``), when asked for (a cell run for a
    # turn).
    result_data: dict[str, Any] | None = None
    error: str = ""
    error_name: str = ""
    error_value: str = ""
    captured: Capture = field(default_factory=lambda: Capture("run"))

    def answer(self) -> ToolAnswer:
        """The agent's text (bounded) and the images."""
        parts = []
        printed, captured = self.printed, self.captured
        if printed:
            cut = printed[-OUTPUT_CHARS:]
            parts.append(
                "stdout:\n"
                + (f"… [{len(printed) - OUTPUT_CHARS:,} earlier characters cut]\n" if cut != printed else "")
                + cut.rstrip()
            )
        if self.result is not None and not _is_figure(self.result):
            summary = summarize(self.result)
            parts.append(f"result ({summary.kind}):\n{summary.text}")
        for text in captured.displays:
            parts.append(f"display:\n{text}")
        if captured.images or captured.skipped:
            lines = [f"- {image.describe()}: attached" for image in captured.images] + [
                f"- {s}" for s in captured.skipped
            ]
            parts.append("images:\n" + "\n".join(lines))
        if self.error:
            parts.append("error:\n" + bounded(self.error, OUTPUT_CHARS))
        text = bounded("\n\n".join(parts) or "The code ran; it printed nothing and returned nothing.")
        return ToolAnswer(text, tuple(captured.images))

    def notebook_outputs(self) -> list[dict[str, Any]]:
        """The outputs as nbformat dicts, for the notebook to show in the cell that ran (bounded)."""
        outputs: list[dict[str, Any]] = []
        if self.printed:
            outputs.append(
                {"output_type": "stream", "name": "stdout", "text": self.printed[-OUTPUT_CHARS * 4 :]}
            )
        outputs.extend(
            {"output_type": "display_data", "data": data, "metadata": {}} for data in self.captured.bundles
        )
        if self.result_data:
            outputs.append(
                {
                    "output_type": "execute_result",
                    "data": self.result_data,
                    "metadata": {},
                    "execution_count": None,
                }
            )
        if self.error:
            outputs.append(
                {
                    "output_type": "error",
                    "ename": self.error_name,
                    "evalue": self.error_value,
                    "traceback": self.error.splitlines()[-30:],
                }
            )
        return outputs


def run_code(namespace: dict[str, Any], code: str, shell: Any = None) -> ToolAnswer:
    """Run ``code`` for ``run_code`` (:func:`run_source`) and report it to the agent."""
    return run_source(namespace, code, shell).answer()


def run_source(
    namespace: dict[str, Any],
    code: str,
    shell: Any = None,
    *,
    label: str = "run_code",
    format_result: bool = False,
) -> RunReport:
    """Run ``code`` in ``namespace`` like a cell (the last expression is the result) on this, the main,
    thread.

    IPython syntax (``%magic``, ``!cmd``) works when a shell is given. What it prints is captured, not shown
    in whatever cell happens to be running; what it displays, and the matplotlib figures it opens, are
    captured as images (the figures are closed, so the inline backend does not show them in the next cell).
    With ``format_result`` the result is also formatted as a notebook shows it (its own code: this is the
    approved run).
    """
    global _counter
    _counter += 1
    filename = f"<hermes-run-code-{_counter}>"
    source = shell.transform_cell(code) if shell is not None and hasattr(shell, "transform_cell") else code
    linecache.cache[filename] = (
        len(source),
        None,
        source.splitlines(True),
        filename,
    )  # tracebacks show lines
    out = io.StringIO()
    report = RunReport()
    figures = _open_figures()
    with OUTPUTS.capture(label) as captured:
        report.captured = captured
        try:
            tree = ast.parse(source, filename)
            last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
            assert last is None or isinstance(last, ast.Expr)
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
                exec(compile(tree, filename, "exec"), namespace)
                if last is not None:
                    report.result = eval(compile(ast.Expression(last.value), filename, "eval"), namespace)
                if format_result and report.result is not None and shell is not None:
                    data, _metadata = shell.display_formatter.format(report.result)
                    report.result_data = {k: v for k, v in data.items() if k in KEPT_MIMES}
                elif format_result and report.result is not None:  # plain Python: the bounded summary
                    report.result_data = {"text/plain": summarize(report.result).text}
        except BaseException as exc:  # the user's code may raise anything, SystemExit and RunStopped included
            report.error_name, report.error_value = type(exc).__name__, str(exc)[:2000]
            error = "".join(traceback.format_exception_only(type(exc), exc)).strip()
            frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == filename]
            if frames:
                error = "".join(traceback.format_list(frames)).rstrip() + "\n" + error
            report.error = error
        _take_new_figures(figures, captured)
    report.printed = out.getvalue()
    return report


def _open_figures() -> set[int]:
    """The numbers of matplotlib's open figures (none when pyplot was never imported: it is not imported
    here)."""
    pyplot = sys.modules.get("matplotlib.pyplot")
    return set(pyplot.get_fignums()) if pyplot is not None else set()


def _take_new_figures(before: set[int], captured: Capture) -> None:
    """The figures the approved code opened, as PNGs, then closed (the inline backend would show them
    later)."""
    pyplot = sys.modules.get("matplotlib.pyplot")
    if pyplot is None:
        return
    for number in sorted(set(pyplot.get_fignums()) - before):
        figure = pyplot.figure(number)
        try:
            buffer = io.BytesIO()
            figure.savefig(buffer, format="png", dpi=80)
            captured.add({"image/png": buffer.getvalue()}, "figure")
        except Exception as exc:  # the code's own figure failed to draw: say so, send nothing
            captured.skipped.append(f"figure {number} could not be drawn ({type(exc).__name__})")
        finally:
            pyplot.close(figure)


def _is_figure(value: Any) -> bool:
    kind = type(value)
    return kind.__module__.startswith("matplotlib.") and kind.__name__ in ("Figure", "Axes", "AxesSubplot")


class Job:
    """One callable for the main thread: ``queued``, ``running``, then ``done`` (see the module docstring)."""

    def __init__(self, fn: Callable[[], Any]) -> None:
        self.fn = fn
        #: The job's result (or exception); cancelled when it was dropped before it ran.
        self.future: concurrent.futures.Future[Any] = concurrent.futures.Future()
        #: Set once the job starts running (its card turns from "waiting" to "running").
        self.started: concurrent.futures.Future[None] = concurrent.futures.Future()
        self.state = "queued"
        self.stopped = False
        self._lock = threading.Lock()
        self._thread: int | None = None
        self._raised = False

    def stop(self) -> str:
        """Drop the job if it has not started (``"dropped"``), stop it while it runs (``"stopping"``), or
        ``"done"``."""
        with self._lock:
            self.stopped = True
            if self.state == "queued":
                self.future.cancel()
                self.state = "done"
                return "dropped"
            if self.state == "running" and self._thread is not None and not self._raised:
                self._raised = True
                ctypes.pythonapi.PyThreadState_SetAsyncExc(
                    ctypes.c_ulong(self._thread), ctypes.py_object(RunStopped)
                )
                return "stopping"
            return "done"

    def run_here(self) -> None:
        """Run the job on this thread unless it was dropped (:meth:`MainThreadJobs.run_pending` calls
        this)."""
        with self._lock:
            if self.state != "queued" or not self.future.set_running_or_notify_cancel():
                return
            self.state, self._thread = "running", threading.get_ident()
        self.started.set_result(None)
        try:
            try:
                value = self.fn()
            finally:
                self._finish()
            self.future.set_result(value)
        except (
            RunStopped
        ):  # it fired outside the code's own handler (run_code reports it as the code's error)
            self._finish()
            self.future.set_exception(RunStopped("stopped"))
        except BaseException as exc:  # reported to the waiting tool call, never raised in the cell
            self.future.set_exception(exc)

    def _finish(self) -> None:
        with self._lock:
            if self.state == "running" and self._raised and self._thread is not None:
                ctypes.pythonapi.PyThreadState_SetAsyncExc(
                    ctypes.c_ulong(self._thread), None
                )  # a stop too late
            self.state = "done"


class MainThreadJobs:
    """A queue of :class:`Job` that run on the main thread (see the module docstring)."""

    def __init__(self) -> None:
        self._jobs: queue.Queue[Job] = queue.Queue()
        self._loop: Any = None
        self._serving = 0

    def attach_loop(self) -> None:
        """Remember the main thread's running event loop (a kernel's), so idle time runs jobs too."""
        if threading.current_thread() is not threading.main_thread():
            return
        import asyncio

        with contextlib.suppress(RuntimeError):
            self._loop = asyncio.get_running_loop()

    @property
    def serving(self) -> bool:
        """True while a blocking ``%hermes`` wait takes jobs on the main thread (the cell running is that
        wait)."""
        return self._serving > 0

    @contextlib.contextmanager
    def serve(self) -> Iterator[None]:
        """Mark the blocking wait that calls :meth:`run_pending` (so a job need not wait for the cell to
        end)."""
        self._serving += 1
        try:
            yield
        finally:
            self._serving -= 1

    def submit(self, fn: Callable[[], Any]) -> Job:
        """Queue ``fn`` for the main thread; :meth:`Job.stop` drops it if it has not started."""
        job = Job(fn)
        self._jobs.put(job)
        loop = self._loop
        if loop is not None and not loop.is_closed():
            with contextlib.suppress(RuntimeError):  # the loop is gone: the wait loop takes it
                loop.call_soon_threadsafe(self.run_pending)
        return job

    def run_pending(self) -> int:
        """Run the queued jobs here (main thread only); returns how many were taken."""
        if threading.current_thread() is not threading.main_thread():
            return 0
        ran = 0
        while True:
            try:
                job = self._jobs.get_nowait()
            except queue.Empty:
                return ran
            job.run_here()
            ran += 1


#: The one queue of this process.
JOBS = MainThreadJobs()


def run_pending() -> int:
    """Run queued main-thread jobs now (the blocking wait of a cell calls this between pump rounds)."""
    return JOBS.run_pending()
