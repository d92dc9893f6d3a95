"""The kernel's tools: what a tool call costs over a bare MCP server, how fast a read answers while a cell
runs, and how long ``share_kernel`` takes.

1. **Overhead** (this process, no Hermes). Our :class:`~hermes_notebook.kernel.server.ToolServer` with
   :class:`~hermes_notebook.kernel.share.KernelTools` behind it (bearer check, binding the call to the tool
   part that asked for it, the package-loop hop, the read on a worker thread, scrubbing the result) against a
   bare ``mcp`` SDK server (``MCPServer``, streamable HTTP, SSE responses as ours, no auth) whose tool does
   the same read (``reading.list_variables`` / ``describe`` over the same namespace: 100 variables, a
   DataFrame among them). Both on loopback, called by the same official MCP client (``ClientSession``, as
   Hermes' MCP client is). Each call of ours binds to a fresh running tool part (a Hermes turn makes one per
   call) of a stand-in Dashboard. Blocks alternate between the two servers; the medians and their ratio are
   printed (target <= 1.3x).
2. **A read while a cell runs** (a real ipykernel 7.4 via ``jupyter_client``). The kernel shares with the same
   stand-in Dashboard, its tool parts made before the cell starts (Hermes' own latency is not ours to
   measure); while a CPU-bound pure-Python cell runs (it holds the GIL between the interpreter's switches),
   the client calls ``list_variables`` and ``read_output`` of that cell every 50 ms: round-trip p50 / p95 /
   max, and the kernel's own time per call (binding included: ``KERNEL.recent_calls()``). The same while the
   kernel is idle.
3. **share_kernel** against the real newer Dashboard (``LocalHermes``, the scripted model): the first share
   (the tool server starts, ``mcp.servers.add`` + ``reload.mcp``) and a new policy on the same connection (no
   registration), each median of ``--shares`` fresh kernels' worth (a fresh ``KernelTools`` each time).

Run: ``PYTHONPATH=$PWD .venv/bin/python benchmarks/bench_kernel_tools.py [--calls 300] [--blocks 6]
[--skip-hermes]`` (``--json`` for machine output).
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import statistics
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DASHBOARD_URL = "http://127.0.0.1:9"  # the stand-in's: never connected to


class StandIn:
    """What ``KernelTools`` needs of a sharing conversation: its profile's MCP servers over a Dashboard that
    answers ``mcp.servers.*`` as a newer one does, and the turns it runs, whose running tool parts ask for the
    calls to come (``prepare``)."""

    def __init__(self) -> None:
        from hermes_notebook.session.mcp_servers import McpServers

        self.servers: dict[str, str] = {}
        self.turns: list[Any] = []
        self.profile: str | None = None  # the default profile
        self.mcp = McpServers(self._connection)
        self._ids = itertools.count(1)

    async def _connection(self) -> StandIn:
        return self

    async def request(self, method: str, params: dict[str, Any]) -> Any:
        if method == "mcp.servers.list":
            return {"servers": [{"name": n, "url": u} for n, u in self.servers.items()]}
        if method == "mcp.servers.add":
            self.servers[params["name"]] = params["config"]["url"]
            return {"ok": True}
        if method == "mcp.servers.remove":
            self.servers.pop(params["name"], None)
        return {"ok": True}

    def running_turns(self) -> list[Any]:
        return [turn for turn in self.turns if not turn.done]

    def prepare(self, server: str, tool: str, arguments: dict[str, Any], count: int = 1) -> None:
        """``count`` turns, each with one running part that asks for ``tool(arguments)`` (a newer
        ``tool.start``)."""
        from hermes_notebook.client.dashboard import SessionRef, Turn
        from hermes_notebook.client.dashboard.turn_state import TurnState
        from hermes_notebook.turns import TurnFolder
        from hermes_notebook.turns.events import Event

        for _ in range(count):
            n = next(self._ids)
            folder = TurnFolder(f"t{n}")
            state = TurnState(SessionRef(f"live{n}", f"stored{n}"), f"t{n}", "hi", folder)
            folder.apply(
                Event("tool.start", {"tool_id": f"k{n}", "name": f"mcp__{server}__{tool}", "args": arguments})
            )
            self.turns.append(Turn(state))

    def end_all(self) -> None:
        for turn in self.running_turns():
            turn._state.end("complete")  # noqa: SLF001 - a benchmark's stand-in ends its own turns


def namespace() -> dict[str, Any]:
    """100 variables of the kinds a notebook holds (a DataFrame, arrays, lists, dicts, numbers, strings)."""
    import numpy as np
    import pandas as pd

    ns: dict[str, Any] = {
        "df": pd.DataFrame({"city": ["Oslo", "Lima"] * 500, "sales": range(1000)}),
        "grid": np.arange(10_000).reshape(100, 100),
    }
    for i in range(98):
        ns[f"v{i}"] = [i] * 10 if i % 3 == 0 else {"k": i} if i % 3 == 1 else f"text {i}"
    return ns


async def _client_calls(
    url: str, token: str | None, calls: list[tuple[str, dict[str, Any]]], before: Any = None
) -> list[float]:
    """Seconds per ``tools/call`` from the official MCP client (one session); ``before(i)`` runs untimed
    first."""
    import httpx2
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    headers = {"Authorization": f"Bearer {token}"} if token else {}
    times = []
    async with (
        httpx2.AsyncClient(headers=headers) as http,
        streamable_http_client(url, http_client=http) as (read, write, *_),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        for i, (tool, arguments) in enumerate(calls):
            if before is not None:
                before(i)
            started = time.perf_counter()
            result = await session.call_tool(tool, arguments)
            times.append(time.perf_counter() - started)
            assert not result.is_error and "Refused" not in result.content[0].text, result  # type: ignore[union-attr]
    return times


def bare_server(ns: dict[str, Any]) -> tuple[Any, str]:
    """The baseline: the mcp SDK's own server, the same reads as tools, uvicorn on a thread."""
    import socket
    import threading

    import uvicorn
    from mcp.server.mcpserver import MCPServer

    from hermes_notebook.kernel import reading

    mcp = MCPServer("bare")

    async def list_variables() -> str:
        return await asyncio.to_thread(reading.list_variables, ns)

    async def describe(name: str) -> str:
        return await asyncio.to_thread(reading.describe, ns, name)

    mcp.add_tool(list_variables, name="list_variables", structured_output=False)
    mcp.add_tool(describe, name="describe", structured_output=False)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)  # as uvicorn binds host:port
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(
        uvicorn.Config(
            mcp.streamable_http_app(json_response=False, host="127.0.0.1"), log_level="warning", lifespan="on"
        )
    )
    threading.Thread(target=lambda: asyncio.run(server.serve(sockets=[sock])), daemon=True).start()
    while not server.started:
        time.sleep(0.01)
    return server, f"http://127.0.0.1:{sock.getsockname()[1]}/mcp"


