"""Ten chat widgets streaming at once in one real kernel: batches per second per widget, and how fast the
kernel still answers an ``execute_request``.

A real IPython kernel (``python3`` from the running interpreter's environment, started with
``jupyter_client``) creates ten :class:`hermes_notebook.widgets._stream.StreamingWidget` (what ``Chat`` and
``%hermes`` use) and feeds each a scripted markdown reply (``--size`` chars at ``--rate`` chars/s per widget,
one ``append`` every ``--tick`` seconds) from background threads, the way live turns reach a widget off the
kernel's main thread. Meanwhile this script, as the kernel's only client:

* reads every IOPub message and counts the widgets' ``changes`` batches per comm (batches per second per
  widget, and the most any widget sent in one second: the coalescer's cap is 30);
* sends ``1+1`` on the shell channel every 100 ms and times the round trip to its ``execute_reply``;
* reads the kernel process's CPU time (``/proc``) before and after.

No browser is involved, so these are the kernel's numbers alone (the browser's own load is measured by
``bench_streaming_browser.py``). ``--feeders 1`` pushes all ten streams from one thread (like the package loop
that feeds real chats); the default, 10, gives each widget its own thread.

``--no-kernel`` measures the kernel side's own part in this process instead (no comm traffic): the cost of one
``push`` of an ``append`` into ten widgets, over the first and the last 200 KB of a 1 MB reply, so a cost that
grows with the text already streamed shows as a ratio above 1.

Run: ``PYTHONPATH=$PWD .venv/bin/python benchmarks/bench_ten_widgets.py`` (``--json`` for machine output).
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import threading
import time
from pathlib import Path
from typing import Any

from jupyter_client.manager import KernelManager

ROOT = Path(__file__).resolve().parents[1]

SETUP = r"""
import json, random, threading, time
from hermes_notebook.widgets._stream import StreamingWidget

def _part(pid, text):
    return {"id": pid, "kind": "text", "text": text, "name": None, "status": None, "arguments": None,
            "preview": None, "result": None, "duration": None, "interaction": None}

def _reply(total):
    rnd = random.Random(7)
    words = ("the model streams tokens while the notebook keeps every finished block and only the tail"
             " moves").split()
    out, size, i = [], 0, 0
    while size < total:
        heading = f"## Section {i}\n\n" if i % 5 == 0 else ""
        block = heading + " ".join(rnd.choice(words) for _ in range(60)) + "\n\n"
        if i % 7 == 3:
            defs = "".join(f"def f{i}_{j}(x):\n    return x * {j}\n" for j in range(8))
            block += "```python\n" + defs + "```\n\n"
        out.append(block); size += len(block); i += 1
    return "".join(out)[:total]

TEN = [StreamingWidget(mode="turn") for _ in range(10)]
COMMS = [w.comm.comm_id for w in TEN]
DONE = {}

def _feed(pairs, text, rate, tick):
    per = max(1, int(rate * tick)); t0 = time.monotonic(); sent = 0
    for w, mid in pairs:
        w.push([{"op": "message", "message": {"id": mid, "role": "assistant", "status": "streaming",
                 "parts": [_part("text:0", "")], "usage": None, "error": None}}])
    while sent < len(text):
        for w, mid in pairs:
            w.push([{"op": "append", "message_id": mid, "part_id": "text:0", "text": text[sent:sent + per]}])
        sent += per
        delay = t0 + sent / rate - time.monotonic()
        if delay > 0: time.sleep(delay)
    for w, mid in pairs:
        w.push([{"op": "finish", "message_id": mid, "status": "complete", "usage": None, "error": None}])
        w.flush()
        DONE[mid] = time.monotonic() - t0

def start(size, rate, tick, feeders):
    text = _reply(size)
    pairs = [(w, f"assistant:{i}") for i, w in enumerate(TEN)]
    groups = [pairs[i::feeders] for i in range(feeders)]
    for g in groups:
        threading.Thread(target=_feed, args=(g, text, rate, tick), daemon=True).start()
