"""Preview in a REAL kernel (jupyter_client + ipykernel, no Hermes needed): the proposed code runs in a forked
copy of the kernel, and the kernel itself is left as it was. One kernel serves the module; each test checks
several things of what it pays for."""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from jupyter_client.manager import KernelManager

from tests.helpers import REPO, eventually

SETUP = """
import json, os, sys, threading, time, types
import pandas as pd
import matplotlib
matplotlib.use("agg")
import matplotlib.pyplot as plt
from hermes_notebook.kernel.execute import JOBS
from hermes_notebook.kernel.outputs import OUTPUTS
from hermes_notebook.kernel.preview.service import PreviewRequest, preview_source
from hermes_notebook.kernel.preview.limits import PreviewLimits
OUTPUTS.follow(get_ipython())
JOBS.attach_loop()
df = pd.DataFrame({"x": [1, 2, 3]})

def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")

def children():
    kids = []
    for task in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{task}/children") as f:
                kids += [int(p) for p in f.read().split()]
        except FileNotFoundError:  # a thread that ended meanwhile
            pass
    return kids

def when_idle(act):
    while OUTPUTS.busy:  # a click comes between cells
        time.sleep(0.01)
    return act()

def gone(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ")[1][0] == "Z" and False
    except FileNotFoundError:
        return True

def report(r):
    return json.dumps({"ended": r.ended, "reason": r.reason, "printed": r.printed,
                       "images": len(r.images), "error": r.error, "seconds": r.seconds,
                       "variables": [v.to_dict() for v in r.variables], "pid": r.pid,
                       "summary": r.summary()})
"""


class PlainKernel:
    """One ipykernel process on this work tree; :meth:`run` returns a cell's outputs (all iopub messages)."""

    def __init__(self) -> None:
        self.manager = KernelManager(kernel_name="python3")
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
        }
        self.manager.start_kernel(env=env, cwd=str(REPO))
        self.client = self.manager.client()
        self.client.start_channels()
        self.client.wait_for_ready(timeout=60)

    def run(self, code: str, timeout: float = 120) -> tuple[str, list[dict[str, Any]]]:
        """The cell's stdout (and tracebacks), and every output message it published."""
        messages: list[dict[str, Any]] = []
        self.client.execute_interactive(code, timeout=timeout, output_hook=messages.append)
        outputs = [
            m for m in messages if m["msg_type"] in ("stream", "display_data", "execute_result", "error")
        ]
        text = "".join(
            m["content"]["text"]
            if m["msg_type"] == "stream"
            else "\n".join(m["content"].get("traceback", []))
            for m in outputs
        )
        return text, outputs

    def value(self, code: str, timeout: float = 120) -> Any:
        """Run ``code`` whose last line prints one JSON value, and return that value."""
        text, _ = self.run(code, timeout)
        return json.loads(text.strip().splitlines()[-1])

    def children(self) -> list[int]:
        """The kernel process's children, read from /proc (no cell runs)."""
        pid = self.manager.provisioner.process.pid  # type: ignore[union-attr]
        kids: list[int] = []
        for task in os.listdir(f"/proc/{pid}/task"):
            try:
                with open(f"/proc/{pid}/task/{task}/children") as f:
                    kids += [int(p) for p in f.read().split()]
            except FileNotFoundError:  # a thread that ended meanwhile
                pass
        return kids

    def stop(self) -> None:
        self.client.stop_channels()
        if self.manager.has_kernel:
            self.manager.shutdown_kernel(now=True)


@contextlib.contextmanager
def plain_kernel(setup: str) -> Iterator[PlainKernel]:
    """A :class:`PlainKernel` that ran ``setup``, shut down afterwards."""
    started = PlainKernel()
    try:
        started.run(setup)
        yield started
    finally:
        started.stop()


@pytest.fixture(scope="module")
def kernel() -> Iterator[PlainKernel]:
    """The module's kernel, with pandas, a 3-row ``df`` and the preview helpers imported."""
    with plain_kernel(SETUP) as started:
        yield started


