"""The pure turn model, driven by the real wire captures in tests/fixtures (no servers, no event loop)."""

from __future__ import annotations

import ast
import json
import re
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest

import hermes_notebook.turns.events as events_module
import hermes_notebook.turns.model as turns_module
from hermes_notebook.turns import (
    REDACTED,
    TransformContext,
    TurnFolder,
    apply_changes,
    fold_history,
    history_events,
    user_message,
)
from hermes_notebook.turns.events import DASHBOARD_TURN_EVENT_TYPES, Event
from hermes_notebook.turns.store import MessageStore
from tests.helpers import FIXTURES

_DATA = re.compile(r"data: (\{.*\})\s*$")
Item = Event | tuple[str, dict[str, Any]]  # an event, or a respond request the client sent ("method", params)
_RESPONDS = {"approval.respond", "clarify.respond", "sudo.respond", "secret.respond"}


# -- capture loading
# ---------------------------------------------------------------------------------------------


def _ws_scenarios(name: str) -> dict[str, list[Item]]:
    """Split a WS capture at its notes; keep the turn events and the respond requests, in wire order."""
    scenarios: dict[str, list[Item]] = {}
    current: list[Item] = scenarios.setdefault("", [])
    for line in (FIXTURES / name).read_text().splitlines():
        record = json.loads(line)
        frame = record["frame"]
        if record["dir"] == "note":
            current = scenarios.setdefault(frame["note"], [])
        elif record["dir"] == "send":
            if frame.get("method") in _RESPONDS:
                current.append((frame["method"], frame["params"]))
        else:
            event = Event.from_dashboard_frame(frame)
            if event is not None and event.type in DASHBOARD_TURN_EVENT_TYPES:
                current.append(event)
    return scenarios


WS = _ws_scenarios("ws_prompts.jsonl")


def ws(prefix: str) -> list[Item]:
    """The ws_prompts.jsonl scenario whose note starts with ``--- <prefix>``."""
    (items,) = [v for k, v in WS.items() if k.startswith(f"--- {prefix}")]
    return items


def _events(items: Iterable[Item]) -> list[Event]:
    return [i for i in items if isinstance(i, Event)]


def run_events(name: str) -> list[Event]:
    """The run events of an api_run_*.txt capture."""
    out = []
    for line in (FIXTURES / name).read_text().splitlines():
        m = _DATA.search(line)
        if m:
            event = Event.from_run_sse(json.loads(m.group(1)))
            assert event is not None
            out.append(event)
    return out


def history_rows() -> list[dict[str, Any]]:
    data = json.loads((FIXTURES / "ws_rest_history.json").read_text())
    return data["/api/sessions/20261202_103140_fee333/messages"]["body"]["messages"]


def replay(
    items: Iterable[Item], turn_id: str = "t1", **kwargs: Any
) -> tuple[TurnFolder, list[dict[str, Any]]]:
    """Fold a capture; respond requests become folder.answer() calls, as the view would make them.

    After every step the change stream applied so far must equal the folder's own snapshot.
    """
    folder = TurnFolder(turn_id, **kwargs)
    changes: list[dict[str, Any]] = []
    state: dict[str, dict[str, Any]] = {}
    for item in items:
        if isinstance(item, Event):
            out = folder.apply(item)
        else:
            method, params = item
            if method == "approval.respond":  # no request id on the wire: FIFO, like the server
                pending = [i for i in folder.pending() if i.kind == "approval"]
                out = folder.answer(pending[0].request_id, params["choice"])
            else:
                value = params.get("answer", params.get("password", params.get("value")))
                out = folder.answer(params["request_id"], value)
        changes.extend(out)
        apply_changes(state, out)
        if folder.message_id in state:
            assert state[folder.message_id] == folder.message.to_dict()
    return folder, changes


def parts(folder: TurnFolder) -> list[dict[str, Any]]:
    return folder.message.to_dict()["parts"]


def ids(folder: TurnFolder) -> list[str]:
    return [p["id"] for p in parts(folder)]


def part(folder: TurnFolder, pid: str) -> dict[str, Any]:
    return next(p for p in parts(folder) if p["id"] == pid)


def _upto(items: list[Item], etype: str) -> list[Item]:
    """The items up to and including the first event of ``etype``."""
    i = next(n for n, it in enumerate(items) if isinstance(it, Event) and it.type == etype)
    return items[: i + 1]


def _complete(status: str, text: str = "") -> Event:
    return Event("message.complete", {"text": text, "usage": None, "status": status})


# -- purity
# ------------------------------------------------------------------------------------------------------

FORBIDDEN = {"asyncio", "httpx", "httpx_sse", "websockets", "IPython", "ipywidgets", "anywidget", "traitlets"}


@pytest.mark.parametrize("module", [turns_module, events_module])
def test_model_modules_import_no_io_or_ui(module: Any) -> None:
    """turns.py and events.py import no event loop, network or widget library, so any layer can use them."""
    tree = ast.parse(Path(module.__file__).read_text())
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            imported.add(node.module.split(".")[0])
    assert not imported & FORBIDDEN, imported & FORBIDDEN


