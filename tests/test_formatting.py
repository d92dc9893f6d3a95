"""What a person reads: usage lines, times in session tables (hermes_notebook/formatting.py)."""

from __future__ import annotations

import time
from datetime import datetime

import pytest

from hermes_notebook.formatting import ago, local_time, table_cell, usage_details, usage_line

# message.complete usage as Hermes 0.19.0's Dashboard sends it (session-cumulative).
DASHBOARD_USAGE = {
    "model": "fake-model",
    "input": 10,
    "output": 5,
    "reasoning": 0,
    "prompt": 10,
    "completion": 5,
    "total": 15,
    "calls": 1,
    "context_used": 10,
    "context_max": 200000,
    "context_percent": 0,
    "compressions": 0,
    "active_subagents": 0,
}


def test_dashboard_usage_reads_as_tokens_and_context_not_raw_keys() -> None:
    """The Dashboard's usage reads as tokens and a context fill; its raw key names never show."""
    line = usage_line(DASHBOARD_USAGE)
    assert line == "session: 10 in · 5 out tokens · context 10 / 200,000 (0%)"  # running totals say so
    turn = {**DASHBOARD_USAGE, "input": 30, "turn": {"input": 20, "output": 10, "reasoning": 0, "calls": 2}}
    assert usage_line(turn) == "20 in · 10 out tokens · context 10 / 200,000 (0%)"  # a reply's own
    for raw in ("context_used", "context_max", "compressions", "active_subagents"):
        assert raw not in line
    assert (
        usage_details(DASHBOARD_USAGE)
        == "model fake-model, total 15, calls 1, compressions 0, active subagents 0"
    )


def test_api_usage_and_cost() -> None:
    """API Server usage names, reasoning tokens and a reported cost read the same way."""
    assert (
        usage_line({"input_tokens": 1200, "output_tokens": 34, "total_tokens": 1234})
        == "1,200 in · 34 out tokens"
    )
    assert usage_line({"prompt_tokens": 3, "completion_tokens": 4, "reasoning_tokens": 2}) == (
        "3 in · 4 out · 2 reasoning tokens"
    )
    assert (
        usage_line({"input": 1, "output": 2, "estimated_cost_usd": 0.00421})
        == "1 in · 2 out tokens · $0.0042"
    )
    assert usage_line({"cost_usd": 1.5}) == "$1.50"
    assert usage_line({"context_used": 50_000, "context_max": 200_000}) == "context 50,000 / 200,000 (25%)"
    assert usage_line(None) == usage_line({}) == usage_line("nope") == ""


def test_ago() -> None:
    """How long ago, in the words a person uses, for the past and the future."""
    assert [ago(s) for s in (5, 90, 300, 7200, 86400, 3 * 86400)] == [
        "just now",
        "2 min ago",
        "5 min ago",
        "2 h ago",
        "1 day ago",
        "3 days ago",
    ]
    assert ago(-600) == "in 10 min"


def test_local_time_from_epoch_float_iso_and_milliseconds() -> None:
    """An epoch float (as Hermes stores started_at), milliseconds and ISO all read as local time + ago."""
    now = time.time()
    started = now - 5 * 60 - 3.25  # an epoch float, as Hermes stores started_at
    expected = datetime.fromtimestamp(started).strftime("%Y-%m-%d %H:%M")
    assert local_time(started, now) == f"{expected} (5 min ago)"
    assert local_time(int(started * 1000), now) == f"{expected} (5 min ago)"
    iso = datetime.fromtimestamp(started).astimezone().isoformat()
    assert local_time(iso, now) == f"{expected} (5 min ago)"
    assert local_time(None) == ""
    assert local_time("not a time") == "not a time"


@pytest.mark.parametrize("column", ["started_at", "last_active", "next_run_at"])
def test_table_cell_formats_time_columns(column: str) -> None:
    """Time columns of the session and job tables show local time, never a raw float."""
    now = 1_800_000_000.0
    cell = table_cell(column, now - 120.5, now)
    assert cell.endswith("(2 min ago)") and "." not in cell


def test_table_cell_cuts_long_text() -> None:
    """Other cells are text, cut at 60 characters."""
    assert table_cell("preview", "x" * 100) == "x" * 57 + "..."
    assert table_cell("title", None) == ""
    assert table_cell("message_count", 3) == "3"


def test_static_transcript_shows_the_same_usage_line() -> None:
    """Saved notebooks (text/plain and HTML transcripts) read usage the same way, the rest in a hover
    title."""
    from hermes_notebook.render import transcript_html, transcript_text

    message = {
        "id": "assistant:t",
        "role": "assistant",
        "status": "complete",
        "error": None,
        "usage": DASHBOARD_USAGE,
        "parts": [{"id": "text:0", "kind": "text", "text": "hi"}],
    }
    assert "[session: 10 in · 5 out tokens · context 10 / 200,000 (0%)]" in transcript_text([message])
    html = transcript_html([message])
    assert 'title="model fake-model, total 15, calls 1, compressions 0, active subagents 0"' in html
    assert ">session: 10 in · 5 out tokens · context 10 / 200,000 (0%)</div>" in html
    assert "context_used" not in html