def test_a_preview_shows_the_print_and_the_figure_and_leaves_the_kernels_df_alone(
    kernel: PlainKernel,
) -> None:
    """The issue's own example: the printed value and one PNG come back, ``df`` is listed as changed in place
    (the copy's df got ``z``), and the kernel's own ``df`` has no ``z``; the summary carries the card's
    sentence."""
    source = "df['z'] = df.x * 2; print(df.z.sum()); plt.plot([1, 2, 3])"
    got = kernel.value(f"print(report(preview_source({source!r})))")
    assert got["ended"] == "finished", got
    assert got["printed"].strip() == "12"
    assert got["images"] == 1
    assert got["variables"] == [
        {"name": "df", "change": "changed in place", "type": "DataFrame", "shape": "3x2"}
    ]
    assert "Ran in a copy of your kernel: your variables are untouched." in got["summary"]
    assert kernel.value("print(json.dumps([list(df.columns), plt.get_fignums()]))") == [["x"], []]


def test_a_raising_preview_shows_the_error_changes_nothing_and_nothing_reaches_the_notebook(
    kernel: PlainKernel,
) -> None:
    """A preview that prints, runs a shell command, changes ``df`` and raises: the report has the error and
    both outputs; the kernel's ``df`` is unchanged, and no output of the copy reaches the notebook's real
    outputs (the cell prints only booleans)."""
    source = (
        "import os\nprint('COPY' + '-PRINT')\nos.system('echo COPY-SHELL')\ndf.drop(columns='x', "
        "inplace=True)\n1/0"
    )
    text, outputs = kernel.run(
        f"r = preview_source({source!r})\n"
        "print(r.ended, 'ZeroDivisionError' in r.error, 'COPY-PRINT' in r.printed, 'COPY-SHELL' in "
        "r.printed)\n"
        "print(list(df.columns), [v.change for v in r.variables])"
    )
    assert text.splitlines() == ["error True True True", "['x'] ['changed in place']"], text
    assert not any("COPY-" in json.dumps(message["content"]) for message in outputs)


def test_time_limits_stop_a_busy_loop_and_a_sleep_and_the_kernel_answers(kernel: PlainKernel) -> None:
    """``while True: pass`` with a 2 s limit ends within 3 s, ``time.sleep(60)`` with 1 s within 2 s; the copy
    is gone (no zombie), and the kernel answers the next cell at once."""
    loop = kernel.value("r = preview_source('while True: pass', seconds=2)\nprint(report(r))")
    sleep = kernel.value("r = preview_source('import time; time.sleep(60)', seconds=1)\nprint(report(r))")
    assert (loop["ended"], sleep["ended"]) == ("time limit", "time limit")
    assert 2 <= loop["seconds"] < 3 and 1 <= sleep["seconds"] < 2, (loop["seconds"], sleep["seconds"])
    assert kernel.value(f"print(json.dumps([gone({loop['pid']}), gone({sleep['pid']}), children()]))") == [
        True,
        True,
        [],
    ]


def test_stop_and_interrupt_end_a_running_preview_within_a_second(kernel: PlainKernel) -> None:
    """A preview asked for from another thread (as a click or the agent's tool is) forks on the main thread
    between cells; Stop ends it within 1 s, and so does the kernel's Interrupt; no child is left either
    way."""
    start = (
        "req = PreviewRequest(get_ipython(), get_ipython().user_ns, 'import time; time.sleep(60)', "
        "PreviewLimits())\n"
        "box = {}\n"
        "waiter = threading.Thread(target=lambda: box.update(r=when_idle(req.result)))\n"
        "waiter.start()"
    )
    ended = {}
    for how in ("stop", "interrupt"):
        kernel.run(start)
        # watched from outside: a cell run now would be "a cell running", and the click would be refused
        eventually(kernel.children, 10, "the preview's fork")
        began = time.monotonic()
        if how == "stop":
            kernel.run("req.stop()")
        else:
            kernel.manager.interrupt_kernel()
        eventually(lambda: not kernel.children(), 5, f"the copy's end after {how}")
        seconds = time.monotonic() - began
        got = kernel.value("waiter.join(5)\nprint(json.dumps([box['r'].ended, children(), gone(req.pid)]))")
        ended[how] = (got, seconds)
    assert ended["stop"][0] == ["stopped", [], True]
    assert ended["interrupt"][0] == ["interrupted", [], True]
    assert max(seconds for _, seconds in ended.values()) < 1.0, ended