# -- Dashboard turns from ws_prompts.jsonl
# -----------------------------------------------------------------------


def test_plain_turn() -> None:
    """A plain turn is one text:0 part; spinner text and the reasoning.available copy are ignored."""
    folder, changes = replay(ws("plain"))
    msg = folder.message.to_dict()
    assert msg["id"] == "assistant:t1" and msg["role"] == "assistant"
    assert msg["status"] == "complete" and msg["error"] is None
    assert msg["usage"]["total"] == 15 and msg["usage"]["model"] == "fake-model"
    assert [(p["id"], p["kind"], p["text"]) for p in msg["parts"]] == [
        ("text:0", "text", "Hello from the fake model! You said: hello dashboard")
    ]
    assert changes[0]["op"] == "message" and changes[0]["message"]["status"] == "streaming"
    assert [c["op"] for c in changes].count("append") == 4
    assert changes[-1] == {
        "op": "finish",
        "message_id": "assistant:t1",
        "status": "complete",
        "usage": msg["usage"],
        "error": None,
    }
    assert folder.done and folder.apply(Event("message.delta", {"text": "late"})) == []


def test_think_turn_reasoning_then_text() -> None:
    """Reasoning deltas make reasoning:0 before text:0; message.complete's reasoning copy adds nothing."""
    folder, _ = replay(ws("THINK"))
    assert [(p["id"], p["kind"]) for p in parts(folder)] == [("reasoning:0", "reasoning"), ("text:0", "text")]
    assert part(folder, "reasoning:0")["text"] == "Let me think about this. Step one. Step two."
    assert part(folder, "text:0")["text"] == "I thought about it: the answer is 42."


def test_tool_turn_strips_separator_and_opens_segment_one() -> None:
    """A tool closes segment 0: the reply after it is text:1, without the server's leading "\\n\\n"."""
    folder, changes = replay(ws("RUN"))
    assert ids(folder) == ["tool:call_6e7c30808893", "text:1"]
    tool = part(folder, "tool:call_6e7c30808893")
    assert tool["kind"] == "tool" and tool["name"] == "terminal" and tool["status"] == "completed"
    assert tool["preview"] == "Running echo ws-ok + 1 command"
    assert tool["arguments"] == {"command": "echo ws-ok && pwd"}
    assert tool["result"] == {"output": "ws-ok\n<HERMES_HOME>/work", "exit_code": 0, "error": None}
    assert tool["duration"] == pytest.approx(0.40015339851379395)
    assert part(folder, "text:1")["text"] == "Command output:\n```\nws-ok\n<HERMES_HOME>/work\n```"
    first_text = next(c for c in changes if c["op"] == "part" and c["part"]["id"] == "text:1")
    assert first_text["part"]["text"] == "Command "


def test_think_call_answer_gives_reasoning0_tool_text1() -> None:
    """Real THINK reasoning frames spliced before the RUN tool round give reasoning:0, tool:<id>, text:1."""
    reasoning = [e for e in _events(ws("THINK")) if e.type == "reasoning.delta"]
    run = ws("RUN")
    folder, _ = replay(run[:1] + reasoning + run[1:])
    assert ids(folder) == ["reasoning:0", "tool:call_6e7c30808893", "text:1"]
    assert part(folder, "tool:call_6e7c30808893")["status"] == "completed"
    assert part(folder, "tool:call_6e7c30808893")["result"]["exit_code"] == 0


def test_approval_pending_then_answered_once() -> None:
    """approval.request hangs a pending interaction on the running tool; the view's answer marks it
    answered."""
    items = ws("DANGER with approval.respond choice=once")
    folder, _ = replay(_upto(items, "approval.request"))
    inter = part(folder, "tool:call_bf9d3a9cf2d0")["interaction"]
    assert inter == {
        "kind": "approval",
        "request_id": "approval-1",
        "status": "pending",
        "command": "rm -rf ./hermes-danger-demo",
        "question": None,
        "description": "recursive delete",
        "choices": ["once", "session", "always", "deny"],
        "response": None,
    }
    assert [i.request_id for i in folder.pending()] == ["approval-1"]
    folder, _ = replay(items)
    tool = part(folder, "tool:call_bf9d3a9cf2d0")
    assert tool["status"] == "completed"
    assert tool["interaction"]["status"] == "answered" and tool["interaction"]["response"] == "once"
    assert ids(folder) == ["tool:call_bf9d3a9cf2d0", "text:1"]
    assert folder.pending() == []


def test_approval_denied_tool_is_error_and_stays_answered() -> None:
    """A denied command's BLOCKED result makes the tool status error; the answered approval stays answered."""
    folder, _ = replay(ws("DANGER with approval.respond choice=deny"))
    tool = part(folder, "tool:call_6ec49cbf995b")
    assert tool["status"] == "error"
    assert tool["result"]["error"].startswith("BLOCKED: Command denied by user")
    assert tool["interaction"]["status"] == "answered" and tool["interaction"]["response"] == "deny"