def overhead(calls: int, blocks: int) -> dict[str, Any]:
    """Part 1 (see the module docstring)."""
    from types import SimpleNamespace

    import hermes_notebook.shell.host as shell_module
    from hermes_notebook import runtime
    from hermes_notebook.kernel import binding
    from hermes_notebook.kernel.grants import Modes
    from hermes_notebook.kernel.share import KernelTools

    ns = namespace()
    binding.ROUTE_WAIT = 1.0
    shell_module.ipython = lambda: SimpleNamespace(user_ns=ns)
    stand_in = StandIn()
    tools = KernelTools()
    tools.attach()
    share = runtime.run_sync(tools.share(stand_in, Modes.of(read=True), dashboard_url=DASHBOARD_URL))  # type: ignore[arg-type]
    assert tools.server is not None
    token = tools.server.token.reveal()
    bare, bare_url = bare_server(ns)
    work = [("list_variables", {}), ("describe", {"name": "df"})] * (calls // 2)

    def ours(i: int) -> None:  # untimed: the turn and its tool part exist before Hermes calls
        tool, arguments = work[i]
        stand_in.end_all()  # the previous call's turn has ended: one turn runs, as in a notebook
        stand_in.prepare(share.name, tool, arguments)

    results: dict[str, list[float]] = {"ours": [], "bare": []}
    for block in range(blocks):
        for kind in ("ours", "bare") if block % 2 == 0 else ("bare", "ours"):
            if kind == "ours":
                results[kind] += runtime.run_sync(_client_calls(share.url, token, work, ours), timeout=600)
            else:
                results[kind] += asyncio.run(_client_calls(bare_url, None, work))
    bare.should_exit = True
    tools.close()
    med = {k: statistics.median(v) for k, v in results.items()}
    return {
        "calls": len(results["ours"]),
        "ours_median_ms": med["ours"] * 1000,
        "bare_median_ms": med["bare"] * 1000,
        "ratio": med["ours"] / med["bare"],
        "ours_p95_ms": _pct(results["ours"], 95) * 1000,
        "bare_p95_ms": _pct(results["bare"], 95) * 1000,
    }


def _pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * p / 100))]