INTERRUPT_AFTER_FORK = """
import signal
real_fork, real_killpg = os.fork, os.killpg
def fork_then_interrupt():
    pid = real_fork()
    if pid:  # the kernel's side: the Interrupt lands before the copy is registered
        signal.raise_signal(signal.SIGINT)
    return pid
def killpg_once_interrupted(pid, sig):
    os.killpg = real_killpg  # the Interrupt lands while Stop holds the copy's lock on the main thread
    signal.raise_signal(signal.SIGINT)
    real_killpg(pid, sig)
def outcome(act):
    try:
        return act()
    except KeyboardInterrupt:
        return "KeyboardInterrupt"
"""


def test_an_interrupt_at_the_worst_moments_leaves_no_copy_and_a_kernel_that_answers() -> None:
    """The kernel's Interrupt landing between the fork and the copy's registration (a preview run in a cell;
    one taken by a blocking ``%hermes`` wait) ends the copy at once; one landing while Stop holds the copy on
    the main thread neither hangs the kernel nor leaves the copy; an Interrupt of a plain cell does not end
    the next preview. A kernel of its own: the defects this guards against leave a kernel stuck."""
    with plain_kernel(SETUP + INTERRUPT_AFTER_FORK) as own:
        in_cell = own.value(
            "os.fork = fork_then_interrupt\n"
            "got = outcome(lambda: preview_source('time.sleep(60)'))\n"
            "os.fork = real_fork\n"
            "print(json.dumps([got, children()]))",
            timeout=30,
        )
        by_wait = own.value(
            "req = PreviewRequest(get_ipython(), get_ipython().user_ns, 'time.sleep(60)', PreviewLimits())\n"
            "box = {}\n"
            "waiter = threading.Thread(target=lambda: box.update(r=req.result()))\n"
            "os.fork = fork_then_interrupt\n"
            "with JOBS.serve():  # what a blocking %hermes wait does between pump rounds\n"
            "    waiter.start()\n"
            "    while not req.forked.done():\n"
            "        JOBS.run_pending(); time.sleep(0.01)\n"
            "os.fork = real_fork\n"
            "waiter.join(5)\n"
            "print(json.dumps([box['r'].ended if 'r' in box else 'no report', children()]))",
            timeout=30,
        )
        stopped = own.value(
            "req = PreviewRequest(get_ipython(), get_ipython().user_ns, 'time.sleep(60)', PreviewLimits())\n"
            "box = {}\n"
            "waiter = threading.Thread(target=lambda: box.update(r=req.result()))\n"
            "with JOBS.serve():  # forked in this cell: the kernel's Interrupt handler is the preview's\n"
            "    waiter.start()\n"
            "    while not req.forked.done():\n"
            "        JOBS.run_pending(); time.sleep(0.01)\n"
            "os.killpg = killpg_once_interrupted\n"
            "got = outcome(req.stop)\n"
            "waiter.join(5)\n"
            "print(json.dumps([got, box['r'].ended, children()]))",
            timeout=30,
        )
        interrupt = threading.Timer(1.0, own.manager.interrupt_kernel)
        interrupt.start()
        interrupted_cell = own.run("time.sleep(30)", timeout=30)  # leaves a SIGINT in the wakeup pipe
        interrupt.join()
        after = own.value(
            "req = PreviewRequest(get_ipython(), get_ipython().user_ns, 'time.sleep(0.5)', PreviewLimits())\n"
            "box = {}\n"
            "waiter = threading.Thread(target=lambda: box.update(r=req.result()))\n"
            "with JOBS.serve():\n"
            "    waiter.start()\n"
            "    while waiter.is_alive():\n"
            "        JOBS.run_pending(); time.sleep(0.01)\n"
            "print(json.dumps([box['r'].ended, children()]))",
            timeout=30,
        )
    assert in_cell == ["KeyboardInterrupt", []]
    assert by_wait == ["interrupted", []]
    assert stopped == ["KeyboardInterrupt", "stopped", []]
    assert "KeyboardInterrupt" in interrupted_cell[0]
    assert after == ["finished", []]


