"""Kernel-to-browser bytes for a 200 KB reply streamed in 20,000 deltas, measured at the comm layer.

Two widgets get the same reply, delta by delta, paced like a fast model (``--seconds``, default 4 s):

* ``streaming``: :class:`hermes_notebook.widgets._stream.StreamingWidget` (what ``Chat`` uses): change records
  through the coalescer as custom messages, carrying the index entries (id/role/status/usage/error/rev, no
  text) of the messages they settle, plus the small ``settled_seq`` traitlet at the message boundaries;
* ``naive``: a widget whose synced ``messages`` traitlet is re-assigned with the whole message after every
  delta (the "full-state traitlet resync" every simple chat widget does).

Every message either widget hands to its comm (custom messages *and* state updates) is serialized the way
the kernel sends it (JSON) and counted, so the numbers are wire bytes minus the Jupyter envelope. The naive
path is measured on the first ``--naive-deltas`` deltas and extrapolated exactly (its cost per delta is the
message size so far, so the total is a sum we can also compute in closed form): serializing ~2 GB of JSON
would take minutes and prove nothing more.

The reply ends the way real ones do, with trailing whitespace, so the end-of-turn trim (a ``patch`` of the
whole text in the turn model, a ``splice`` on the wire) is part of the measurement.

A second measurement shows what one boundary costs in a long chat (``--history`` earlier messages): the
``index`` update against a traitlet holding every finished message in full (the design before the index).

Run: ``.venv/bin/python benchmarks/bench_widget_bytes.py`` (prints a table; ``--json`` for machine output).
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

import anywidget
import traitlets

from hermes_notebook import runtime
from hermes_notebook.widgets._stream import StreamingWidget

REPLY_BYTES = 200_000
DELTAS = 20_000


class RecordingComm:
    """Stands in for the widget's comm: counts the JSON bytes of every message and when it was sent."""

    def __init__(self) -> None:
        self.bytes = 0
        self.custom_bytes = 0
        self.index_bytes = 0
        self.state_bytes = 0
        self.custom_times: list[float] = []
        self.state_updates = 0
        self.kernel = object()  # ipywidgets sends only through a comm with a kernel
        self.comm_id = "bench"

    def send(self, data: Any = None, metadata: Any = None, buffers: Any = None) -> None:
        size = len(json.dumps(data, separators=(",", ":")))
        self.bytes += size
        if data.get("method") == "custom":
            self.custom_bytes += size
            index = (data.get("content") or {}).get("index")
            if index:  # index entries ride in batches (docs/architecture.md)
                self.index_bytes += len(json.dumps(index, separators=(",", ":")))
            self.custom_times.append(time.monotonic())
        else:
            self.state_bytes += size
            self.state_updates += 1

    def on_msg(self, callback: Any) -> None:
        pass

    def close(self, *args: Any, **kwargs: Any) -> None:
        pass


class NaiveChat(anywidget.AnyWidget):
    """The baseline: one synced list of whole messages, re-assigned after every delta."""

    _esm = "export default { render() {} }"
    messages = traitlets.List(traitlets.Dict()).tag(sync=True)


def _message(text: str, status: str) -> dict[str, Any]:
    part = {
        "id": "text:0",
        "kind": "text",
        "text": text,
        "name": None,
        "status": None,
        "arguments": None,
        "preview": None,
        "result": None,
        "duration": None,
        "interaction": None,
    }
    return {
        "id": "assistant:bench",
        "role": "assistant",
        "status": status,
        "parts": [part],
        "usage": None,
        "error": None,
    }


def _attach(widget: Any) -> RecordingComm:
    comm = RecordingComm()
    widget.comm = comm
    return comm