def test_approval_timeout_expires_the_interaction() -> None:
    """Nobody answers (ws_DANGER_timeout.jsonl): the tool completes BLOCKED/timed out and the approval
    expires."""
    items = next(v for v in _ws_scenarios("ws_DANGER_timeout.jsonl").values() if _events(v))
    folder, _ = replay(items)
    tool = part(folder, "tool:call_4bad0cd316a7")
    assert tool["status"] == "error" and tool["duration"] == pytest.approx(5.404981374740601)
    assert tool["interaction"]["status"] == "expired" and tool["interaction"]["response"] is None
    assert folder.message.status == "complete"


def test_approval_cancelled_when_turn_is_interrupted() -> None:
    """A pending approval at an interrupted end is cancelled, and its running tool too."""
    items = _upto(ws("DANGER with approval.respond choice=deny"), "approval.request")
    folder, changes = replay([*items, _complete("interrupted")])
    tool = part(folder, "tool:call_6ec49cbf995b")
    assert tool["interaction"]["status"] == "cancelled" and tool["status"] == "cancelled"
    assert folder.message.status == "interrupted"
    assert folder.answer("approval-1", "once") == []
    assert changes[-1]["op"] == "finish" and changes[-2]["op"] == "patch"


def test_approval_without_running_tool_gets_a_synthetic_part() -> None:
    """An approval with no running tool (e.g. MCP elicitation, no choices) gets tool:approval-<n> named
    approval."""
    folder, _ = replay(
        [
            Event("message.start", {}),
            Event("message.delta", {"text": "Checking."}),
            Event("approval.request", {"command": "mcp call", "description": "elicitation"}),
        ]
    )
    assert ids(folder) == ["text:0", "tool:approval-1"]
    syn = part(folder, "tool:approval-1")
    assert syn["name"] == "approval" and syn["status"] == "running"
    assert syn["interaction"]["choices"] == ["once", "deny"]
    folder.answer("approval-1", "once")
    folder.apply(Event("message.delta", {"text": "\n\nDone."}))
    assert part(folder, "tool:approval-1")["status"] == "completed"
    assert part(folder, "tool:approval-1")["interaction"]["status"] == "answered"
    assert ids(folder) == ["text:0", "tool:approval-1", "text:1"]


@pytest.mark.parametrize("dialect", ["dashboard", "run"])
@pytest.mark.parametrize("given", [{}, {"choices": []}, {"choices": None}])
def test_an_approval_without_choices_lists_the_one_default_pair(dialect: str, given: dict[str, Any]) -> None:
    """No choices (absent, empty or null) become ``DEFAULT_APPROVAL_CHOICES``, so views and checks read one
    list."""
    folder, _ = replay([Event("approval.request", {"command": "mcp call", **given}, dialect=dialect)])
    [interaction] = [p["interaction"] for p in folder.message.to_dict()["parts"] if p["interaction"]]
    assert tuple(interaction["choices"]) == turns_module.DEFAULT_APPROVAL_CHOICES == ("once", "deny")


def test_clarify_attaches_to_clarify_tool_and_records_answer() -> None:
    """clarify.request hangs on the running clarify tool; the answer B is recorded and the tool completes."""
    items = ws("CLARIFY")
    folder, _ = replay(_upto(items, "clarify.request"))
    inter = part(folder, "tool:call_08caf93922b7")["interaction"]
    assert inter["kind"] == "clarify" and inter["request_id"] == "0c69cfb1"
    assert inter["question"] == "Pick one" and inter["choices"] == ["A", "B"] and inter["status"] == "pending"
    folder, _ = replay(items)
    tool = part(folder, "tool:call_08caf93922b7")
    assert tool["name"] == "clarify" and tool["status"] == "completed"
    assert tool["interaction"]["status"] == "answered" and tool["interaction"]["response"] == "B"
    assert tool["result"]["user_response"] == "B"
    assert part(folder, "text:1")["text"] == "You chose: B"


def test_clarify_prefers_clarify_tool_over_latest_and_falls_back() -> None:
    """clarify.request picks the running clarify tool even if another tool started later, else the latest
    one."""
    folder, _ = replay(
        [
            Event("tool.start", {"tool_id": "c1", "name": "clarify", "context": "Asking"}),
            Event("tool.start", {"tool_id": "t2", "name": "terminal", "context": "ls"}),
            Event("clarify.request", {"question": "Which?", "choices": ["A"], "request_id": "r1"}),
            Event("clarify.request", {"question": "And?", "choices": [], "request_id": "r2"}),
        ]
    )
    assert part(folder, "tool:c1")["interaction"]["request_id"] == "r1"
    assert part(folder, "tool:t2")["interaction"]["request_id"] == "r2"
    request = Event("clarify.request", {"question": "Q", "choices": ["x"], "request_id": "r9"})
    folder, _ = replay([request, request])  # a repeated request is not a second part
    assert ids(folder) == ["tool:clarify-r9"]
    assert part(folder, "tool:clarify-r9")["name"] == "clarify"