"""


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


def _percentile(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


def _execute(client: Any, code: str, user_expressions: dict[str, str] | None = None) -> dict[str, Any]:
    msg_id = client.execute(code, silent=False, store_history=False, user_expressions=user_expressions or {})
    while True:
        reply = client.get_shell_msg(timeout=120)
        if reply["parent_header"].get("msg_id") == msg_id:
            if reply["content"]["status"] != "ok":
                raise RuntimeError(f"kernel error: {reply['content']}")
            return dict(reply["content"])


def _expression(client: Any, expr: str) -> Any:
    content = _execute(client, "", {"r": expr})
    return json.loads(eval(content["user_expressions"]["r"]["data"]["text/plain"]))  # a str repr of JSON


def run(size: int, rate: int, tick: float, feeders: int) -> dict[str, Any]:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    }
    km = KernelManager(kernel_name="python3")
    km.start_kernel(env=env)
    client = km.blocking_client()
    client.start_channels()
    try:
        client.wait_for_ready(timeout=60)
        _execute(client, SETUP)
        comms = _expression(client, "json.dumps(COMMS)")
        index = {cid: i for i, cid in enumerate(comms)}
        batches: list[list[float]] = [[] for _ in comms]
        chars: list[int] = [0 for _ in comms]
        stop = threading.Event()
        errors: queue.Queue[BaseException] = queue.Queue()

        def read_iopub() -> None:
            try:
                while not stop.is_set():
                    try:
                        msg = client.get_iopub_msg(timeout=0.2)
                    except queue.Empty:
                        continue
                    if msg["msg_type"] != "comm_msg":
                        continue
                    data = msg["content"].get("data") or {}
                    content = data.get("content") or {}
                    i = index.get(msg["content"].get("comm_id"))
                    if (
                        i is None
                        or data.get("method") != "custom"
                        or content.get("type") not in ("changes", "more")
                    ):
                        continue
                    batches[i].append(time.monotonic())
                    if (
                        content["type"] == "more"
                    ):  # one append to the part the batch before ended appending to
                        chars[i] += len(content.get("text") or "")
                    else:
                        chars[i] += sum(
                            len(c.get("text") or "") for c in content["changes"] if c.get("op") == "append"
                        )
            except BaseException as exc:  # noqa: BLE001 - reported by the main thread
                errors.put(exc)

        reader = threading.Thread(target=read_iopub, daemon=True)
        reader.start()
        time.sleep(0.5)  # the widgets' comm_open and state messages pass first
        pid = km.provisioner.pid if km.provisioner is not None else None  # type: ignore[attr-defined]
        cpu0, t0 = _cpu_seconds(pid), time.monotonic()
        _execute(client, f"start({size}, {rate}, {tick}, {feeders})")
        rtts: list[float] = []
        expected = size / rate
        while time.monotonic() - t0 < expected + 0.5:
            s = time.perf_counter()
            _execute(client, "1+1")
            rtts.append((time.perf_counter() - s) * 1000)
            time.sleep(0.1)
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline:
            done = _expression(client, "json.dumps(DONE)")
            if len(done) == len(comms):
                break
            time.sleep(0.5)
        cpu1, t1 = _cpu_seconds(pid), time.monotonic()
        time.sleep(0.5)  # the last batches reach the reader
        stop.set()
        reader.join()
        if not errors.empty():
            raise errors.get()
    finally:
        client.stop_channels()
        km.shutdown_kernel(now=True)
    rates, peaks = [], []
    for times in batches:
        span = (times[-1] - times[0]) if len(times) > 1 else 1.0
        rates.append(len(times) / span)
        per_second: dict[int, int] = {}
        for t in times:
            per_second[int(t - times[0])] = per_second.get(int(t - times[0]), 0) + 1
        peaks.append(max(per_second.values(), default=0))
    return {
        "size": size,
        "rate": rate,
        "tick": tick,
        "feeders": feeders,
        "stream_seconds_max": round(max(done.values()), 2),
        "stream_seconds_expected": round(expected, 2),
        "all_text_arrived": all(c == size for c in chars),
        "batches_per_s_per_widget_min": round(min(rates), 1),
        "batches_per_s_per_widget_max": round(max(rates), 1),
        "most_batches_in_one_second": max(peaks),
        "exec_rtt_p50_ms": round(_percentile(rtts, 50), 1),
        "exec_rtt_p95_ms": round(_percentile(rtts, 95), 1),
        "exec_rtt_max_ms": round(max(rtts, default=0.0), 1),
        "exec_count": len(rtts),
        "kernel_cpu_s": round(cpu1 - cpu0, 2),
        "wall_s": round(t1 - t0, 2),
        "load_avg_1min": os.getloadavg()[0],
    }


def run_without_kernel(size: int, chunk: int = 50) -> dict[str, Any]:
    """Per-append cost of ``StreamingWidget.push`` into ten widgets, early in the reply vs late in it."""
    from hermes_notebook.widgets._stream import StreamingWidget

    part = {
        "id": "text:0",
        "kind": "text",
        "text": "",
        "name": None,
        "status": None,
        "arguments": None,
        "preview": None,
        "result": None,
        "duration": None,
        "interaction": None,
    }
    widgets = [StreamingWidget(mode="turn") for _ in range(10)]
    for i, w in enumerate(widgets):
        w.push(
            [
                {
                    "op": "message",
                    "message": {
                        "id": f"a{i}",
                        "role": "assistant",
                        "status": "streaming",
                        "parts": [dict(part)],
                        "usage": None,
                        "error": None,
                    },
                }
            ]
        )
    text = "x" * chunk
    steps = size // chunk
    window = max(1, steps // 5)  # the first and the last fifth (200 KB of a 1 MB reply)
    times: list[float] = []
    for _ in range(steps):
        t = time.perf_counter()
        for i, w in enumerate(widgets):
            w.push([{"op": "append", "message_id": f"a{i}", "part_id": "text:0", "text": text}])
        times.append(time.perf_counter() - t)
    for w in widgets:
        w.flush()
        w.close()
    early = sum(times[:window]) / (window * 10) * 1e6
    late = sum(times[-window:]) / (window * 10) * 1e6
    return {
        "size": size,
        "chunk": chunk,
        "appends": steps * 10,
        "push_us_first_fifth": round(early, 1),
        "push_us_last_fifth": round(late, 1),
        "late_over_early": round(late / early, 2),
        "total_s": round(sum(times), 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=1_000_000, help="reply chars per widget (default 1 MB)")
    parser.add_argument(
        "--rate", type=int, default=100_000, help="chars per second per widget (default 100000)"
    )
    parser.add_argument("--tick", type=float, default=0.005, help="seconds between appends (default 0.005)")
    parser.add_argument(
        "--feeders", type=int, default=10, help="feeding threads (default 10, one per widget)"
    )
    parser.add_argument("--no-kernel", action="store_true", help="only the in-process push cost (see above)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if args.no_kernel:
        result = run_without_kernel(args.size)
    else:
        result = run(args.size, args.rate, args.tick, args.feeders)
    if args.json:
        print(json.dumps(result))
        return
    for key, value in result.items():
        print(f"{key:32} {value}")


if __name__ == "__main__":
    main()
