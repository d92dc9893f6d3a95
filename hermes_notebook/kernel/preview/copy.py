"""What runs in the copy of the kernel (the forked child), from the fork to ``os._exit``.

The copy must never touch what the kernel shares with it: the ZMQ sockets (every send of the kernel's session
is dropped, its display publisher keeps displays instead of publishing them), the output streams
(``sys.stdout`` and ``sys.stderr`` are the copy's own; file descriptors 1 and 2 go to a pipe the kernel reads,
so ``os.system('echo hi')`` is captured too), the event loop (top-level ``await`` runs on a fresh loop in a
new thread of the copy) and the threads (none run in a child). Objects the kernel made are frozen out of the
copy's garbage collector, so no finaliser of theirs (a socket's close) runs here. The copy has its own process
group (so Stop and the time limit end whatever it started) and an address-space limit of what it holds plus
the memory budget. It writes one JSON report to its pipe and ends with ``os._exit``: no ``atexit``, no flush
of a stream it shares.
"""

from __future__ import annotations

import ast
import asyncio
import gc
import inspect
import io
import json
import os
import resource
import sys
import threading
import time
from typing import Any, NoReturn

from ..execute import RunReport, run_source
from ..outputs import OUTPUTS
from .variables import compare, fingerprint, names_in

__all__ = ["needs_await", "run_in_copy"]


def needs_await(source: str) -> bool:
    """True when ``source`` uses top-level ``await`` (it runs on a fresh loop in the copy)."""
    try:
        code = compile(source, "<preview>", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT, dont_inherit=True)
    except SyntaxError:
        return False
    return bool(code.co_flags & inspect.CO_COROUTINE)


def _limit_memory(budget: int) -> None:
    with open("/proc/self/statm", encoding="ascii") as statm:
        size = int(statm.read().split()[0]) * resource.getpagesize()
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    limit = size + budget
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))


def _drop(*_args: Any, **_kwargs: Any) -> None:
    return None


def _silence_kernel(shell: Any) -> None:
    """Nothing the copy does reaches the kernel's sockets: its sessions send nothing, displays are kept."""
    publisher = getattr(shell, "display_pub", None)
    kernel = getattr(shell, "kernel", None)
    for holder in (publisher, kernel, sys.stdout, sys.stderr, getattr(shell, "displayhook", None)):
        session = getattr(holder, "session", None)
        if session is not None and hasattr(session, "send"):
            session.send = _drop
    if publisher is not None:
        publisher.publish = lambda data, *args, **kwargs: OUTPUTS.take(data)
        publisher.clear_output = _drop


def _run_awaited(namespace: dict[str, Any], source: str) -> RunReport:
    """Top-level ``await``: the cell as one coroutine, on a fresh loop in a thread of the copy."""
    report = RunReport()
    out = io.StringIO()
    outcome: list[BaseException] = []

    def run() -> None:
        try:
            code = compile(
                source, "<preview>", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT, dont_inherit=True
            )
            asyncio.run(eval(code, namespace))
        except BaseException as exc:  # the user's code may raise anything
            outcome.append(exc)

    with OUTPUTS.capture("preview") as captured:
        sys.stdout = sys.stderr = out
        thread = threading.Thread(target=run)
        thread.start()
        thread.join()
    report.captured, report.printed = captured, out.getvalue()
    if outcome:
        report.error_name, report.error_value = type(outcome[0]).__name__, str(outcome[0])[:2000]
        report.error = f"{report.error_name}: {report.error_value}"
    return report


def _report(shell: Any, namespace: dict[str, Any], source: str) -> dict[str, Any]:
    hidden = getattr(shell, "user_ns_hidden", None)
    before = fingerprint(namespace, hidden, names_in(source))
    started = time.monotonic()
    if needs_await(source):
        report = _run_awaited(namespace, source)
    else:
        report = run_source(namespace, source, shell, label="preview", format_result=True)
    seconds = time.monotonic() - started
    after = fingerprint(namespace, hidden, names_in(source))
    return {
        "outputs": report.notebook_outputs(),
        "printed": report.printed[-16000:],
        "error": report.error,
        "error_name": report.error_name,
        "variables": [row.to_dict() for row in compare(before, after, names_in(source))],
        "seconds": seconds,
    }


def run_in_copy(
    shell: Any, namespace: dict[str, Any], source: str, budget: int, result: int, log: int
) -> NoReturn:
    """The child's whole life: set up, run ``source``, write the report to fd ``result``, ``os._exit``."""
    status = 0
    try:
        gc.freeze()
        os.setpgid(0, 0)
        os.dup2(log, 1)
        os.dup2(log, 2)
        sys.stdout = sys.stderr = io.TextIOWrapper(
            os.fdopen(os.dup(log), "wb", buffering=0), write_through=True
        )
        _silence_kernel(shell)
        _limit_memory(budget)
        payload = json.dumps(_report(shell, namespace, source)).encode()
    except BaseException as exc:  # the copy reports its own failure rather than hanging the kernel's wait
        status = 1
        payload = json.dumps({"failed": f"{type(exc).__name__}: {exc}"[:2000]}).encode()
    try:
        view = memoryview(payload)
        while view:
            view = view[os.write(result, view) :]
    finally:
        os._exit(status)