KERNEL_SETUP = """
import json
from benchmarks.bench_kernel_tools import StandIn, namespace
from hermes_notebook.kernel.grants import Modes
from hermes_notebook.kernel.share import KERNEL
from hermes_notebook.runtime import run_sync
globals().update(namespace())
stand_in = StandIn()
KERNEL.attach()
share = run_sync(KERNEL.share(stand_in, Modes.of(read=True), dashboard_url="http://127.0.0.1:9"))
print("SHARE", json.dumps([share.url, KERNEL.server.token.reveal()]))
"""

#: Tool parts asking for the reads to come (``cell`` is the cell they read: the busy one).
PREPARE = """
stand_in.prepare(share.name, "list_variables", {{}}, {n})
stand_in.prepare(share.name, "read_output", {{"cell": {cell}}}, {n})
print(len(In))
"""

BUSY_CELL = """
import time
def _work(seconds):
    end, s, i = time.perf_counter() + seconds, 0, 0
    while time.perf_counter() < end:
        for _ in range(2000):
            s = (s + i * i) % 1000003
            i += 1
        print("still working", i)
    return s
_work({seconds})
"""


def busy_reads(seconds: float, interval: float = 0.05) -> dict[str, Any]:
    """Part 2 (see the module docstring)."""
    from jupyter_client.manager import KernelManager

    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    }
    km = KernelManager(kernel_name="python3")
    km.start_kernel(env=env, cwd=str(ROOT))
    client = km.blocking_client()
    client.start_channels()
    client.wait_for_ready(timeout=60)
    out: list[str] = []

    def run(code: str, timeout: float = 120) -> str:
        out.clear()
        client.execute_interactive(
            code,
            timeout=timeout,
            output_hook=lambda m: out.append(
                m["content"].get("text", "") if m["msg_type"] == "stream" else ""
            ),
        )
        return "".join(out)

    try:
        count = int(seconds / interval) + 40
        url, token = json.loads(run(KERNEL_SETUP).split("SHARE ", 1)[1])
        busy_cell = int(run(PREPARE.format(n=count, cell="len(In)")))  # the next cell (In holds this one)
        calls = [("list_variables", {}), ("read_output", {"cell": busy_cell})] * (count // 2)

        def paced(i: int) -> None:
            time.sleep(interval)

        client.execute(BUSY_CELL.format(seconds=seconds))
        time.sleep(0.5)  # the cell is running
        # paced calls that end well before the cell does (each takes the pause plus its round trip)
        busy = asyncio.run(_client_calls(url, token, calls[: int(seconds / (interval * 2))], paced))
        client.get_shell_msg(timeout=seconds + 60)  # the busy cell's reply
        kernel_side = json.loads(
            run("print(json.dumps([(r.tool, r.seconds, r.running_cell) for r in KERNEL.recent_calls()]))")
        )
        run(PREPARE.format(n=40, cell=busy_cell))
        idle = asyncio.run(_client_calls(url, token, calls[:60], paced))
        while_busy = [s for tool, s, cell in kernel_side if cell == busy_cell]
    finally:
        client.stop_channels()
        km.shutdown_kernel(now=True)
    return {
        "busy_calls": len(busy),
        "busy_round_trip_ms": _summary(busy),
        "idle_round_trip_ms": _summary(idle),
        "kernel_side_while_busy_ms": _summary(while_busy),
        "kernel_side_calls_while_busy": len(while_busy),
    }


def _summary(values: list[float]) -> dict[str, float]:
    if not values:
        return {}
    return {
        "p50": statistics.median(values) * 1000,
        "p95": _pct(values, 95) * 1000,
        "max": max(values) * 1000,
    }


def share_times(rounds: int) -> dict[str, Any]:
    """Part 3 (see the module docstring)."""
    from hermes_notebook._demo.local_hermes import LocalHermes, find_hermes_bin
    from hermes_notebook.client.dashboard import DashboardConnection
    from hermes_notebook.kernel.grants import Modes
    from hermes_notebook.kernel.share import KernelTools
    from hermes_notebook.runtime import run_sync
    from hermes_notebook.session import Conversation

    first, again = [], []
    with LocalHermes(hermes_bin=find_hermes_bin(server="newer")) as hermes:
        settings = hermes.settings()
        conn = DashboardConnection(settings)
        run_sync(conn.connect())
        conversation = Conversation(dashboard=conn)
        url = settings.dashboard_url
        for _ in range(rounds):
            tools = KernelTools()  # a fresh kernel's worth: attached, then shared (as share_kernel does)
            started = time.perf_counter()
            tools.attach()
            run_sync(tools.share(conversation, Modes.of(read=True), dashboard_url=url))
            first.append(time.perf_counter() - started)
            started = time.perf_counter()
            tools.attach()
            run_sync(tools.share(conversation, Modes.of(read=False, run="allow"), dashboard_url=url))
            again.append(time.perf_counter() - started)
            tools.close()
        run_sync(conn.close())
    return {
        "first_share_ms": _summary(first[1:]),
        "first_share_in_a_fresh_process_ms": first[0] * 1000,
        "new_policy_ms": _summary(again),
    }


def main() -> None:
    import logging

    logging.getLogger("httpx").setLevel(logging.WARNING)
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=300, help="calls per block (overhead)")
    parser.add_argument("--blocks", type=int, default=6)
    parser.add_argument("--busy-seconds", type=float, default=20.0)
    parser.add_argument("--shares", type=int, default=6)
    parser.add_argument("--skip-hermes", action="store_true", help="no share_kernel timing (needs Hermes)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    results: dict[str, Any] = {"load": os.getloadavg()}
    results["overhead"] = overhead(args.calls, args.blocks)
    results["busy"] = busy_reads(args.busy_seconds)
    if not args.skip_hermes:
        results["share"] = share_times(args.shares)
    results["load_after"] = os.getloadavg()
    if args.json:
        print(json.dumps(results, indent=2))
        return
    o = results["overhead"]
    print(f"load average {results['load'][0]:.1f} -> {results['load_after'][0]:.1f}")
    print(
        f"tool call, {o['calls']} calls: ours {o['ours_median_ms']:.2f} ms, bare mcp "
        f"{o['bare_median_ms']:.2f} ms "
        f"(medians) = {o['ratio']:.2f}x; p95 {o['ours_p95_ms']:.2f} / {o['bare_p95_ms']:.2f} ms"
    )
    b = results["busy"]
    print(
        f"reads while a CPU-bound cell runs ({b['busy_calls']} calls): round trip "
        f"{_fmt(b['busy_round_trip_ms'])}; "
        f"the kernel's own time {_fmt(b['kernel_side_while_busy_ms'])}; idle round trip "
        f"{_fmt(b['idle_round_trip_ms'])}"
    )
    if "share" in results:
        s = results["share"]
        print(
            f"share_kernel: the process's first {s['first_share_in_a_fresh_process_ms']:.0f} ms (imports, "
            "server "
            f"start); later kernels' first {_fmt(s['first_share_ms'])}; a new policy "
            f"{_fmt(s['new_policy_ms'])}"
        )


def _fmt(summary: dict[str, float], unit: str = "ms", digits: int = 1) -> str:
    return ", ".join(f"{k} {v:.{digits}f} {unit}" for k, v in summary.items()) or "none"


if __name__ == "__main__":
    main()