def test_sudo_and_secret_are_redacted_and_expire() -> None:
    """sudo/secret answers are stored as ********, and *.expire marks an unanswered one expired."""
    folder, _ = replay(
        [
            Event("tool.start", {"tool_id": "t1", "name": "terminal", "context": "sudo ls"}),
            Event("sudo.request", {"request_id": "s1"}),
        ]
    )
    changes = folder.answer("s1", "hunter2")
    assert "hunter2" not in json.dumps(changes)
    assert part(folder, "tool:t1")["interaction"]["response"] == REDACTED
    folder, changes = replay(
        [
            Event("secret.request", {"request_id": "k1", "prompt": "API key?", "env_var": "OPENAI_API_KEY"}),
            Event("secret.expire", {"request_id": "k1"}),
        ]
    )
    syn = part(folder, "tool:secret-k1")
    assert (
        syn["interaction"]["question"] == "API key?" and syn["interaction"]["description"] == "OPENAI_API_KEY"
    )
    assert syn["interaction"]["status"] == "expired" and syn["status"] == "cancelled"
    assert folder.answer("k1", "sk-xyz") == []


def test_interrupted_turn_trims_text_and_cancels_running_tool() -> None:
    """SLOW interrupted: trailing whitespace is trimmed by a patch, and a still-running tool becomes
    cancelled."""
    slow = ws("SLOW")
    folder, changes = replay(slow)
    assert folder.message.status == "interrupted"
    text = part(folder, "text:0")["text"]
    assert text.startswith("tick 0 tick 1") and text.endswith("tick 19")
    assert {
        "op": "patch",
        "message_id": "assistant:t1",
        "part_id": "text:0",
        "fields": {"text": text},
    } in changes
    run = ws("RUN")
    spliced = _upto(run, "tool.start") + [
        e for e in slow if isinstance(e, Event) and e.type != "message.start"
    ]
    folder, _ = replay(spliced)
    assert ids(folder) == ["tool:call_6e7c30808893", "text:1"]
    assert part(folder, "tool:call_6e7c30808893")["status"] == "cancelled"
    assert part(folder, "text:1")["text"].endswith("tick 19")


def test_completed_turn_leaves_running_tool_running() -> None:
    """Only a turn that did not complete normally cancels its running tools (contract, "End of turn")."""
    folder, _ = replay([*_upto(ws("RUN"), "tool.start"), _complete("complete", "ok")])
    assert part(folder, "tool:call_6e7c30808893")["status"] == "running"
    assert part(folder, "text:1")["text"] == "ok"


def test_failed_call_turn_adds_text_and_error() -> None:
    """FAIL: message.complete status error with unstreamed text adds it as text:0 and sets the message
    error."""
    folder, _ = replay(ws("FAIL"))
    msg = folder.message
    assert msg.status == "error"
    assert msg.error == "API call failed after 1 retries: HTTP 500: fake-llm scripted failure (HTTP 500)"
    assert [(p.id, p.text) for p in msg.parts] == [("text:0", msg.error)]


def test_error_event_ends_turn_and_second_error_is_ignored() -> None:
    """An error event ends the turn with status error; the duplicate error the server sends changes
    nothing."""
    folder, changes = replay(
        [
            Event("message.start", {}),
            Event("message.delta", {"text": "partial "}),
            Event("error", {"message": "boom"}),
            Event("error", {"message": "boom again"}),
        ]
    )
    assert folder.done and folder.message.status == "error" and folder.message.error == "boom"
    assert part(folder, "text:0")["text"] == "partial"
    assert [c["op"] for c in changes] == ["message", "part", "patch", "finish"]


def test_duplicate_message_start_is_idempotent() -> None:
    """A second message.start while the turn is open (synthetic turns send two) changes nothing."""
    items = ws("plain")
    start = next(i for i, it in enumerate(items) if isinstance(it, Event) and it.type == "message.start")
    doubled = items[: start + 1] + [items[start]] + items[start + 1 :]
    single, single_changes = replay(items)
    double, double_changes = replay(doubled)
    assert double.message.to_dict() == single.message.to_dict()
    assert double_changes == single_changes


def test_finish_from_outside() -> None:
    """folder.finish() (a dropped connection) applies the end rules; later events and finishes are ignored."""
    folder, _ = replay(_upto(ws("DANGER with approval.respond choice=once"), "approval.request"))
    changes = folder.finish("error", "connection lost")
    msg = folder.message
    assert msg.status == "error" and msg.error == "connection lost"
    assert msg.parts[0].status == "cancelled" and msg.parts[0].interaction.status == "cancelled"
    assert changes[-1]["op"] == "finish" and folder.finish("error") == []
    assert TurnFolder("x").finish("cancelled")[0]["op"] == "message"
    with pytest.raises(ValueError, match="finish status"):
        TurnFolder("y").finish("streaming")


