"""How much a chat streaming alongside slows the user's running cell: a CPU-bound cell's wall time, with and
without.

A real IPython kernel (``python3``: ipykernel 7.4 from this venv, started with ``jupyter_client``) shows a
:class:`hermes_notebook.widgets.Chat` on the real Hermes Dashboard (``LocalHermes``, the scripted model in
this process). This script plays JupyterLab with its default ``commsOverSubshells``: it creates a subshell and
sends the chat's ``send`` messages on it, the way the composer does. The chat streams ``SLOW`` replies back to
back (one delta of ~8 characters every ``--delta-ms`` ms, a fast model's pace; a new prompt as soon as a reply
ends).

1. **The chat's own cost**: the kernel process's CPU time per second (all threads, from ``/proc``) while the
   chat streams and no cell runs: the share of a core the chat takes. Other processes do not move it much.
2. **The user's cell**: a pure-Python CPU-bound loop (about ``--seconds`` s of its own thread's CPU time), run
   ``--runs`` times alone and ``--runs`` times while the chat streams, alternating (alone, streaming,
   streaming, alone, ...) so drift in the machine's speed hits both. It prints each kind's median and range,
   the ratio of the medians (the slowdown the user sees) and the median and quartiles of the ratios of
   neighbouring cells (steadier when the machine's load drifts). A CPU-bound cell gives up the GIL whenever
   the kernel's other threads (the package loop feeding the chat, the IOPub and subshell threads) want it, so
   their CPU time during the cell, as a share of its wall time, is also printed: the slowdown to expect on a
   machine with a free core.

Wall times move with whatever else the machine runs (the load average is printed): compare them on an idle
machine. As root the kernel's threads get nice -10 (``--nice``), both kinds alike, so other processes take
less of its core.

Run: ``PYTHONPATH=$PWD .venv/bin/python benchmarks/bench_busy_kernel.py [--runs 5] [--seconds 8] [--delta-ms
20]`` (``--json`` for machine output).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path
from typing import Any

from jupyter_client.manager import KernelManager

from hermes_notebook._demo.local_hermes import LocalHermes

ROOT = Path(__file__).resolve().parents[1]

SETUP = """
from hermes_notebook.widgets import Chat
chat = Chat(max_rate={max_rate}).wait_ready()
print("CHAT", chat.comm.comm_id, chat.comm_routing)
"""

#: The user's cell: CPU-bound pure Python (it holds the GIL except when the interpreter switches threads).
CELL = """
import time
def _work(n):
    s = 0
    for i in range(n):
        s = (s + i * i) % 1000003
    return s
