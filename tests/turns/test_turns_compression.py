"""Context compression in the pure turn model, fed with real Dashboard captures
(tests/fixtures/*compress.jsonl).

The captures hold four warm-up turns, a ``session.compress`` call, a turn after it and a ``BIGCONTEXT`` turn
in which Hermes compacts the context mid-turn (0.19.0 compacts; the newer server announces it, then refuses).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hermes_notebook.turns import TurnFolder, apply_changes, fold_history
from hermes_notebook.turns.compression import (
    BETWEEN_TURNS,
    COMPACTED,
    REFUSED,
    UNANNOUNCED,
    compress_result_text,
    compressions_of,
)
from hermes_notebook.turns.events import Event
from tests.helpers import FIXTURES

CAPTURES = {"0.19.0": FIXTURES / "ws_compress.jsonl", "newer": FIXTURES / "newer" / "newer_compress.jsonl"}


def _scenarios(path: Path) -> dict[str, list[Any]]:
    """Split a capture at its notes: every session event (status.update and session.info included) and the
    ``session.compress`` answer, in wire order."""
    out: dict[str, list[Any]] = {}
    current = out.setdefault("", [])
    for line in path.read_text().splitlines():
        record = json.loads(line)
        frame = record["frame"]
        if record["dir"] == "note":
            current = out.setdefault(frame["note"].removeprefix("--- "), [])
        elif record["dir"] == "recv" and "result" in frame:
            current.append(frame["result"])
        elif record["dir"] == "recv":
            event = Event.from_dashboard_frame(frame)
            assert event is not None
            current.append(event)
    return out


def _events(items: list[Any]) -> list[Event]:
    return [i for i in items if isinstance(i, Event)]


def _fold(folder: TurnFolder, events: list[Event]) -> list[dict[str, Any]]:
    changes: list[dict[str, Any]] = []
    for event in events:
        changes.extend(folder.apply(event))  # type: ignore[arg-type]
    return changes


def _replayed(changes: list[dict[str, Any]], message_id: str) -> dict[str, Any]:
    return apply_changes({}, changes)[message_id]


@pytest.mark.parametrize("server", sorted(CAPTURES))
def test_mid_turn_compaction_is_a_marker_and_the_turn_streams_on_below_it(server: str) -> None:
    """The BIGCONTEXT turn: tool, then the compaction marker, then the reply in a new text part after it."""
    events = _events(_scenarios(CAPTURES[server])["BIGCONTEXT mid-turn auto-compaction"])
    assert any(e.type == "status.update" and e.payload.get("kind") == "compacting" for e in events)
    folder = TurnFolder("big", compressions=1)
    changes = _fold(folder, events)
    message = folder.message
    assert message.status == "complete"
    assert [p.kind for p in message.parts] == ["tool", "marker", "text"]
    marker, text = message.parts[1], message.parts[2]
    assert marker.id == "marker:1" and text.id == "text:2"
    assert marker.text == (COMPACTED if server == "0.19.0" else REFUSED)  # newer: announced, then refused
    assert text.text == "Command output:\n```\ncompacted\n```"
    # The text streamed after the marker: its part record comes after the marker's, and appends follow it.
    ops = [(c["op"], c.get("part", {}).get("id") or c.get("part_id")) for c in changes]
    assert ops.index(("part", "marker:1")) < ops.index(("part", "text:2"))
    assert _replayed(changes, message.id) == message.to_dict()


@pytest.mark.parametrize("server", sorted(CAPTURES))
def test_a_compaction_the_turn_was_not_told_about_shows_from_the_usage_counter(server: str) -> None:
    """Without the status.update (e.g. another client's), usage.compressions growing still adds a marker."""
    events = [
        e
        for e in _events(_scenarios(CAPTURES[server])["BIGCONTEXT mid-turn auto-compaction"])
        if e.type != "status.update"
    ]
    folder = TurnFolder("quiet", compressions=1)
    changes = _fold(folder, events)
    message = folder.message
    assert [p.kind for p in message.parts] == ["tool", "text", "marker"]
    assert message.parts[-1].text == UNANNOUNCED and message.status == "complete"
    assert _replayed(changes, message.id) == message.to_dict()


@pytest.mark.parametrize("server", sorted(CAPTURES))
def test_plain_turns_get_no_marker(server: str) -> None:
    """Warm-up turns (counter unchanged) and a turn whose baseline is unknown show no marker."""
    scenario = _events(_scenarios(CAPTURES[server])["warm-up turns"])
    first = scenario[: next(i for i, e in enumerate(scenario) if e.type == "message.complete") + 1]
    assert [p.kind for p in _folded(first, compressions=0).parts] == ["text"]
    after = _events(_scenarios(CAPTURES[server])["turn after compress"])
    assert [p.kind for p in _folded(after, compressions=None).parts] == ["text"]


def _folded(events: list[Event], *, compressions: int | None) -> Any:
    folder = TurnFolder("t", compressions=compressions)
    _fold(folder, events)
    return folder.message


@pytest.mark.parametrize(
    ("server", "expected"),
    [
        ("0.19.0", "Context compressed: 8 → 6 messages (~14,842 → ~15,449 tokens)"),
        ("newer", "Context compression removed nothing (8 messages kept)"),
    ],
)
def test_session_compress_answer_becomes_the_next_turns_first_part(server: str, expected: str) -> None:
    """The session.compress answer gives the marker text; the next turn opens with it and streams below."""
    scenarios = _scenarios(CAPTURES[server])
    (answer,) = [i for i in scenarios["session.compress between turns"] if isinstance(i, dict)]
    text = compress_result_text(answer)
    assert text == expected
    assert compressions_of(answer["usage"]) == 1
    folder = TurnFolder("next", compressions=1)
    changes = folder.add_marker(text)
    changes += _fold(folder, _events(scenarios["turn after compress"]))
    message = folder.message
    assert [(p.id, p.kind) for p in message.parts] == [("marker:1", "marker"), ("text:1", "text")]
    assert message.parts[0].text == expected and message.status == "complete"
    assert message.parts[1].text.startswith("Hello from the scripted model")
    assert _replayed(changes, message.id) == message.to_dict()


def test_compress_answer_variants_and_bad_input() -> None:
    """Aborted, compute-host (no counts) and malformed answers still give a plain sentence."""
    assert (
        compress_result_text({"status": "aborted", "before_messages": 9})
        == "Context compression failed: 9 messages kept"
    )
    assert compress_result_text({"status": "compressed", "turn_isolation": True}) == "Context compressed"
    assert (
        compress_result_text({"before_messages": 10, "after_messages": 8})
        == "Context compressed: 10 → 8 messages"
    )
    assert compress_result_text(None) == "Context compressed"
    assert compress_result_text({"before_messages": "<b>", "after_messages": -1}) == "Context compressed"
    assert compressions_of({"compressions": True}) is None and compressions_of("x") is None
    assert compressions_of({"compressions": 3}) == 3


def test_add_marker_rules() -> None:
    """A blank marker or one after the end adds nothing; a marker is never trimmed or cancelled at the end."""
    folder = TurnFolder("m")
    assert folder.add_marker("   ") == []
    changes = folder.add_marker(BETWEEN_TURNS)
    assert [c["op"] for c in changes] == ["message", "part"]
    changes += folder.finish("interrupted")
    assert folder.message.parts[0].text == BETWEEN_TURNS and folder.message.status == "interrupted"
    assert folder.add_marker("late") == []
    assert _replayed(changes, folder.message_id) == folder.message.to_dict()


def test_history_shows_the_stored_compaction_summary_as_a_marker() -> None:
    """A summary row (0.19.0 stores it as an assistant row leading the segment; the handoff can also be a user
    row) folds into the live marker, and the conversation after it is unchanged."""
    rows = [
        {
            "id": 7,
            "role": "assistant",
            "content": "[PRIOR CONTEXT — for reference only; not a new message]\n## Goal",
        },
        {"id": 8, "role": "user", "content": "hello number 3"},
        {"id": 9, "role": "assistant", "content": "Hello from the scripted model. You said: hello number 3"},
        {
            "id": 10,
            "role": "user",
            "content": "[CONTEXT COMPACTION — REFERENCE ONLY] Earlier turns were compacted",
        },
        {"id": 11, "role": "user", "content": "after"},
        {"id": 12, "role": "assistant", "content": "Hello from the scripted model. You said: after"},
    ]
    messages = fold_history(rows)
    shape = [(m.role, [(p.kind, p.text) for p in m.parts]) for m in messages]
    assert shape == [
        ("assistant", [("marker", COMPACTED)]),
        ("user", [("text", "hello number 3")]),
        (
            "assistant",
            [("text", "Hello from the scripted model. You said: hello number 3"), ("marker", COMPACTED)],
        ),
        ("user", [("text", "after")]),
        ("assistant", [("text", "Hello from the scripted model. You said: after")]),
    ]