def test_queued_message_becomes_streaming_at_message_start() -> None:
    """begin("queued") shows a queued message; its message.start re-emits it as streaming, once."""
    folder = TurnFolder("q")
    assert folder.begin("queued")[0]["message"]["status"] == "queued"
    assert folder.begin("queued") == []
    changes = folder.apply(Event("message.start", {}))
    assert [c["op"] for c in changes] == ["message"] and changes[0]["message"]["status"] == "streaming"
    assert folder.apply(Event("message.start", {})) == []


def test_lost_deltas_are_recovered_from_the_final_text() -> None:
    """If the streamed text is a prefix of the final text (deltas lost in a reconnect), the part is
    completed."""
    folder, changes = replay(
        [
            Event("message.delta", {"text": "Hello "}),
            Event("message.complete", {"text": "Hello world", "status": "complete", "usage": {}}),
        ]
    )
    assert part(folder, "text:0")["text"] == "Hello world"
    assert {
        "op": "patch",
        "message_id": "assistant:t1",
        "part_id": "text:0",
        "fields": {"text": "Hello world"},
    } in changes


def test_snapshot_does_not_change_afterwards() -> None:
    """folder.message is a copy: later deltas do not change an earlier snapshot."""
    folder = TurnFolder("s")
    folder.apply(Event("message.delta", {"text": "a"}))
    snap = folder.message
    folder.apply(Event("message.delta", {"text": "b"}))
    assert snap.parts[0].text == "a" and folder.message.parts[0].text == "ab"


def test_tool_complete_without_start_adds_a_completed_part() -> None:
    """tool.complete can come without tool.start (inline diffs with progress off): it adds a finished part."""
    folder, _ = replay(
        [
            Event(
                "tool.complete",
                {
                    "tool_id": "d1",
                    "name": "patch",
                    "args": {"path": "a"},
                    "duration_s": 0.5,
                    "result": {"error": "no such file"},
                },
            ),
            Event("message.delta", {"text": "after"}),
        ]
    )
    assert ids(folder) == ["tool:d1", "text:1"]
    assert part(folder, "tool:d1")["status"] == "error" and part(folder, "tool:d1")["duration"] == 0.5


def test_transform_output_can_show_message_interim() -> None:
    """transform_output sees ignored events with ids and source, and its list replaces the default changes."""
    seen: list[TransformContext] = []

    def transform(item: Event, ctx: TransformContext) -> list[dict[str, Any]] | None:
        seen.append(ctx)
        if item.type != "message.interim":
            return None
        return [
            *ctx.default_changes,
            {
                "op": "part",
                "message_id": ctx.message_id,
                "part": {
                    "id": "hermes-interim",
                    "kind": "text",
                    "text": item.payload["text"],
                    "name": None,
                    "status": None,
                    "arguments": None,
                    "preview": None,
                    "result": None,
                    "duration": None,
                    "interaction": None,
                },
            },
        ]

    folder = TurnFolder("x", transform_output=transform)
    changes = folder.apply(Event("message.interim", {"text": "Looking…", "already_streamed": False}))
    assert [c["op"] for c in changes] == ["message", "part"] and changes[1]["part"]["text"] == "Looking…"
    assert seen[0].source == "live" and seen[0].turn_id == "x" and seen[0].message_id == "assistant:x"
    assert folder.apply(Event("thinking.delta", {"text": "(o_o) hmm"})) == []
    fold_history(history_rows()[:2], transform_output=transform)
    assert seen[-1].source == "history" and seen[-1].turn_id == "hermes-row:53"


# -- API Server runs
# ---------------------------------------------------------------------------------------------


def test_run_tool_turn() -> None:
    """RUN: tool.started/completed become tool:run-1 with preview and duration; text:1 drops the "\\n\\n"."""
    folder, _ = replay(run_events("api_run_RUN.txt"))
    msg = folder.message.to_dict()
    assert [p["id"] for p in msg["parts"]] == ["tool:run-1", "text:1"]
    tool = msg["parts"][0]
    assert (tool["name"], tool["status"], tool["preview"], tool["duration"]) == (
        "terminal",
        "completed",
        "echo run-ok + 1 command",
        0.017,
    )
    assert msg["parts"][1]["text"] == "Command output:\n```\nrun-ok\nLinux\n```"
    assert msg["status"] == "complete" and msg["usage"] == {
        "input_tokens": 20,
        "output_tokens": 10,
        "total_tokens": 30,
    }


def test_run_plain_and_think_have_text_only() -> None:
    """Runs carry no reasoning (reasoning.available is the reply again), so plain and THINK give text:0
    only."""
    for name, text in [
        ("api_run_plain.txt", "Hello from the fake model! You said: hello run"),
        ("api_run_think.txt", "I thought about it: the answer is 42."),
        ("api_run_CLARIFY.txt", "[fake-llm] tool 'clarify' was not offered by Hermes."),
    ]:
        folder, _ = replay(run_events(name))
        assert [(p["id"], p["text"]) for p in parts(folder)] == [("text:0", text)], name


