"""Coalesced delivery of change records (no servers)."""

from __future__ import annotations

import asyncio

import pytest

from hermes_notebook.widgets.coalesce import Coalescer, merge_appends


def _append(text: str, part: str = "text:0", message: str = "assistant:t") -> dict:
    return {"op": "append", "message_id": message, "part_id": part, "text": text}


def test_merge_appends_joins_runs_for_the_same_part() -> None:
    """Consecutive appends to one part become one record; other records keep their place."""
    patch = {
        "op": "patch",
        "message_id": "assistant:t",
        "part_id": "tool:1",
        "fields": {"status": "completed"},
    }
    merged = merge_appends(
        [
            _append("a"),
            _append("b"),
            patch,
            _append("c"),
            _append("d", part="text:1"),
            _append("e", part="text:1"),
        ]
    )
    assert merged == [_append("ab"), patch, _append("c"), _append("de", part="text:1")]


def test_merge_appends_does_not_mutate_input() -> None:
    """Merging copies records instead of editing the caller's dicts."""
    first = _append("a")
    merge_appends([first, _append("b")])
    assert first["text"] == "a"


async def test_rate_is_capped_and_nothing_is_lost() -> None:
    """Thousands of deltas in half a second arrive complete, in at most ~30 batches per second."""
    loop = asyncio.get_running_loop()
    batches: list[tuple[int, list[dict]]] = []
    coalescer = Coalescer(lambda seq, changes: batches.append((seq, changes)), loop=loop, max_rate=30)
    started = loop.time()
    sent = []
    while loop.time() - started < 0.5:
        for _ in range(20):
            text = f"{len(sent)},"
            sent.append(text)
            coalescer.push([_append(text)])
        await asyncio.sleep(0.001)
    await asyncio.sleep(0.1)
    coalescer.flush()
    elapsed = loop.time() - started
    assert len(batches) <= elapsed * 30 + 2
    assert [seq for seq, _ in batches] == list(range(1, len(batches) + 1))
    received = "".join(change["text"] for _, changes in batches for change in changes)
    assert received == "".join(sent)


async def test_first_change_after_quiet_period_is_sent_at_once() -> None:
    """A lone change is not held back for a whole window."""
    loop = asyncio.get_running_loop()
    got = asyncio.Event()
    coalescer = Coalescer(lambda seq, changes: got.set(), loop=loop, max_rate=1)  # 1 s window
    coalescer.push([_append("x")])
    await asyncio.wait_for(got.wait(), timeout=0.5)


def test_snapshot_seq_flushes_pending() -> None:
    """Taking a snapshot flushes buffered changes first so the view can drop them by seq."""
    loop = asyncio.new_event_loop()
    try:
        batches: list[int] = []
        coalescer = Coalescer(lambda seq, changes: batches.append(seq), loop=loop)
        coalescer.push([_append("x")])
        assert coalescer.snapshot_seq() == 1
        assert batches == [1]
    finally:
        loop.close()


def test_rejects_nonpositive_rate() -> None:
    """A zero rate is a usage error, not a division by zero later."""
    loop = asyncio.new_event_loop()
    try:
        with pytest.raises(ValueError, match="max_rate"):
            Coalescer(lambda seq, changes: None, loop=loop, max_rate=0)
    finally:
        loop.close()
