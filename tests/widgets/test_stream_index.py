"""The index as changes: entries ride in the batch that settles a message, never the whole list.

``StreamingWidget`` on its own (what ``Chat`` and the ``%hermes`` live turn build on), with its sends
recorded. The protocol is docs/architecture.md, "Widget comm protocol".
"""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from hermes_notebook.widgets._stream import StreamingWidget, change_weight
from tests.helpers import eventually, expand_more


def _part(pid: str, text: str) -> dict[str, Any]:
    return {
        "id": pid,
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


def _msg(mid: str, role: str, text: str, status: str) -> dict[str, Any]:
    return {
        "id": mid,
        "role": role,
        "status": status,
        "parts": [_part("text:0", text)],
        "usage": None,
        "error": None,
    }


class Recorded:
    def __init__(self, widget: StreamingWidget) -> None:
        self.sent: list[dict[str, Any]] = []
        self.settled_seqs: list[int] = []
        widget.send = lambda content, buffers=None: self.sent.append(json.loads(json.dumps(content)))  # type: ignore[method-assign]
        widget.observe(lambda change: self.settled_seqs.append(change["new"]), names="settled_seq")

    def batches(self) -> list[dict[str, Any]]:
        """The change batches, short ``more`` ones read as the ``changes`` they stand for."""
        return [m for m in expand_more(self.sent) if m["type"] == "changes"]


@pytest.fixture
def widget() -> Any:
    w = StreamingWidget(mode="turn")
    yield w
    w.close()


def test_index_bytes_per_settled_message_stay_under_1_kb_at_2000_messages(widget: StreamingWidget) -> None:
    """At 2,000 messages a settled message costs its own entry plus a settled_seq update, not the whole
    index."""
    history = [_msg(f"user:{i}", "user", f"question {i} " * 20, "complete") for i in range(2000)]
    widget.reset(history)
    wire = Recorded(widget)
    widget.push([{"op": "message", "message": _msg("user:new", "user", "next?", "complete")}])
    widget.push([{"op": "message", "message": _msg("assistant:new", "assistant", "", "streaming")}])
    for i in range(300):
        widget.push([{"op": "append", "message_id": "assistant:new", "part_id": "text:0", "text": f"w{i} "}])
    widget.push(
        [{"op": "finish", "message_id": "assistant:new", "status": "complete", "usage": None, "error": None}]
    )
    widget.flush()
    eventually(lambda: wire.batches() and not widget._coalescer._buffer, what="batches sent")
    entries = [e for b in wire.batches() for e in b.get("index", [])]
    assert [e["id"] for e in entries] == ["user:new", "assistant:new"]  # one entry per settled message, once
    index_bytes = sum(len(json.dumps(e, separators=(",", ":"))) for e in entries)
    index_bytes += sum(
        len(
            json.dumps(
                {"method": "update", "state": {"settled_seq": s}, "buffer_paths": []}, separators=(",", ":")
            )
        )
        for s in wire.settled_seqs
    )
    assert index_bytes / 2 <= 1024, index_bytes
    assert "index" not in widget.get_state()
    # The entries agree with the kernel's index and with a replay of the batches (the views' revs).
    revs: dict[str, int] = {}
    for batch in wire.batches():
        for c in batch["changes"]:
            mid = c["message"]["id"] if c["op"] == "message" else c["message_id"]
            revs[mid] = revs.get(mid, 0) + change_weight(c)
        for entry in batch.get("index", []):
            assert entry["rev"] == revs[entry["id"]]
    kernel = {e["id"]: e for e in widget.index}
    assert entries[-1] == kernel["assistant:new"] and entries[-1]["status"] == "complete"
    assert widget.settled_seq == max(b["seq"] for b in wire.batches() if "index" in b)


def test_streaming_deltas_carry_no_index(widget: StreamingWidget) -> None:
    """A message still streaming sends no entry and does not move settled_seq."""
    widget.reset([])
    wire = Recorded(widget)
    widget.push([{"op": "message", "message": _msg("assistant:a", "assistant", "", "streaming")}])
    for _ in range(50):
        widget.push([{"op": "append", "message_id": "assistant:a", "part_id": "text:0", "text": "x"}])
        time.sleep(0.002)
    widget.flush()
    eventually(lambda: wire.batches(), what="batches")
    assert all("index" not in b for b in wire.batches())
    assert wire.settled_seqs == []


def test_a_failed_push_sends_a_bumped_entry_so_views_resync(widget: StreamingWidget) -> None:
    """Records that can't be applied leave the message at a rev no view holds, and that entry goes out."""
    widget.reset([_msg("assistant:a", "assistant", "hi", "complete")])
    wire = Recorded(widget)
    before = widget.index[0]["rev"]
    with pytest.raises(KeyError):
        widget.push([{"op": "append", "message_id": "assistant:a", "part_id": "text:9", "text": "lost"}])
    sent = [e for m in wire.sent if m["type"] in ("index", "changes") for e in m.get("index", [])]
    assert [e["id"] for e in sent] == ["assistant:a"]
    assert sent[0]["rev"] == widget.index[0]["rev"] and sent[0]["rev"] != before


def test_reset_implies_every_entry_and_moves_settled_seq(widget: StreamingWidget) -> None:
    """With a view, a reset sends one snapshot and nothing else; settled_seq points at it."""
    widget.reset([])
    widget._dispatch(widget, {"type": "snapshot"}, [])  # a view exists: it asked for its first snapshot
    widget.push([{"op": "message", "message": _msg("user:1", "user", "q", "complete")}])
    widget.flush()
    wire = Recorded(widget)
    widget.reset([_msg("user:2", "user", "other session", "complete")])
    snapshots = [m for m in wire.sent if m["type"] == "snapshot"]
    assert len(snapshots) == 1 and snapshots[0]["revs"] == {"user:2": widget.index[0]["rev"]}
    assert [m["type"] for m in wire.sent] == ["snapshot"]  # no separate index traffic
    assert widget.settled_seq == snapshots[0]["seq"]


def test_reset_before_any_view_sends_no_snapshot(widget: StreamingWidget) -> None:
    """A history loaded before the widget is displayed is not built or sent for nobody; the first view's
    request gets it, and from then on resets reach the views."""
    wire = Recorded(widget)
    history = [_msg(f"user:{i}", "user", f"q{i}", "complete") for i in range(50)]
    widget.reset(history)
    assert wire.sent == []
    assert widget.settled_seq == 0  # no batch went out yet; a view's first snapshot covers seq 0
    widget._dispatch(widget, {"type": "snapshot"}, [])  # the first view asks
    assert [(m["type"], [x["id"] for x in m["messages"]]) for m in wire.sent] == [
        ("snapshot", [m["id"] for m in history])
    ]
    wire.sent.clear()
    widget.reset(history[:2])  # a view exists now: the reset reaches it
    assert [(m["type"], len(m["messages"]), m["reset"]) for m in wire.sent] == [("snapshot", 2, True)]


def test_appends_never_copy_the_text_already_streamed(widget: StreamingWidget) -> None:
    """Per-append cost must not grow with the message: an append to a 4 MB part allocates about its own size,
    not another 4 MB (a joined copy). Reading the message still shows every append in order."""
    import tracemalloc

    widget.reset([])
    widget.push(
        [{"op": "message", "message": _msg("assistant:a", "assistant", "x" * 4_000_000, "streaming")}]
    )
    widget.flush()
    tracemalloc.start()
    try:
        for i in range(200):
            widget.push(
                [{"op": "append", "message_id": "assistant:a", "part_id": "text:0", "text": f"<{i}> "}]
            )
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1_000_000, peak  # joining onto the 4 MB text even once would allocate > 4 MB
    widget.flush()
    text = widget.snapshot()[0]["parts"][0]["text"]
    assert text == "x" * 4_000_000 + "".join(f"<{i}> " for i in range(200))
    assert widget.index[0]["rev"] == 1 + len(text) - 4_000_000  # the message record, then each appended char


def test_a_long_snapshot_holds_only_its_newest_messages_and_older_ones_go_a_page_at_a_time(
    widget: StreamingWidget,
) -> None:
    """Views of a long conversation get its newest messages (a partial snapshot saying how many precede them);
    older ones go out a page at a time, on request, as of the seq of the last batch sent."""
    from hermes_notebook.widgets._stream import OLDER_PAGE_MESSAGES, SNAPSHOT_FIRST_MESSAGES

    n = SNAPSHOT_FIRST_MESSAGES + OLDER_PAGE_MESSAGES + 50
    history = [_msg(f"user:{i}", "user", f"q{i}", "complete") for i in range(n)]
    widget.reset(history)
    wire = Recorded(widget)
    widget._dispatch(widget, {"type": "snapshot"}, [])
    [first] = wire.sent
    assert first["partial"] is True and first["older"] == n - SNAPSHOT_FIRST_MESSAGES and "reset" not in first
    assert [m["id"] for m in first["messages"]] == [m["id"] for m in history[-SNAPSHOT_FIRST_MESSAGES:]]
    assert set(first["revs"]) == {m["id"] for m in first["messages"]}
    oldest_held = first["messages"][0]["id"]
    widget.push([{"op": "message", "message": _msg("user:new", "user", "more?", "complete")}])  # pending
    widget._dispatch(widget, {"type": "older", "before": oldest_held}, [])
    batch, page = wire.sent[1:]
    assert batch["type"] == "changes" and page["type"] == "older"  # pending changes go out first
    assert page["seq"] == batch["seq"] and page["before"] == oldest_held and page["older"] == 50
    assert [m["id"] for m in page["messages"]] == [m["id"] for m in history[50:-SNAPSHOT_FIRST_MESSAGES]]
    assert page["revs"] == {e["id"]: e["rev"] for e in widget.index[50 : -SNAPSHOT_FIRST_MESSAGES - 1]}
    widget._dispatch(widget, {"type": "older", "before": page["messages"][0]["id"]}, [])
    assert [m["id"] for m in wire.sent[-1]["messages"]] == [m["id"] for m in history[:50]]
    assert wire.sent[-1]["older"] == 0
    widget._dispatch(widget, {"type": "older", "before": "user:gone"}, [])  # e.g. a reset came in between
    assert wire.sent[-1]["messages"] == [] and wire.sent[-1]["older"] == 0
    sent = len(wire.sent)
    widget.reset(history)  # a reset of a long conversation: its newest messages, marked as a reset
    assert [(m.get("partial"), m.get("reset"), len(m["messages"])) for m in wire.sent[sent:]] == [
        (True, True, SNAPSHOT_FIRST_MESSAGES)
    ]
    widget.reset(history[:3])
    assert [(m.get("partial"), len(m["messages"])) for m in wire.sent[sent + 1 :]] == [
        (None, 3)
    ]  # short: all of it
    widget._dispatch(widget, {"type": "older", "before": 7}, [])  # checked like every browser message
    assert len(wire.sent) == sent + 2 and "before must be text" in widget.notice


def test_a_live_message_kept_across_a_reset_keeps_appends_made_meanwhile(widget: StreamingWidget) -> None:
    """Chat's history re-fetch keeps a live reply as the same object; appends that arrive between reading it
    and the reset (queued, not joined yet) are still in it afterwards, and its rev carries on."""
    widget.reset([])
    widget.push([{"op": "message", "message": _msg("assistant:a", "assistant", "", "streaming")}])
    widget.push([{"op": "append", "message_id": "assistant:a", "part_id": "text:0", "text": "ab "}])
    live = list(widget._store.values())  # what Chat._apply_history keeps
    widget.push([{"op": "append", "message_id": "assistant:a", "part_id": "text:0", "text": "c "}])
    rev = widget.index[0]["rev"]
    widget.reset([_msg("user:1", "user", "q", "complete"), *live])
    assert [m["parts"][0]["text"] for m in widget.snapshot()] == ["q", "ab c "]
    assert widget.index[1]["rev"] == rev
