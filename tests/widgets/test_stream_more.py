"""The short wire form of a streaming batch: ``{"type": "more", "seq", "text"}``.

While a reply streams, nearly every batch is one append to the part the batch before it appended to; sending
the ids and keys each time cost a third of the text again at 10 KB/s. The protocol is docs/architecture.md,
"Widget comm protocol"; the view's decoder is js/src/chat/wire.ts (its twin here is
``tests.helpers.MoreReader``).
"""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from hermes_notebook.widgets._stream import StreamingWidget
from tests.helpers import expand_more

MID = "assistant:9f3c2a7e-5d1b-4c8e-a0f2-6b7d8e9f0a1b"  # ids as long as the real ones


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


def _append(text: str, part: str = "text:0") -> dict[str, Any]:
    return {"op": "append", "message_id": MID, "part_id": part, "text": text}


@pytest.fixture
def widget() -> Any:
    w = StreamingWidget(mode="turn")
    w.sent = []
    w.send = lambda content, buffers=None: w.sent.append(json.loads(json.dumps(content)))
    w.push(
        [
            {
                "op": "message",
                "message": {
                    "id": MID,
                    "role": "assistant",
                    "status": "streaming",
                    "parts": [_part("text:0", "")],
                    "usage": None,
                    "error": None,
                },
            }
        ]
    )
    w.flush()
    yield w
    w.close()


def _stream(widget: StreamingWidget, chunks: list[str], part: str = "text:0") -> None:
    for chunk in chunks:  # one batch each, as at 30 batches a second
        widget.push([_append(chunk, part)])
        widget.flush()


def test_appends_after_the_first_go_as_more_and_read_back_to_the_same_text(widget: Any) -> None:
    """The first batch names the part; the rest carry only seq and text (non-ASCII and astral characters
    too)."""
    _stream(widget, ["Hello, ", "wor ", "ld ✓ 𝔘 "])  # each ends a word: none is held back for the scrubber
    sent = widget.sent[1:]
    assert sent[0]["type"] == "changes" and sent[0]["changes"] == [_append("Hello, ")]
    assert sent[1:] == [
        {"type": "more", "seq": sent[0]["seq"] + 1, "text": "wor "},
        {"type": "more", "seq": sent[0]["seq"] + 2, "text": "ld ✓ 𝔘 "},
    ]
    text = "".join(
        c["text"]
        for m in expand_more(widget.sent)
        if m["type"] == "changes"
        for c in m["changes"]
        if c["op"] == "append"
    )
    assert text == "Hello, wor ld ✓ 𝔘 " == widget.snapshot()[0]["parts"][0]["text"]


def test_a_snapshot_ends_the_run_so_a_view_starting_from_it_can_place_every_batch(widget: Any) -> None:
    """A view created mid-stream starts from a snapshot: the next append after it names its part again."""
    _stream(widget, ["one ", "two "])
    widget._dispatch(widget, {"type": "snapshot"}, [])  # a new view asks
    _stream(widget, ["three ", "four "])
    after = widget.sent[[m["type"] for m in widget.sent].index("snapshot") :]
    assert [m["type"] for m in after] == ["snapshot", "changes", "more"]
    # A view that starts from this snapshot reads the rest without the batches before it.
    assert expand_more(after)[1]["changes"] == [_append("three ")]
    assert expand_more(after)[2]["changes"] == [_append("four ")]


def test_another_part_a_mixed_batch_or_a_settling_batch_goes_in_full(widget: Any) -> None:
    """Only a lone append to the very part the batch before ended on is short; a settling batch keeps its
    index."""
    widget.push([{"op": "part", "message_id": MID, "part": _part("text:1", "")}])
    widget.flush()
    _stream(widget, ["a "], part="text:0")
    _stream(widget, ["b "], part="text:1")  # another part: named
    _stream(widget, ["c "], part="text:1")  # same part as the batch before: short
    widget.push(
        [
            _append("d ", "text:1"),
            {"op": "finish", "message_id": MID, "status": "complete", "usage": None, "error": None},
        ]
    )
    widget.flush()
    _stream(widget, ["e "], part="text:1")  # the batch before ended with a finish, not an append: named
    kinds = [(m["type"], m.get("text")) for m in widget.sent[2:]]
    assert kinds == [
        ("changes", None),
        ("changes", None),
        ("more", "c "),
        ("changes", None),
        ("changes", None),
    ]
    assert "index" in widget.sent[-2]  # the settling batch carries the entry, so it is never short


def test_a_reply_streamed_at_10_kb_per_second_costs_at_most_1_2x_its_size(widget: Any) -> None:
    """At 30 batches a second, 10 KB/s means ~333 characters a batch: the envelope must stay small beside
    it."""
    rnd = random.Random(5)
    words = 'the model streams `code` and "quotes"\nwith newlines, tabs\tand unicode: café ✓'.split(" ")
    reply = (
        " ".join(rnd.choice(words) for _ in range(60_000))[:300_000] + " "
    )  # the last word is not held back
    widget.bytes_sent = 0
    _stream(widget, [reply[i : i + 333] for i in range(0, len(reply), 333)])
    assert widget.snapshot()[0]["parts"][0]["text"] == reply
    ratio = widget.bytes_sent / len(reply.encode())
    print(f"10 KB/s: {ratio:.3f}x over {len(widget.sent) - 1} batches")
    assert ratio <= 1.2, ratio
