"""Event parsing from real Dashboard frames and API Server run SSE objects (pure, no servers, no event
loop)."""

from __future__ import annotations

import dataclasses
import json
import re

import pytest

from hermes_notebook.turns.events import (
    DASHBOARD_EVENT_TYPES,
    DASHBOARD_TURN_EVENT_TYPES,
    KNOWN_EVENT_TYPES,
    RUN_EVENT_TYPES,
    TERMINAL_EVENT_TYPES,
    Event,
)
from tests.helpers import FIXTURES

WS_CAPTURES = ["ws_prompts.jsonl", "ws_DANGER_timeout.jsonl"]
RUN_CAPTURES = sorted(p.name for p in FIXTURES.glob("api_run_*.txt"))
_DATA = re.compile(r"data: (\{.*\})\s*$")


def _ws_frames(name: str) -> list[dict]:
    records = [json.loads(line) for line in (FIXTURES / name).read_text().splitlines() if line.strip()]
    return [r["frame"] for r in records if r["dir"] == "recv"]


def _run_objects(name: str) -> list[dict]:
    out = []
    for line in (FIXTURES / name).read_text().splitlines():
        m = _DATA.search(line)
        if m:
            out.append(json.loads(m.group(1)))
    return out


@pytest.mark.parametrize("name", WS_CAPTURES)
def test_dashboard_frames_parse_to_events_and_replies_to_none(name: str) -> None:
    """Every captured event frame becomes an Event with a known type; JSON-RPC replies become None."""
    frames = _ws_frames(name)
    events = [Event.from_dashboard_frame(f) for f in frames]
    for frame, event in zip(frames, events, strict=True):
        if frame.get("method") == "event":
            assert event is not None
            assert event.type == frame["params"]["type"]
            assert event.dialect == "dashboard" and event.run_id is None
            assert event.type in DASHBOARD_EVENT_TYPES
        else:
            assert event is None
    assert sum(e is not None for e in events) > 10


def test_dashboard_envelope_quirks_are_normalised() -> None:
    """gateway.ready has no session_id, message.start has no payload, and skin.changed's "" sid becomes
    None."""
    frames = _ws_frames("ws_prompts.jsonl")
    ready = Event.from_dashboard_frame(frames[0])
    assert ready is not None and ready.type == "gateway.ready" and ready.session_id is None
    assert "skin" in ready.payload
    start = next(e for e in map(Event.from_dashboard_frame, frames) if e and e.type == "message.start")
    assert start.payload == {} and start.session_id == "ac585278"
    skin = Event.from_dashboard_frame(
        {
            "jsonrpc": "2.0",
            "method": "event",
            "params": {"type": "skin.changed", "session_id": "", "payload": {}},
        }
    )
    assert skin is not None and skin.session_id is None


@pytest.mark.parametrize(
    "obj",
    [
        None,
        [],
        "event",
        {"jsonrpc": "2.0", "id": "r1", "result": {"status": "streaming"}},
        {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "parse error"}},
        {"jsonrpc": "2.0", "method": "event"},
        {"jsonrpc": "2.0", "method": "event", "params": []},
        {"jsonrpc": "2.0", "method": "event", "params": {"type": 3}},
        {"jsonrpc": "2.0", "method": "session.create", "params": {"type": "message.start"}},
    ],
)
def test_non_events_and_malformed_frames_give_none(obj: object) -> None:
    """Replies, requests and malformed frames are not events, and parsing them never raises."""
    assert Event.from_dashboard_frame(obj) is None


def test_non_mapping_payload_becomes_empty() -> None:
    """A payload that is not an object is replaced by an empty mapping, so handlers can always .get()."""
    ev = Event.from_dashboard_frame(
        {"method": "event", "params": {"type": "message.delta", "session_id": "s", "payload": ["x"]}}
    )
    assert ev is not None and ev.payload == {}