def test_run_approval_approved() -> None:
    """DANGER approve: approval.responded marks the approval answered "once"; the tool completes."""
    events = run_events("api_run_DANGER_approve.txt")
    folder, _ = replay(_upto(events, "approval.request"))
    inter = part(folder, "tool:run-1")["interaction"]
    assert inter["status"] == "pending" and inter["command"] == "rm -rf ./hermes-danger-demo"
    assert inter["choices"] == ["once", "session", "always", "deny"]
    folder, _ = replay(events)
    tool = part(folder, "tool:run-1")
    assert tool["status"] == "completed" and tool["interaction"]["status"] == "answered"
    assert tool["interaction"]["response"] == "once"


def test_run_approval_denied() -> None:
    """DANGER deny: the approval is answered "deny" and tool.completed error:true makes the tool an error."""
    folder, _ = replay(run_events("api_run_DANGER_deny.txt"))
    tool = part(folder, "tool:run-1")
    assert tool["status"] == "error" and tool["interaction"]["response"] == "deny"
    assert part(folder, "text:1")["text"].startswith("Dangerous command result:\n```\nBLOCKED")
    assert folder.message.status == "complete"


def test_run_approval_timeout_cancels_unanswered() -> None:
    """DANGER timeout: no event says so; the tool fails and the unanswered approval is no longer pending."""
    folder, _ = replay(run_events("api_run_DANGER_timeout.txt"))
    tool = part(folder, "tool:run-1")
    assert tool["status"] == "error" and tool["interaction"]["status"] == "cancelled"


def test_run_view_answer_is_kept_when_server_confirms() -> None:
    """An approval the view answered keeps its answer when approval.responded arrives; the FIFO stays
    aligned."""
    events = run_events("api_run_DANGER_approve.txt")
    head = _upto(events, "approval.request")
    second = Event("approval.request", {"command": "rm -rf b", "choices": ["once", "deny"]}, dialect="run")
    folder, _ = replay([*head, second, ("approval.respond", {"choice": "deny"})])
    folder.apply(Event("approval.responded", {"choice": "deny", "resolved": 1}, dialect="run"))
    states = {i: part(folder, p)["interaction"] for i, p in [(1, "tool:run-1"), (2, "tool:approval-2")]}
    assert states[1]["status"] == "answered" and states[1]["response"] == "deny"
    assert states[2]["status"] == "pending"
    folder.apply(Event("approval.responded", {"choice": "once", "resolved": 1}, dialect="run"))
    assert part(folder, "tool:approval-2")["interaction"]["response"] == "once"


@pytest.mark.parametrize("name", ["api_run_FAIL.txt", "api_run_FAIL400.txt"])
def test_run_failed(name: str) -> None:
    """run.failed ends the turn with status error and the server's error text."""
    folder, _ = replay(run_events(name))
    assert folder.message.status == "error" and folder.message.error.startswith("HTTP ")
    assert folder.message.parts == []


def test_run_stop_is_cancelled_and_trimmed() -> None:
    """SLOW stop: run.cancelled gives status cancelled and the streamed text loses its trailing space."""
    folder, _ = replay(run_events("api_run_SLOW_stop.txt"))
    assert folder.message.status == "cancelled"
    assert part(folder, "text:0")["text"].endswith("tick 19")


def test_run_tools_match_oldest_running_of_same_name() -> None:
    """Two running tools of one name complete oldest first; an unmatched completion adds its own part."""
    folder, _ = replay(
        [
            Event("tool.started", {"tool": "terminal", "preview": "a"}, dialect="run"),
            Event("tool.started", {"tool": "terminal", "preview": "b"}, dialect="run"),
            Event("tool.completed", {"tool": "terminal", "duration": 1.0, "error": False}, dialect="run"),
            Event("tool.completed", {"tool": "read_file", "duration": 2.0, "error": True}, dialect="run"),
        ]
    )
    assert [(p["id"], p["status"]) for p in parts(folder)] == [
        ("tool:run-1", "completed"),
        ("tool:run-2", "running"),
        ("tool:run-3", "error"),
    ]


def test_run_synthesized_completion_after_lost_stream_restores_final_text() -> None:
    """After a lost stream the API client synthesizes run.completed: its output completes the text."""
    events = run_events("api_run_RUN.txt")
    first_delta = next(i for i, e in enumerate(events) if e.type == "message.delta")
    folder, changes = replay([*events[: first_delta + 1], events[-1]])  # the stream broke after one delta
    assert part(folder, "text:1")["text"] == "Command output:\n```\nrun-ok\nLinux\n```"
    assert changes[-2]["op"] == "patch" and changes[-2]["fields"] == {
        "text": "Command output:\n```\nrun-ok\nLinux\n```"
    }
    no_text = [e for e in events if e.type in ("tool.started", "tool.completed", "run.completed")]
    folder, _ = replay(no_text)  # the stream broke before any text: the output becomes the text
    assert ids(folder) == ["tool:run-1", "text:1"]


# -- change stream property
# ---------------------------------------------------------------------------------------