_t0, _m0, _p0 = time.perf_counter(), time.thread_time(), time.process_time()
_work({n})
print("WALL", time.perf_counter() - _t0, time.thread_time() - _m0, time.process_time() - _p0)
"""


def _cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (all its threads)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Kernel:
    """The kernel, its client and everything its IOPub said."""

    def __init__(self, hermes: LocalHermes) -> None:
        settings = hermes.settings()
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
            "HERMES_API_URL": settings.api_url,
            "HERMES_DASHBOARD_URL": settings.dashboard_url,
        }
        env["HERMES_API_KEY"] = settings.api_key.reveal() if settings.api_key else ""
        env["HERMES_DASHBOARD_TOKEN"] = settings.dashboard_token.reveal() if settings.dashboard_token else ""
        self.km = KernelManager(kernel_name="python3")
        self.km.start_kernel(env=env)
        self.client = self.km.blocking_client()
        self.client.start_channels()
        self.client.wait_for_ready(timeout=60)
        self.pid = int(self.km.provisioner.process.pid)  # type: ignore[union-attr]

    def run(self, code: str, on_message: Any = None, timeout: float = 300) -> str:
        """Execute ``code``; every IOPub message goes to ``on_message`` meanwhile. Returns its stdout."""
        msg_id = self.client.execute(code)
        out: list[str] = []
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                msg = self.client.get_iopub_msg(timeout=0.05)
            except Exception:  # queue.Empty
                if on_message is not None:
                    on_message(None)
                continue
            if on_message is not None:
                on_message(msg)
            parent = msg["parent_header"].get("msg_id")
            if parent == msg_id and msg["msg_type"] == "stream":
                out.append(msg["content"]["text"])
            elif parent == msg_id and msg["msg_type"] == "error":
                raise RuntimeError("\n".join(msg["content"]["traceback"]))
            elif (
                parent == msg_id
                and msg["msg_type"] == "status"
                and msg["content"]["execution_state"] == "idle"
            ):
                return "".join(out)
        raise TimeoutError("the cell did not finish")

    def renice(self, nice: int) -> int:
        """Give every thread of the kernel this nice value (so other processes on a shared machine take less
        of its core); returns how many threads were changed."""
        changed = 0
        for task in Path(f"/proc/{self.pid}/task").iterdir():
            try:
                os.setpriority(os.PRIO_PROCESS, int(task.name), nice)
                changed += 1
            except (PermissionError, ProcessLookupError):
                pass
        return changed

    def subshell(self) -> str:
        msg = self.client.session.msg("create_subshell_request", {})
        self.client.control_channel.send(msg)
        return str(self.client.control_channel.get_msg(timeout=10)["content"]["subshell_id"])

    def send_custom(self, comm_id: str, content: dict[str, Any], subshell: str) -> None:
        msg = self.client.session.msg(
            "comm_msg", {"comm_id": comm_id, "data": {"method": "custom", "content": content}}
        )
        msg["header"]["subshell_id"] = subshell
        self.client.shell_channel.send(msg)

    def stop(self) -> None:
        self.client.stop_channels()
        self.km.shutdown_kernel(now=True)


class Streamer:
    """Keeps the chat streaming: a new prompt whenever the last reply ended (the ``busy`` traitlet went
    false)."""

    def __init__(self, kernel: Kernel, comm_id: str, subshell: str, ticks: int) -> None:
        self.kernel, self.comm_id, self.subshell, self.ticks = kernel, comm_id, subshell, ticks
        self.active = False
        self.busy = False
        self.waiting_since: float | None = None
        self.chars = 0
        self.prompts = 0

    def prompt(self) -> None:
        self.prompts += 1
        self.waiting_since = time.monotonic()
        self.kernel.send_custom(
            self.comm_id, {"type": "send", "text": f"SLOW {self.ticks}", "images": []}, self.subshell
        )

    def __call__(self, msg: dict[str, Any] | None) -> None:
        if (
            msg is not None
            and msg["msg_type"] == "comm_msg"
            and msg["content"].get("comm_id") == self.comm_id
        ):
            data = msg["content"]["data"]
            if data.get("method") == "update" and "busy" in (data.get("state") or {}):
                self.busy = bool(data["state"]["busy"])
                self.waiting_since = None if self.busy else self.waiting_since
            content = data.get("content") or {}
            if content.get("type") == "more":
                self.chars += len(content.get("text", ""))
            for change in content.get("changes") or []:
                if change.get("op") == "append":
                    self.chars += len(change.get("text", ""))
        if (
            self.active
            and not self.busy
            and (self.waiting_since is None or time.monotonic() - self.waiting_since > 5)
        ):
            self.prompt()


def _quartiles(values: list[float]) -> list[float]:
    if len(values) < 2:
        return [round(values[0], 2)] * 3 if values else [0.0] * 3
    q1, mid, q3 = statistics.quantiles(values, n=4)
    return [round(q1, 2), round(mid, 2), round(q3, 2)]


def calibrate(kernel: Kernel, seconds: float) -> int:
    n = 2_000_000
    wall = float(kernel.run(CELL.format(n=n)).split()[2])  # the cell's own CPU time: steadier under load
    return int(n * seconds / wall)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5, help="cells of each kind")
    parser.add_argument(
        "--seconds", type=float, default=8.0, help="about how long the CPU-bound cell runs alone"
    )
    parser.add_argument("--delta-ms", type=float, default=20.0, help="ms between the streamed reply's deltas")
    parser.add_argument(
        "--nice",
        type=int,
        default=-10 if os.geteuid() == 0 else 0,
        help="nice value for the kernel's threads (default -10 as root: steadier on a shared machine)",
    )
    parser.add_argument(
        "--max-rate",
        type=float,
        default=None,
        help="the chat's batches per second at most (default: the widget's own, 30)",
    )
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    hermes = LocalHermes().start()
    assert hermes.model is not None
    hermes.model.slow_delay = args.delta_ms / 1000
    kernel = Kernel(hermes)
    try:
        subshell = kernel.subshell()  # JupyterLab's subshell for the widgets' comm target
        _, comm_id, routing = kernel.run(SETUP.format(max_rate=args.max_rate)).split()
        reniced = kernel.renice(args.nice) if args.nice else 0
        n = calibrate(kernel, args.seconds)
        ticks = int(4 * args.seconds / (args.delta_ms / 1000))  # one reply outlasts a cell
        streamer = Streamer(kernel, comm_id, subshell, ticks)
        # The chat's own cost: the kernel's CPU per second while it streams and no cell runs.
        streamer.active, streamer.chars = True, 0
        streamer.prompt()
        while streamer.chars == 0:
            kernel.run("pass", streamer)
        before, started = _cpu_seconds(kernel.pid), time.monotonic()
        while time.monotonic() - started < args.seconds:
            try:
                streamer(kernel.client.get_iopub_msg(timeout=0.05))
            except Exception:  # queue.Empty
                streamer(None)
        idle_cost = (_cpu_seconds(kernel.pid) - before) / (time.monotonic() - started)
        idle_rate = streamer.chars / (time.monotonic() - started)
        streamer.active = False
        kernel.send_custom(comm_id, {"type": "stop"}, subshell)
        while streamer.busy:
            kernel.run("pass", streamer)
        walls: dict[str, list[float]] = {"alone": [], "streaming": []}
        cpu: dict[str, list[float]] = {"alone": [], "streaming": []}
        chars: list[int] = []
        order = ["alone", "streaming", "streaming", "alone"] * ((args.runs + 1) // 2)
        for kind in order[: 2 * args.runs]:
            if kind == "streaming":
                streamer.active, streamer.chars = True, 0
                streamer.prompt()
                deadline = time.monotonic() + 60
                while (
                    streamer.chars == 0 and time.monotonic() < deadline
                ):  # the reply is streaming before the cell
                    kernel.run("pass", streamer)
            wall, main_cpu, process_cpu = (
                float(x) for x in kernel.run(CELL.format(n=n), streamer).split()[1:4]
            )
            walls[kind].append(wall)
            cpu[kind].append((process_cpu - main_cpu) / wall)
            if kind == "streaming":
                chars.append(streamer.chars)
                streamer.active = False
                kernel.send_custom(comm_id, {"type": "stop"}, subshell)
                deadline = time.monotonic() + 30
                while streamer.busy and time.monotonic() < deadline:
                    kernel.run("pass", streamer)
    finally:
        kernel.stop()
        hermes.stop()

    alone, streaming = statistics.median(walls["alone"]), statistics.median(walls["streaming"])
    result = {
        "routing": routing,
        "runs": args.runs,
        "cell_s": {k: [round(v, 3) for v in vs] for k, vs in walls.items()},
        "median_s": {"alone": round(alone, 3), "streaming": round(streaming, 3)},
        "slowdown_pct": round((streaming / alone - 1) * 100, 2),
        # The i-th cells of each kind ran next to each other: their ratio cancels slow drifts in the machine's
        # load.
        "paired_slowdown_pct": _quartiles(
            [(s / a - 1) * 100 for a, s in zip(walls["alone"], walls["streaming"], strict=True)]
        ),
        "other_threads_cpu_pct_of_cell_wall": {
            k: round(statistics.median(vs) * 100, 2) for k, vs in cpu.items()
        },
        "chat_cpu_pct_no_cell": round(idle_cost * 100, 2),
        "streamed_chars_per_s_no_cell": round(idle_rate),
        "streamed_chars_per_s": round(
            statistics.median(c / w for c, w in zip(chars, walls["streaming"], strict=True))
        ),
        "delta_ms": args.delta_ms,
        "kernel_nice": args.nice if reniced else 0,
        "load_average": os.getloadavg(),
    }
    if args.json:
        print(json.dumps(result, indent=1))
        return
    print(f"chat comm routing: {routing}")
    print(
        f"  no cell running: the kernel used {result['chat_cpu_pct_no_cell']} % of a core while the chat "
        "streamed "
        f"{result['streamed_chars_per_s_no_cell']} characters/s"
    )
    print(f"  {args.runs} CPU-bound cells of each kind, alternating:")
    for kind in ("alone", "streaming"):
        spread = f"{min(walls[kind]):.3f}-{max(walls[kind]):.3f}"
        print(
            f"  {kind:9s} median {statistics.median(walls[kind]):.3f} s (range {spread}); the kernel's other "
            f"threads' CPU: {result['other_threads_cpu_pct_of_cell_wall'][kind]} % of the cell's wall time"
        )
    q1, mid, q3 = result["paired_slowdown_pct"]
    print(
        f"  slowdown: medians {result['slowdown_pct']:+.2f} %; neighbouring pairs median {mid:+.2f} % "
        f"(quartiles {q1:+.2f} to {q3:+.2f} %)"
    )
    print(
        f"  streamed meanwhile: {result['streamed_chars_per_s']} characters/s (a delta every "
        f"{args.delta_ms:g} ms)"
    )
    print(
        f"  load average: {', '.join(f'{x:.2f}' for x in result['load_average'])}; kernel nice "
        f"{result['kernel_nice']}"
    )


if __name__ == "__main__":
    main()