def bench_streaming(deltas: list[str], seconds: float) -> dict[str, Any]:
    widget = StreamingWidget()
    comm = _attach(widget)
    mid = "assistant:bench"
    widget.push([{"op": "message", "message": _message("", "streaming")}])
    per_tick = max(1, len(deltas) // max(1, int(seconds * 200)))  # 200 producer ticks a second

    async def produce() -> None:
        import asyncio

        for i in range(0, len(deltas), per_tick):
            widget.push(
                [
                    {"op": "append", "message_id": mid, "part_id": "text:0", "text": d}
                    for d in deltas[i : i + per_tick]
                ]
            )
            await asyncio.sleep(seconds / (len(deltas) / per_tick))

    t0 = time.perf_counter()
    runtime.run_sync(produce())
    text = "".join(deltas)
    widget.push(
        [
            {"op": "patch", "message_id": mid, "part_id": "text:0", "fields": {"text": text.rstrip()}},
            {"op": "finish", "message_id": mid, "status": "complete", "usage": None, "error": None},
        ]
    )
    runtime.run_sync(_settle())
    elapsed = time.perf_counter() - t0
    times = comm.custom_times
    worst = max((sum(1 for u in times if t <= u < t + 1.0) for t in times), default=0)
    final = widget.snapshot()[0]["parts"][0]["text"]
    assert final == text.rstrip(), "streamed text differs"
    assert "abcd" not in json.dumps(widget.index), "the index holds text"
    widget.comm = None
    return {
        "bytes": comm.bytes,
        "custom_bytes": comm.custom_bytes,
        "state_bytes": comm.state_bytes,
        "bytes_sent": widget.bytes_sent,
        "state_updates": comm.state_updates,
        "custom_messages": len(times),
        "max_messages_in_1s": worst,
        "elapsed_s": round(elapsed, 2),
    }


def bench_history_boundary(history: int) -> dict[str, Any]:
    """Bytes of one message boundary in a chat with ``history`` earlier messages: index vs full messages."""
    messages = []
    for i in range(history):
        m = _message(f"message {i}: " + "lorem ipsum dolor sit amet " * 20, "complete")
        m["id"] = f"assistant:h{i}"
        messages.append(m)
    widget = StreamingWidget()
    widget.reset(messages)
    comm = _attach(widget)
    widget.push(
        [
            {
                "op": "message",
                "message": {**_message("new prompt", "complete"), "id": "user:new", "role": "user"},
            }
        ]
    )
    widget.flush()
    index_bytes = comm.state_bytes + comm.index_bytes  # the settled_seq update + the entry in the batch
    full = len(
        json.dumps(
            {"method": "update", "state": {"messages": widget.snapshot()}, "buffer_paths": []},
            separators=(",", ":"),
        )
    )
    widget.comm = None
    return {"history": history, "index_bytes": index_bytes, "full_messages_bytes": full}


async def _settle() -> None:
    import asyncio

    await asyncio.sleep(0.2)  # let the coalescer's last timer fire


def bench_naive(deltas: list[str], measured: int) -> dict[str, Any]:
    widget = NaiveChat()
    comm = _attach(widget)
    text = ""
    for d in deltas[:measured]:
        text += d
        widget.messages = [_message(text, "streaming")]
    measured_bytes = comm.bytes
    # Extrapolate: each update costs (envelope + text so far); the envelope is constant.
    envelope = len(
        json.dumps(
            {"method": "update", "state": {"messages": [_message("", "streaming")]}, "buffer_paths": []},
            separators=(",", ":"),
        )
    )
    sizes = [0] * len(deltas)
    acc = 0
    for i, d in enumerate(deltas):
        acc += len(d)
        sizes[i] = envelope + acc
    total = sum(sizes) + envelope + acc  # + the final "complete" update
    widget.comm = None
    return {
        "bytes": total,
        "measured_first_n": measured,
        "measured_bytes": measured_bytes,
        "extrapolation_check": round(measured_bytes / sum(sizes[:measured]), 3),
        "messages": len(deltas) + 1,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=4.0, help="how long the producer streams")
    parser.add_argument("--naive-deltas", type=int, default=2_000, help="naive deltas actually serialized")
    parser.add_argument(
        "--history", type=int, default=2_000, help="earlier messages for the boundary measurement"
    )
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    deltas = [f"{i:05d}abcd " for i in range(DELTAS)]  # 10 characters each -> 200,000 characters
    assert sum(map(len, deltas)) == REPLY_BYTES
    streaming = bench_streaming(deltas, args.seconds)
    naive = bench_naive(deltas, args.naive_deltas)
    boundary = bench_history_boundary(args.history)
    result = {
        "reply_bytes": REPLY_BYTES,
        "deltas": DELTAS,
        "streaming": streaming,
        "naive": naive,
        "history_boundary": boundary,
        "streaming_ratio": round(streaming["bytes"] / REPLY_BYTES, 3),
        "streaming_custom_ratio": round(streaming["custom_bytes"] / REPLY_BYTES, 3),
        "streaming_index_ratio": round(streaming["state_bytes"] / REPLY_BYTES, 4),
        "naive_ratio": round(naive["bytes"] / REPLY_BYTES, 1),
    }
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(f"200 KB reply in {DELTAS:,} deltas over {args.seconds:g} s, bytes at the comm layer:")
    print(
        f"  streaming total           {streaming['bytes']:>15,} B  ({result['streaming_ratio']}x the reply)"
    )
    print(
        f"    custom 'changes'        {streaming['custom_bytes']:>15,} B  "
        f"({result['streaming_custom_ratio']}x)"
        f" in {streaming['custom_messages']} messages, max {streaming['max_messages_in_1s']} in any 1 s"
    )
    print(
        f"    'settled_seq' traitlet  {streaming['state_bytes']:>15,} B  ({result['streaming_index_ratio']}x)"
        f" in {streaming['state_updates']} boundary updates"
    )
    print(
        f"  naive traitlet resync     {naive['bytes']:>15,} B  ({result['naive_ratio']}x) in "
        f"{naive['messages']:,}"
        f" messages (first {naive['measured_first_n']:,} measured, extrapolation check"
        f" {naive['extrapolation_check']})"
    )
    print(f"one message boundary after {boundary['history']:,} earlier messages:")
    print(f"  index entry + settled_seq{boundary['index_bytes']:>15,} B")
    print(
        f"  all messages in full      {boundary['full_messages_bytes']:>15,} B  (the traitlet before the "
        "index existed)"
    )


if __name__ == "__main__":
    main()