def _all_captures() -> list[tuple[str, list[Item]]]:
    out: list[tuple[str, list[Item]]] = [(k, v) for k, v in WS.items() if _events(v)]
    out += [(f"timeout:{k}", v) for k, v in _ws_scenarios("ws_DANGER_timeout.jsonl").items() if _events(v)]
    out += [(p.name, run_events(p.name)) for p in sorted(FIXTURES.glob("api_run_*.txt"))]
    return out


@pytest.mark.parametrize(("label", "items"), _all_captures(), ids=lambda v: v if isinstance(v, str) else "")
def test_change_stream_reproduces_message(label: str, items: list[Item]) -> None:
    """For every capture, the change records (JSON round-tripped) rebuild exactly folder.message.to_dict()."""
    folder, changes = replay(items)  # also checks the equality after every single event
    assert folder.done, label
    wire = json.loads(json.dumps(changes))
    assert apply_changes({}, wire) == {folder.message_id: folder.message.to_dict()}
    store = MessageStore()  # the widgets' store: one record at a time, reading only at the end
    for change in wire:
        store.apply([change])
    assert dict(store) == {folder.message_id: folder.message.to_dict()}
    assert sum(c["op"] == "finish" for c in changes) == 1 and changes[-1]["op"] == "finish"
    assert sum(c["op"] == "message" for c in changes) == 1 and changes[0]["op"] == "message"


def test_apply_changes_rejects_unknown_ops_and_ids() -> None:
    """apply_changes fails loudly on an unknown op or a part it has never seen."""
    with pytest.raises(ValueError, match="unknown change op"):
        apply_changes({}, [{"op": "nope"}])
    msgs = apply_changes({}, [{"op": "message", "message": user_message("t", "hi").to_dict()}])
    with pytest.raises(KeyError):
        apply_changes(msgs, [{"op": "append", "message_id": "user:t", "part_id": "text:9", "text": "x"}])


def test_message_store_joins_appends_only_when_read() -> None:
    """Appends queue on the part (its text lags in raw()), any read or other record of the message joins them,
    a replaced part drops what was queued for the old one, and unknown ids fail like apply_changes."""
    store = MessageStore([user_message("t", "hi").to_dict()])
    reply = {
        "id": "assistant:t",
        "role": "assistant",
        "status": "streaming",
        "usage": None,
        "error": None,
        "parts": [{**store["user:t"]["parts"][0], "id": "text:0", "text": "a"}],
    }
    store.apply([{"op": "message", "message": reply}])
    store.apply(
        [{"op": "append", "message_id": "assistant:t", "part_id": "text:0", "text": t} for t in "bcd" * 200]
    )
    assert store.raw("assistant:t")["parts"][0]["text"] == "a"  # not joined yet
    assert store["assistant:t"]["parts"][0]["text"] == "a" + "bcd" * 200
    store.apply(
        [
            {"op": "append", "message_id": "assistant:t", "part_id": "text:0", "text": "e"},
            {"op": "patch", "message_id": "assistant:t", "part_id": "text:0", "fields": {"status": None}},
        ]
    )
    assert store.raw("assistant:t")["parts"][0]["text"].endswith("de")  # the patch joined first
    store.apply(
        [
            {"op": "append", "message_id": "assistant:t", "part_id": "text:0", "text": "lost"},
            {"op": "part", "message_id": "assistant:t", "part": {**reply["parts"][0], "text": "new"}},
        ]
    )
    assert [m["parts"][0]["text"] for m in store.values()] == ["hi", "new"]
    with pytest.raises(KeyError):
        store.apply([{"op": "append", "message_id": "assistant:t", "part_id": "text:9", "text": "x"}])
    with pytest.raises(ValueError, match="unknown change op"):
        store.apply([{"op": "nope", "message_id": "assistant:t"}])
    assert "assistant:t" in store and len(store) == 2 and "other" not in store


# -- history
# ------------------------------------------------------------------------------------------------------

LIVE_ORDER = [
    "plain",
    "THINK",
    "RUN",
    "FAIL",
    "DANGER with approval.respond choice=once",
    "DANGER with approval.respond choice=deny",
    "CLARIFY",
    "SLOW",
]


def _shape(message: dict[str, Any]) -> list[tuple[Any, ...]]:
    return [
        (p["id"], p["kind"], p["text"], p["name"], p["status"], p["arguments"], p["result"])
        for p in message["parts"]
    ]


