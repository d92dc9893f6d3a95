"""Replay 100k recorded Dashboard frames: DashboardConnection + turn model vs a bare websockets loop.

The frames are the real captures in ``shared/hermes/transcripts/ws_*.jsonl`` (every in-turn event type seen
live, so mostly ``message.delta``), re-addressed to one session and cycled to ``--frames``, bracketed by
``message.start`` and ``message.complete``. A local websockets server in a *separate process* pre-encodes
them and writes them to the socket in one go, so the client is the bottleneck in both runs:

- baseline: ``websockets.connect`` (same options as the connection) + ``async for raw in ws:
  json.loads(raw)``;
- ours: ``DashboardConnection.submit()`` and ``async for change in turn`` to the end, then ``await turn``;
- through the runner: the same turn as every face runs it, ``Conversation.run`` (the one turn runner: its
  driver, the session's turn queue, the interaction scan per batch) into a sink that only counts.

All run alternately in one invocation; the best of ``--rounds`` is compared. Target: ratio <= 1.25 (ours over
the bare loop); the runner should add little on top of ours.

    .venv/bin/python benchmarks/bench_dashboard.py [--frames 100000] [--rounds 5]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

TRANSCRIPTS = Path("/work/shared/hermes/transcripts")
TOKEN = "bench-token-0123456789abcdef"
SID = "bench001"
# Events that open, end or re-key a turn are placed once, not cycled.
_SKIP = {
    "message.start",
    "message.complete",
    "error",
    "session.info",
    "gateway.ready",
    "session.title",
    "approval.request",
    "clarify.request",
}


def recorded_frames(total: int) -> list[str]:
    """``total`` event frames from the captures: message.start, the cycled turn events, message.complete."""
    body: list[dict[str, Any]] = []
    for path in sorted(TRANSCRIPTS.glob("ws_*.jsonl")):
        for line in path.read_text().splitlines():
            rec = json.loads(line)
            frame = rec["frame"]
            if rec["dir"] != "recv" or frame.get("method") != "event":
                continue
            if frame["params"]["type"] in _SKIP:
                continue
            frame = json.loads(json.dumps(frame))
            frame["params"]["session_id"] = SID
            body.append(frame)
    start = {"jsonrpc": "2.0", "method": "event", "params": {"type": "message.start", "session_id": SID}}
    end = {
        "jsonrpc": "2.0",
        "method": "event",
        "params": {
            "type": "message.complete",
            "session_id": SID,
            "payload": {"text": "done", "status": "complete"},
        },
    }
    frames = [start] + [body[i % len(body)] for i in range(total - 2)] + [end]
    return [json.dumps(f) for f in frames]


# --- server (separate process) -----------------------------------------------------------------------------


async def serve(total: int) -> None:
    from websockets.asyncio.server import serve as ws_serve
    from websockets.frames import Frame, Opcode

    frames = recorded_frames(total)
    blob = b"".join(Frame(Opcode.TEXT, f.encode()).serialize(mask=False, extensions=[]) for f in frames)

    async def handler(ws: Any) -> None:
        await ws.send(json.dumps({"jsonrpc": "2.0", "method": "event", "params": {"type": "gateway.ready"}}))
        async for raw in ws:
            msg = json.loads(raw)
            if msg == "go":  # the baseline asks for the burst directly
                ws.transport.write(blob)
                continue
            result: Any = {"ok": True}
            if msg.get("method") == "session.create":
                result = {"session_id": SID, "stored_session_id": "stored-bench", "messages": [], "info": {}}
            elif msg.get("method") == "prompt.submit":
                result = {"status": "streaming"}
            await ws.send(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}))
            if msg.get("method") == "prompt.submit":
                ws.transport.write(blob)  # raw pre-encoded frames: the server is never the bottleneck

    async with ws_serve(
        handler, "127.0.0.1", 0, compression=None, max_size=None, ping_interval=None
    ) as server:
        print(server.sockets[0].getsockname()[1], flush=True)
        await asyncio.Future()


# --- clients ---------------------------------------------------------------------------------------------


async def bare_loop(url: str, total: int) -> float:
    from websockets.asyncio.client import connect

    loads = json.loads
    async with connect(
        f"{url}?token={TOKEN}",
        max_size=None,
        ping_interval=None,
        compression=None,
        max_queue=1024,
        proxy=None,
    ) as ws:
        await ws.recv()  # gateway.ready
        started = time.perf_counter()
        await ws.send('"go"')
        count = 0
        async for raw in ws:
            loads(raw)
            count += 1
            if count == total:
                break
        return time.perf_counter() - started


async def our_connection(http_url: str, total: int) -> float:
    from hermes_notebook.client.dashboard import DashboardConnection

    conn = DashboardConnection(http_url, TOKEN, reconnect=False)
    await conn.connect()
    ref = await conn.create_session()
    started = time.perf_counter()
    turn = await conn.submit(ref, "go")
    changes = 0
    async for _ in turn:
        changes += 1
    message = await turn
    elapsed = time.perf_counter() - started
    await conn.close()
    assert message.status == "complete" and changes > total // 2, (message.status, changes)
    return elapsed


async def through_runner(http_url: str, total: int) -> float:
    from hermes_notebook.client.dashboard import DashboardConnection
    from hermes_notebook.session import Conversation, TurnRequest

    class Counting:
        """A face that only counts what arrives."""

        changes = 0

        def started(self, session_id: str) -> None:
            pass

        def push(self, changes: Any) -> None:
            self.changes += len(changes)

        def note(self, text: str) -> None:
            pass

        def failed(self, error: Any) -> None:
            raise error

        async def obtain(self, request: Any) -> None:
            return None

    conn = DashboardConnection(http_url, TOKEN, reconnect=False)
    await conn.connect()
    conversation = Conversation(dashboard=conn)
    await conversation.book.dashboard_ref(
        conn, None
    )  # the session exists before the clock starts, as for ours
    sink = Counting()
    started = time.perf_counter()
    outcome = await conversation.run(TurnRequest(prompt="go"), sink)
    elapsed = time.perf_counter() - started
    await conn.close()
    assert outcome.message["status"] == "complete" and sink.changes > total // 2, (
        outcome.message["status"],
        sink.changes,
    )
    return elapsed


async def bench(port: int, total: int, rounds: int) -> None:
    http_url = f"http://127.0.0.1:{port}"
    ws_url = f"ws://127.0.0.1:{port}/api/ws"
    await bare_loop(ws_url, total)  # warm up both paths (imports, allocator)
    await our_connection(http_url, total)
    await through_runner(http_url, total)
    bare: list[float] = []
    ours: list[float] = []
    runner: list[float] = []
    for _ in range(rounds):
        bare.append(await bare_loop(ws_url, total))
        ours.append(await our_connection(http_url, total))
        runner.append(await through_runner(http_url, total))
    b, o = min(bare), min(ours)
    print(f"frames: {total:,} (recorded Dashboard events, mostly message.delta)")
    print(
        f"bare websockets + json.loads : best {b:.3f} s  median {statistics.median(bare):.3f} s  "
        f"({total / b:,.0f} frames/s)"
    )
    print(
        f"DashboardConnection + turns  : best {o:.3f} s  median {statistics.median(ours):.3f} s  "
        f"({total / o:,.0f} frames/s)"
    )
    r = min(runner)
    print(
        f"through the turn runner      : best {r:.3f} s  median {statistics.median(runner):.3f} s  "
        f"({total / r:,.0f} frames/s)"
    )
    print(
        f"ratio (best/best): {o / b:.2f}x   ratio (median/median): "
        f"{statistics.median(ours) / statistics.median(bare):.2f}x   target <= 1.25x"
    )
    print(
        f"the runner over the connection alone (best/best): {r / o:.2f}x   (median/median): "
        f"{statistics.median(runner) / statistics.median(ours):.2f}x"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        asyncio.run(serve(args.frames))
        return
    server = subprocess.Popen(
        [sys.executable, __file__, "--serve", "--frames", str(args.frames)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert server.stdout is not None
        port = int(server.stdout.readline())
        asyncio.run(bench(port, args.frames, args.rounds))
    finally:
        server.terminate()
        server.wait(10)


if __name__ == "__main__":
    main()