@pytest.mark.parametrize("name", RUN_CAPTURES)
def test_run_sse_objects_parse_to_run_events(name: str) -> None:
    """Every captured run SSE object becomes a "run" Event without the envelope keys, ending at a terminal
    one."""
    objs = _run_objects(name)
    assert objs, name
    events = [Event.from_run_sse(o) for o in objs]
    for obj, ev in zip(objs, events, strict=True):
        assert ev is not None
        assert ev.dialect == "run" and ev.session_id is None
        assert ev.type == obj["event"] and ev.type in RUN_EVENT_TYPES
        assert ev.run_id == obj["run_id"] and ev.run_id.startswith("run_")
        assert not {"event", "run_id", "timestamp"} & set(ev.payload)
        assert {k: v for k, v in obj.items() if k not in ("event", "run_id", "timestamp")} == dict(ev.payload)
    assert events[-1].terminal
    assert not any(e.terminal for e in events[:-1])


def test_run_sse_payload_fields() -> None:
    """The run dialect keeps its own field names (delta, tool/preview, duration/error) for the turn model."""
    events = [Event.from_run_sse(o) for o in _run_objects("api_run_RUN.txt")]
    started = next(e for e in events if e and e.type == "tool.started")
    completed = next(e for e in events if e and e.type == "tool.completed")
    assert started.payload == {"tool": "terminal", "preview": "echo run-ok + 1 command"}
    assert completed.payload == {"tool": "terminal", "duration": 0.017, "error": False}
    delta = next(e for e in events if e and e.type == "message.delta")
    assert delta.payload == {"delta": "\n\nCommand "}


@pytest.mark.parametrize("obj", [None, [], {"run_id": "run_x"}, {"event": 5}])
def test_run_sse_without_event_name_gives_none(obj: object) -> None:
    """An SSE object without a string "event" key is not an event."""
    assert Event.from_run_sse(obj) is None


def test_event_is_frozen_slotted_and_constructors_agree() -> None:
    """Events are immutable and slotted, and the fast parser builds the same value as the dataclass
    __init__."""
    frame = {
        "jsonrpc": "2.0",
        "method": "event",
        "params": {"type": "message.delta", "session_id": "s1", "payload": {"text": "hi"}},
    }
    parsed = Event.from_dashboard_frame(frame)
    built = Event("message.delta", {"text": "hi"}, session_id="s1")
    assert parsed == built and type(parsed) is Event
    assert not hasattr(parsed, "__dict__")
    with pytest.raises(dataclasses.FrozenInstanceError):
        parsed.type = "x"  # type: ignore[misc]
    run = Event.from_run_sse({"event": "run.cancelled", "run_id": "run_1", "timestamp": 1.0})
    assert run == Event("run.cancelled", {}, run_id="run_1", dialect="run")


def test_known_and_terminal_type_sets() -> None:
    """The type sets cover the turn events per dialect and name exactly the events that end a turn."""
    assert KNOWN_EVENT_TYPES["dashboard"] is DASHBOARD_EVENT_TYPES
    assert KNOWN_EVENT_TYPES["run"] is RUN_EVENT_TYPES
    assert DASHBOARD_TURN_EVENT_TYPES < DASHBOARD_EVENT_TYPES
    assert {
        "message.start",
        "tool.complete",
        "approval.request",
        "clarify.request",
    } <= DASHBOARD_TURN_EVENT_TYPES
    assert "session.info" not in DASHBOARD_TURN_EVENT_TYPES
    assert TERMINAL_EVENT_TYPES["dashboard"] == {"message.complete", "error"}
    # run.interrupted: newer API Servers (the gateway restarted before the run settled)
    assert TERMINAL_EVENT_TYPES["run"] == {"run.completed", "run.failed", "run.cancelled", "run.interrupted"}
    assert Event("error", {"message": "x"}).terminal
    assert not Event("message.delta", {"text": "x"}).terminal