def test_history_turn_ids_and_user_messages() -> None:
    """Each user row starts turn hermes-row:<row id>; user messages are user:<turn id> with one text:0
    part."""
    turns = history_events(history_rows(), session_id="20261202_103140_fee333")
    assert [t.turn_id for t in turns] == [f"hermes-row:{i}" for i in (53, 55, 57, 61, 62, 66, 70, 74)]
    assert turns[0].user_text == "hello dashboard"
    assert all(e.session_id == "20261202_103140_fee333" for t in turns for e in t.events)
    assert [e.type for e in turns[2].events] == [
        "tool.start",
        "tool.complete",
        "message.delta",
        "message.complete",
    ]
    messages = fold_history(history_rows())
    users = [m for m in messages if m.role == "user"]
    assert users[0].to_dict() == {
        "id": "user:hermes-row:53",
        "role": "user",
        "status": "complete",
        "usage": None,
        "error": None,
        "parts": [
            {
                "id": "text:0",
                "kind": "text",
                "text": "hello dashboard",
                "name": None,
                "status": None,
                "arguments": None,
                "preview": None,
                "result": None,
                "duration": None,
                "interaction": None,
            }
        ],
    }
    assert [m.id for m in messages][:4] == [
        "user:hermes-row:53",
        "assistant:hermes-row:53",
        "user:hermes-row:55",
        "assistant:hermes-row:55",
    ]


def test_history_matches_live_fold_of_the_same_turns() -> None:
    """History of the ws_prompts session gives the same part ids, kinds, texts, tools and results as live."""
    messages = {m.id: m.to_dict() for m in fold_history(history_rows())}
    turn_ids = [t.turn_id for t in history_events(history_rows())]
    for prefix, turn_id in zip(LIVE_ORDER, turn_ids, strict=True):
        live, _ = replay(ws(prefix), turn_id)
        hist = messages.get(f"assistant:{turn_id}")
        if prefix == "FAIL":  # a failed call leaves no assistant row, so history has no assistant message
            assert hist is None and live.message.status == "error"
            continue
        assert _shape(hist) == _shape(live.message.to_dict()), prefix
        assert hist["status"] == "complete"  # history does not keep interrupted/failed (seed 000 "历史")
    assert _shape(messages["assistant:hermes-row:57"])[0][:5] == (
        "tool:call_6e7c30808893",
        "tool",
        "",
        "terminal",
        "completed",
    )


def test_history_accepts_seed_shape_with_json_string_tool_calls() -> None:
    """The seed's example rows (tool_calls as a JSON string, reasoning) fold to reasoning:0, tool:call_1,
    text:1."""
    rows = [
        {"id": 1, "role": "user", "content": "跑一下 printf ok"},
        {
            "id": 2,
            "role": "assistant",
            "content": "",
            "reasoning": "想一想",
            "tool_calls": '[{"id":"call_1","type":"function","function":{"name":"terminal",'
            '"arguments":"{\\"command\\":\\"printf ok\\"}"}}]',
        },
        {
            "id": 3,
            "role": "tool",
            "tool_call_id": "call_1",
            "tool_name": "terminal",
            "content": '{"output":"ok","exit_code":0,"error":null}',
        },
        {"id": 4, "role": "assistant", "content": "查到了"},
    ]
    user, assistant = fold_history(rows)
    assert assistant.id == "assistant:hermes-row:1" and user.parts[0].text == "跑一下 printf ok"
    assert [(p.id, p.status) for p in assistant.parts] == [
        ("reasoning:0", None),
        ("tool:call_1", "completed"),
        ("text:1", None),
    ]
    assert assistant.parts[1].arguments == {"command": "printf ok"}
    assert assistant.parts[1].result == {"output": "ok", "exit_code": 0, "error": None}
    assert assistant.parts[2].text == "查到了"


def test_history_edge_rows() -> None:
    """System rows are skipped, rows before the first user row form their own turn, orphan tool rows still
    show."""
    rows = [
        {"id": 1, "role": "system", "content": "sys"},
        {"id": 2, "role": "assistant", "content": "carried over"},
        {"id": 3, "role": "user", "content": [{"type": "text", "text": "look"}, {"type": "image_url"}]},
        {"id": 4, "role": "tool", "tool_call_id": "gone", "tool_name": "read_file", "content": "plain text"},
        {"id": 5, "role": "assistant", "content": "done  \n"},
    ]
    turns = history_events(rows)
    assert [(t.turn_id, t.user_text) for t in turns] == [("hermes-row:2", None), ("hermes-row:3", "look")]
    msgs = fold_history(rows)
    assert [m.id for m in msgs] == ["assistant:hermes-row:2", "user:hermes-row:3", "assistant:hermes-row:3"]
    assert [(p.id, p.name, p.result) for p in msgs[2].parts] == [
        ("tool:gone", "read_file", "plain text"),
        ("text:1", None, None),
    ]
    assert msgs[2].parts[1].text == "done"
    assert fold_history([]) == []


def _synthetic_rows(n: int) -> list[dict[str, Any]]:
    template = history_rows()
    rows: list[dict[str, Any]] = []
    while len(rows) < n:
        for row in template:
            rows.append({**row, "id": len(rows) + 1})
    return rows[:n]


def test_history_fold_is_fast_enough() -> None:
    """Folding 10,000 rows stays far below a second (catches any quadratic slip; benchmarks/ has the
    number)."""
    rows = _synthetic_rows(10_000)
    start = time.perf_counter()
    messages = fold_history(rows)
    elapsed = time.perf_counter() - start
    assert len(messages) > 5000
    assert elapsed < 2.0, elapsed
