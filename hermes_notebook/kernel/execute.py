"""Running code the user approved, on the kernel's main thread, and reporting stdout, result and error.

Why the main thread: IPython's shell and most user objects are not thread-safe, and code run for the agent must
see and change the namespace exactly as a cell would. A request arrives on the tool server's thread, so the
job is queued and taken by whichever comes first on the main thread: the blocking wait of a ``%hermes`` cell
(:func:`hermes_notebook.notebook.wait.wait_blocking` calls :func:`run_pending` between pump rounds), or the
kernel's own event loop when it is idle (a chat widget's turn). A job not started within its deadline is
dropped, never run later.
"""

from __future__ import annotations

import ast
import concurrent.futures
import contextlib
import io
import linecache
import logging
import queue
import threading
import traceback
from collections.abc import Callable
from typing import Any

from ..notebook.context import summarize
from .reading import bounded

__all__ = ["JOBS", "OUTPUT_CHARS", "MainThreadJobs", "run_code", "run_pending"]

log = logging.getLogger(__name__)

#: Characters of captured output at most (the end is kept: it is usually what matters).
OUTPUT_CHARS = 4000

_counter = 0


def run_code(namespace: dict[str, Any], code: str, shell: Any = None) -> str:
    """Run ``code`` in ``namespace`` like a cell (the last expression is the result); report what happened.

    IPython syntax (``%magic``, ``!cmd``) works when a shell is given. Output printed meanwhile is captured,
    not shown in whatever cell happens to be running.
    """
    global _counter
    _counter += 1
    filename = f"<hermes-run-code-{_counter}>"
    source = shell.transform_cell(code) if shell is not None and hasattr(shell, "transform_cell") else code
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)  # tracebacks show lines
    out = io.StringIO()
    result: Any = None
    error = ""
    try:
        tree = ast.parse(source, filename)
        last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
        assert last is None or isinstance(last, ast.Expr)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            exec(compile(tree, filename, "exec"), namespace)
            if last is not None:
                result = eval(compile(ast.Expression(last.value), filename, "eval"), namespace)
    except BaseException as exc:  # the user's code may raise anything, SystemExit included: report it
        error = "".join(traceback.format_exception_only(type(exc), exc)).strip()
        frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == filename]
        if frames:
            error = "".join(traceback.format_list(frames)).rstrip() + "\n" + error
    parts = []
    printed = out.getvalue()
    if printed:
        cut = printed[-OUTPUT_CHARS:]
        parts.append("stdout:\n" + (f"… [{len(printed) - OUTPUT_CHARS:,} earlier characters cut]\n" if cut != printed
                                    else "") + cut.rstrip())
    if result is not None:
        summary = summarize(result)
        parts.append(f"result ({summary.kind}):\n{summary.text}")
    if error:
        parts.append("error:\n" + bounded(error, OUTPUT_CHARS))
    return bounded("\n\n".join(parts) or "The code ran; it printed nothing and returned nothing.")


class MainThreadJobs:
    """A queue of callables that run on the main thread (see the module docstring)."""

    def __init__(self) -> None:
        self._jobs: queue.Queue[tuple[Callable[[], Any], concurrent.futures.Future[Any]]] = queue.Queue()
        self._loop: Any = None

    def attach_loop(self) -> None:
        """Remember the main thread's running event loop (a kernel's), so idle time runs jobs too."""
        if threading.current_thread() is not threading.main_thread():
            return
        import asyncio

        with contextlib.suppress(RuntimeError):
            self._loop = asyncio.get_running_loop()

    def submit(self, job: Callable[[], Any]) -> concurrent.futures.Future[Any]:
        """Queue ``job`` for the main thread; cancel the returned future to drop it if it has not started."""
        future: concurrent.futures.Future[Any] = concurrent.futures.Future()
        self._jobs.put((job, future))
        loop = self._loop
        if loop is not None and not loop.is_closed():
            with contextlib.suppress(RuntimeError):  # the loop is gone: the wait loop takes it
                loop.call_soon_threadsafe(self.run_pending)
        return future

    def run_pending(self) -> int:
        """Run the queued jobs here (main thread only); returns how many ran."""
        if threading.current_thread() is not threading.main_thread():
            return 0
        ran = 0
        while True:
            try:
                job, future = self._jobs.get_nowait()
            except queue.Empty:
                return ran
            if not future.set_running_or_notify_cancel():
                continue  # dropped: its deadline passed
            try:
                future.set_result(job())
            except BaseException as exc:  # reported to the waiting tool call, never raised in the cell
                future.set_exception(exc)
            ran += 1


#: The one queue of this process.
JOBS = MainThreadJobs()


def run_pending() -> int:
    """Run queued main-thread jobs now (the blocking wait of a cell calls this between pump rounds)."""
    return JOBS.run_pending()