def test_the_memory_budget_ends_an_allocation_and_the_kernel_keeps_its_memory(kernel: PlainKernel) -> None:
    """An allocation far past a 200 MB budget (numpy's at once, and one that grows in steps) reports the
    memory budget; the kernel's own RSS is unchanged (within 5%)."""
    got = kernel.value(
        "before = rss()\n"
        "import numpy as np\n"
        "at_once = preview_source('a = np.ones(10**10)', memory_mb=200)\n"
        "steps = preview_source('a = [bytearray(10**7) for _ in range(200)]', memory_mb=200)\n"
        "print(json.dumps([at_once.ended, steps.ended, steps.reason, rss() / before]))"
    )
    assert got[:3] == ["memory budget", "memory budget", "200 MB"]
    assert 0.95 <= got[3] <= 1.05, got


def test_refusals_fork_nothing(kernel: PlainKernel) -> None:
    """With CUDA initialised (a ``torch`` stub) a preview is refused in one line and nothing forks; a preview
    asked for while a cell runs is refused too; a top-level ``await`` runs on a fresh loop in the copy."""
    got = kernel.value(
        "forks = []\n"
        "real_fork = os.fork\n"
        "os.fork = lambda: forks.append(1) or real_fork()\n"
        "sys.modules['torch'] = types.SimpleNamespace(cuda=types.SimpleNamespace(is_initialized=lambda: "
        "True))\n"
        "cuda = preview_source('x = 1')\n"
        "del sys.modules['torch']\n"
        "busy = {}\n"
        "t = threading.Thread(target=lambda: busy.update(r=PreviewRequest(get_ipython(), {}, 'x = 1', "
        "PreviewLimits()).result()))\n"
        "t.start(); t.join(10)\n"
        "refused = len(forks)\n"
        "awaited = preview_source('import asyncio\\nawait asyncio.sleep(0.01)\\nanswer = 42')\n"
        "os.fork = real_fork\n"
        "print(json.dumps([cuda.ended, cuda.summary(), busy['r'].ended, busy['r'].reason, refused, "
        "awaited.ended,\n"
        "                  [v.to_dict() for v in awaited.variables], 'answer' in dir()]))"
    )
    assert got[0] == "refused" and "CUDA (torch)" in got[1] and "\n" not in got[1]
    assert got[2] == "refused" and "a cell is running" in got[3]
    assert got[4] == 0
    assert got[5:] == [
        "finished",
        [{"name": "answer", "change": "created", "type": "int", "shape": ""}],
        False,
    ]


def test_fifty_previews_beside_a_busy_thread_leave_no_thread_and_no_zombie(kernel: PlainKernel) -> None:
    """50 previews in a row while a background thread holds a lock in a busy loop: all finish, the kernel's
    thread count is what it was, and no child (zombie or not) is left."""
    got = kernel.value(
        "lock = threading.Lock(); running = True\n"
        "def busy():\n"
        "    while running:\n"
        "        with lock:\n"
        "            sum(range(1000))\n"
        "spinner = threading.Thread(target=busy, daemon=True); spinner.start()\n"
        "preview_source('warm = 1')\n"
        "threads = threading.active_count()\n"
        "endings = [preview_source(f'n = {i}').ended for i in range(50)]\n"
        "after = threading.active_count()\n"
        "running = False; spinner.join()\n"
        "print(json.dumps([sorted(set(endings)), threads, after, children()]))"
    )
    assert got[0] == ["finished"]
    assert got[1] == got[2]
    assert got[3] == []
