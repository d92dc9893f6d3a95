"""The sans-I/O Dashboard core, driven by the real captured transcripts of both servers with no socket.

Each capture (``tests/fixtures/ws_*.jsonl`` from 0.19.0, ``tests/fixtures/newer/*.jsonl`` from the newer
server) is replayed as the connection would: our ``send`` requests go through ``DashboardCore.calls`` (the
captured ids are mapped to the core's), ``recv`` frames through :meth:`DashboardCore.receive`, and replies are
acted on as the asyncio shell does. The turns the core routes must end as ``message.complete`` says, server
requests must be answered with the frames the capturing client sent, and everything else the server asks is
refused at once.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

import pytest

from hermes_notebook.client.dashboard.core import METHOD_NOT_FOUND, DashboardCore
from hermes_notebook.client.dashboard.prompts import RESPOND_VALUE_KEYS
from hermes_notebook.client.dashboard.session import ListenerItem, SessionRef
from hermes_notebook.client.dashboard.turn_state import TurnState
from hermes_notebook.errors import HermesGatewayClosedError, HermesProtocolError, HermesRPCError
from hermes_notebook.turns import TurnFolder
from hermes_notebook.turns.events import Event
from tests.helpers import FIXTURES, REPO

NEWER = sorted((FIXTURES / "newer").glob("*.jsonl"))
# What the view answers to each newer capture's server request (the capturing client's answers).
ANSWERS = {
    "newer_approval_once": "once",
    "newer_approval_deny": "deny",
    "newer_clarify_answer": json.dumps({"q0": "B", "q1": ["X", "Z"], "q2": "Ann"}),
    "newer_sudo": "<TOKEN>",
    "newer_secret": "<TOKEN>",
}


def frames(path: Path) -> list[tuple[str, dict[str, Any]]]:
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return [
        (r["dir"], r["frame"]) for r in rows if r["dir"] in ("send", "recv") and isinstance(r["frame"], dict)
    ]


def _client_side(path: Path) -> bool:
    """A capture of the whole socket, our prompts included; the compress captures hold a listener's events
    (and the compress call) and are replayed by tests/turns/test_turns_compression.py."""
    return any(d == "send" and f.get("method") == "prompt.submit" for d, f in frames(path))


OLD = [p for p in sorted(FIXTURES.glob("ws_*.jsonl")) if _client_side(p)]


def text_of(turn: TurnState) -> str:
    return "".join(p.text for p in turn.message.parts if p.kind == "text")


class Replay:
    """Drives a core through one capture the way DashboardConnection drives it through a socket."""

    def __init__(self, path: Path, answer: str | None = None) -> None:
        self.path = path
        self.answer = answer
        self.core = DashboardCore()
        self.ids: dict[str, int] = {}  # captured request id -> the core's id
        self.turns: list[TurnState] = []
        self.completes: list[dict[str, Any]] = []  # message.complete payloads, in order
        self.sent: list[dict[str, Any]] = []  # frames the core queued (refusals)
        self.answers: list[tuple[dict[str, Any], dict[str, Any]]] = []  # (ours, captured) result frames
        self.items: list[ListenerItem] = []
        self.changes: list[str] = []
        self.faults: list[Exception] = []
        self.errors: list[HermesRPCError] = []

    def run(self, stop_after: int | None = None) -> Replay:
        for index, (direction, frame) in enumerate(frames(self.path)):
            if stop_after is not None and index >= stop_after:
                break
            self.step(direction, frame)
        return self

    def step(self, direction: str, frame: dict[str, Any]) -> None:
        core = self.core
        if direction == "send" and "method" in frame and "id" in frame:
            self.send_request(frame["method"], frame.get("params") or {}, frame["id"])
        elif direction == "send" and "result" in frame and frame.get("id") in core.prompts.open:
            assert self.answer is not None, f"{self.path.name} answers a server request"
            ours = json.loads(core.prompts.answer_frame(frame["id"], self.answer))
            self.answers.append((ours, frame))
            core.answered(frame["id"], self.answer)
        elif direction == "recv":
            if "method" not in frame and frame.get("id") in self.ids:
                frame = {**frame, "id": self.ids[frame["id"]]}
            params = frame.get("params")
            if frame.get("method") == "event" and params.get("type") == "message.complete":
                self.completes.append(params.get("payload") or {})
            core.receive(json.dumps(frame))
            self.drain()

    def send_request(self, method: str, params: dict[str, Any], captured_id: str) -> None:
        core = self.core
        handle: tuple[Any, ...] = (method,)
        if method == "prompt.submit":
            session = core.by_live[params["session_id"]]
            turn = core.open_turn(
                session, params["text"]
            )  # before the request goes out (docs/protocol/dashboard.md §8.2)
            self.turns.append(turn)
            handle = (method, session, turn)
        elif method in RESPOND_VALUE_KEYS and "request_id" in params:  # 0.19.0 answers by RPC
            core.mark_answered(params["request_id"], params[RESPOND_VALUE_KEYS[method]])
        elif method == "approval.respond":  # resolves the oldest pending approval (§3.1)
            session = core.by_live[params["session_id"]]
            pending = session.oldest_approval()
            assert pending is not None
            core.mark_answered(pending.request_id, params["choice"])
        request_id, text = core.calls.request(method, params, handle)
        assert json.loads(text) == {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
        self.ids[captured_id] = request_id

    def drain(self) -> None:
        core = self.core
        for handle, result, error in core.replies_received():
            if error is not None:
                self.errors.append(error)
            elif handle[0] == "session.create":
                ref = SessionRef(str(result["session_id"]), str(result["stored_session_id"]))
                core.bind(ref)
                core.set_listeners(ref.stored_id, [self.items.append])
            elif handle[0] == "prompt.submit":
                handle[1].accept(handle[2], result.get("status"))
            elif handle[0] == "client.capabilities":
                core.prompts.set_capabilities(result)
        for listeners, item in core.items_received():
            for callback in listeners:
                callback(item)
        self.sent.extend(json.loads(f) for f in core.data_to_send())
        self.changes.extend(core.changes_received())
        self.faults.extend(core.faults_received())
        assert not core.output_waiting


def check_turns_end_as_the_server_said(replay: Replay) -> None:
    assert replay.turns and len(replay.turns) == len(replay.completes)
    for turn, complete in zip(replay.turns, replay.completes, strict=True):
        assert turn.done, turn
        assert turn.status == complete.get("status", "complete")
        if turn.status == "complete":
            assert text_of(turn).strip() == str(complete.get("text") or "").strip()


@pytest.mark.parametrize("path", OLD, ids=lambda p: p.stem)
def test_0190_captures_route_every_event_to_its_turn(path: Path) -> None:
    """0.19.0: every prompt's turn ends with the status and text of its message.complete, even when events
    beat the prompt.submit reply; no frame is sent unasked and nothing is a fault."""
    replay = Replay(path).run()
    check_turns_end_as_the_server_said(replay)
    assert replay.faults == [] and replay.sent == []
    assert not replay.core.server_requests and replay.core.replay_epoch is None
    session = next(iter(replay.core.sessions.values()))
    assert not session.turns and session.last_seq == 0  # 0.19.0 numbers nothing
    # Every event of the session reached the listener, tagged with the turn it was folded into.
    events = [i for i in replay.items if i.kind == "event"]
    deltas = [i for i in events if i.event and i.event.type == "message.delta"]
    assert len(deltas) == sum(
        1 for d, f in frames(path) if (f.get("params") or {}).get("type") == "message.delta"
    )
    assert {i.turn_id for i in deltas} <= {t.id for t in replay.turns} and all(
        i.changes is not None for i in deltas
    )


def test_0190_turn_equals_the_turn_model_fed_directly() -> None:
    """Routing adds and loses nothing: the core's plain turn equals a TurnFolder fed the same events."""
    path = FIXTURES / "ws_prompts.jsonl"
    replay = Replay(path).run()
    first = replay.turns[0]
    folder = TurnFolder(first.id)
    folder.begin("streaming")
    for direction, frame in frames(path):
        if direction == "recv" and frame.get("method") == "event":
            event = Event.from_dashboard_frame(frame)
            if event is not None and event.session_id:
                folder.apply(event)
                if folder.done:
                    break
    assert first.message.to_dict() == folder.message.to_dict()
    assert text_of(first) == "Hello from the fake model! You said: hello dashboard"


def test_0190_approvals_and_clarify_end_answered() -> None:
    """The DANGER once/deny and CLARIFY turns of the capture show their interaction answered."""
    replay = Replay(FIXTURES / "ws_prompts.jsonl").run()
    interactions = [p.interaction for t in replay.turns for p in t.message.parts if p.interaction is not None]
    assert [(i.kind, i.status, i.response) for i in interactions] == [
        ("approval", "answered", "once"),
        ("approval", "answered", "deny"),
        ("clarify", "answered", "B"),
    ]


@pytest.mark.parametrize(
    "path",
    [
        p
        for p in NEWER
        if p.stem in ANSWERS or "cancel" in p.stem or "interrupt" in p.stem or "timeout" in p.stem
    ],
    ids=lambda p: p.stem,
)
def test_newer_captures_answer_server_requests_like_the_real_client(path: Path) -> None:
    """Newer server: features detected from the frames, each prompt answered with the captured result frame,
    every turn ends as message.complete says, and the seq watermark is the last seq seen."""
    replay = Replay(path, ANSWERS.get(path.stem)).run()
    core = replay.core
    check_turns_end_as_the_server_said(replay)
    assert replay.faults == [] and replay.sent == []
    assert core.server_requests and core.replay_epoch and not core.restarted
    for ours, captured in replay.answers:
        assert ours == captured
    assert len(replay.answers) == (1 if path.stem in ANSWERS else 0)
    assert core.prompts.open == {}  # answered, cancelled, or settled by message.complete
    seqs = [
        f["params"]["seq"]
        for d, f in frames(path)
        if d == "recv" and f.get("method") == "event" and type((f.get("params") or {}).get("seq")) is int
    ]
    assert next(iter(core.sessions.values())).last_seq == max(seqs)
    statuses = [
        p.interaction.status for t in replay.turns for p in t.message.parts if p.interaction is not None
    ]
    assert statuses == (
        ["answered"] if path.stem in ANSWERS else ["expired"] if "timeout" in path.stem else ["cancelled"]
    )


def test_newer_handshake_capture_reports_features_and_faults() -> None:
    """The handshake capture: capabilities read from the reply, RPC errors come back as HermesRPCErrors
    naming the method, and the reply to an srq id nobody asked about is left alone."""
    replay = Replay(FIXTURES / "newer" / "newer_handshake.jsonl").run()
    core = replay.core
    assert core.prompts.methods is not None and {"approval", "clarify"} <= core.prompts.methods
    assert replay.errors, "the capture has an unknown method and a bad param"
    assert all(isinstance(e, HermesRPCError) and e.method and e.method in str(e) for e in replay.errors)
    assert any(e.code == METHOD_NOT_FOUND for e in replay.errors)
    assert replay.faults == []


def _srq_frame() -> dict[str, Any]:
    return next(
        f
        for d, f in frames(FIXTURES / "newer" / "newer_approval_once.jsonl")
        if d == "recv" and f.get("method") == "approval"
    )


def test_an_unknown_server_request_is_refused_at_once() -> None:
    """A request method we cannot show gets a -32601 error frame right away and no interaction."""
    replay = Replay(FIXTURES / "newer" / "newer_approval_once.jsonl")
    replay.run(
        stop_after=next(i for i, (d, f) in enumerate(frames(replay.path)) if f.get("method") == "approval")
    )
    frame = {**_srq_frame(), "method": "preview.read", "id": "srq-other"}
    replay.core.receive(json.dumps(frame))
    replay.drain()
    assert replay.sent == [
        {
            "jsonrpc": "2.0",
            "id": "srq-other",
            "error": {"code": -32601, "message": "method not handled by this client: preview.read"},
        }
    ]
    assert replay.core.prompts.open == {}
    assert [i for t in replay.turns for i in t.pending()] == []


def test_a_server_request_yields_its_result_frame_when_answered() -> None:
    """An approval request becomes a pending interaction; answering it gives the result frame and records
    it."""
    replay = Replay(FIXTURES / "newer" / "newer_approval_once.jsonl")
    stop = next(i for i, (d, f) in enumerate(frames(replay.path)) if f.get("method") == "approval") + 1
    replay.run(stop_after=stop)
    srq = _srq_frame()
    (turn,) = replay.turns
    assert [i.request_id for i in turn.pending()] == [srq["id"]]
    frame = json.loads(replay.core.prompts.answer_frame(srq["id"], "once"))
    assert frame == {"jsonrpc": "2.0", "id": srq["id"], "result": {"choice": "once"}}
    replay.core.answered(srq["id"], "once")
    assert srq["id"] not in replay.core.prompts.open and turn.pending() == []


def test_duplicate_events_by_seq_are_dropped() -> None:
    """Events seen again (as around a resume) are dropped by seq: the text is not doubled."""
    path = FIXTURES / "newer" / "newer_approval_once.jsonl"
    rows = frames(path)
    replay = Replay(path, "once").run()
    (turn,) = replay.turns
    before = turn.message.to_dict()
    items = len(replay.items)
    for direction, frame in rows:
        if direction == "recv" and frame.get("method") == "event" and frame["params"].get("session_id"):
            replay.core.receive(json.dumps(frame))
    replay.drain()
    assert turn.message.to_dict() == before and len(replay.items) == items
    assert replay.turns == [turn] and not replay.core.sessions[turn.ref.stored_id].turns


def _mid_turn(path: Path) -> tuple[Replay, list[dict[str, Any]], int]:
    """Replay up to the third message.delta; return the replay, the captured events after it and the index."""
    rows = frames(path)
    deltas = [i for i, (d, f) in enumerate(rows) if (f.get("params") or {}).get("type") == "message.delta"]
    cut = deltas[1] + 1
    replay = Replay(path, ANSWERS.get(path.stem)).run(stop_after=cut)
    later = [
        f
        for d, f in rows[cut:]
        if d == "recv" and f.get("method") == "event" and (f.get("params") or {}).get("session_id")
    ]
    return replay, later, cut


def _reconnect(core: DashboardCore, ready: dict[str, Any], epoch: str) -> None:
    core.dropped("The Dashboard connection closed before the turn finished.", lossless=True)
    core.new_socket()
    core.receive(
        json.dumps(
            {
                "jsonrpc": "2.0",
                "method": "event",
                "params": {"type": "gateway.ready", "payload": {**ready, "replay_epoch": epoch}},
            }
        )
    )


def test_a_dropped_turn_is_caught_up_from_the_replay_ring() -> None:
    """Lossless reconnect without sockets: a drop mid-turn keeps the turn open; after a resume on the same
    epoch live events wait while session.events.since fills the gap, and the turn completes with the full
    text."""
    path = FIXTURES / "newer" / "newer_approval_once.jsonl"
    replay, later, _ = _mid_turn(path)
    core = replay.core
    (turn,) = replay.turns
    session = core.sessions[turn.ref.stored_id]
    epoch = core.replay_epoch
    assert epoch is not None
    _reconnect(core, dict(core.ready), epoch)
    assert session.suspended and not turn.done and not core.restarted
    ref, bound, catch_up = core.resumed(turn.ref.stored_id, {"session_id": turn.ref.live_id})
    assert catch_up and bound is session and ref is turn.ref
    missed, live = later[:-3], later[-3:]
    for frame in live:  # arrive while the catch-up is in flight: held back
        core.receive(json.dumps(frame))
    assert session.buffer is not None and len(session.buffer) == 3 and not turn.done
    core.catch_up(session, {}, True, {"events": [f["params"] for f in missed]})
    replay.drain()
    complete = next(f["params"]["payload"] for f in later if f["params"]["type"] == "message.complete")
    assert turn.done and turn.status == "complete"
    assert text_of(turn).strip() == complete["text"].strip()


def test_a_new_replay_epoch_is_reported_and_ends_the_kept_turn() -> None:
    """A Dashboard restart (new replay_epoch in gateway.ready) is reported; the resume does not catch up and
    the turn kept across the drop ends with a message saying the Dashboard restarted."""
    replay, _, _ = _mid_turn(FIXTURES / "newer" / "newer_clarify_answer.jsonl")
    core = replay.core
    (turn,) = replay.turns
    session = core.sessions[turn.ref.stored_id]
    _reconnect(core, dict(core.ready), "another-epoch")
    assert core.restarted and core.replay_epoch == "another-epoch"
    _, bound, catch_up = core.resumed(turn.ref.stored_id, {"session_id": "new-live-id"})
    assert not catch_up and bound is session and core.by_live == {"new-live-id": session}
    core.catch_up(session, {}, False)
    assert turn.done and turn.status == "error" and "restarted" in (turn.message.error or "")
    with pytest.raises(HermesGatewayClosedError, match="restarted"):
        turn.result()
    assert session.last_seq == 0 and not session.suspended


def test_request_cancel_withdraws_the_prompt() -> None:
    """request.cancel (clarify timeout) closes the server request: it can no longer be answered."""
    path = FIXTURES / "newer" / "newer_clarify_timeout.jsonl"
    rows = frames(path)
    cancel = next(
        i for i, (d, f) in enumerate(rows) if (f.get("params") or {}).get("type") == "request.cancel"
    )
    replay = Replay(path).run(stop_after=cancel)
    (srq,) = replay.core.prompts.open
    replay.step(*rows[cancel])
    assert replay.core.prompts.open == {}
    inter = next(p.interaction for p in replay.turns[0].message.parts if p.interaction is not None)
    assert (inter.status, inter.reason) == ("expired", "timeout")


def test_bad_frames_and_stray_replies_are_faults_not_crashes() -> None:
    """Binary, non-JSON, non-object and unknown-id frames become HermesProtocolErrors; routing goes on."""
    core = DashboardCore()
    for raw in (
        b"\x00",
        "{not json",
        "[1]",
        '{"jsonrpc": "2.0", "id": 99, "result": {}}',
        '{"jsonrpc": "2.0"}',
    ):
        core.receive(raw)
    faults = core.faults_received()
    assert [type(f) for f in faults] == [HermesProtocolError] * 5
    assert (
        "binary" in str(faults[0])
        and "not JSON" in str(faults[1])
        and "unknown request id 99" in str(faults[3])
    )
    request_id, _ = core.calls.request("session.list", {}, "handle")
    core.receive(json.dumps({"jsonrpc": "2.0", "id": request_id, "error": {"code": 4001, "message": "gone"}}))
    ((handle, result, error),) = core.replies_received()
    assert handle == "handle" and result is None and isinstance(error, HermesRPCError) and error.code == 4001
    assert not core.output_waiting


def test_refetch_broadcasts_are_queued_as_changes() -> None:
    """Session-less ``*.changed`` broadcasts (sessions, cron) come out as change kinds."""
    replay = Replay(FIXTURES / "newer" / "newer_approval_once.jsonl", "once").run()
    assert replay.changes == ["sessions"]
    replay.core.receive(
        '{"jsonrpc": "2.0", "method": "event", "params": {"type": "cron.changed", "payload": {}}}'
    )
    assert replay.core.changes_received() == ["cron"]


def test_a_session_bound_late_shows_a_prompt_that_came_first() -> None:
    """A server request for a session whose resume is still under way is kept (never refused) and handed to
    the session's listeners once it is bound."""
    core = DashboardCore()
    srq = _srq_frame()
    core.receive(json.dumps(srq))
    assert core.data_to_send() == [] and list(core.prompts.open) == [srq["id"]]
    items: list[ListenerItem] = []
    core.set_listeners("stored-1", [items.append])
    core.bind(SessionRef(srq["params"]["session_id"], "stored-1"))
    for listeners, item in core.items_received():
        for callback in listeners:
            callback(item)
    assert [(i.event.type, i.event.payload["request_id"]) for i in items if i.event] == [
        ("approval.request", srq["id"])
    ]


def test_a_multi_question_answer_becomes_the_captured_locks() -> None:
    """A three-question clarify answered from the card becomes one clarify.lock per question, equal to the
    locks the capturing client sent (the last one resolved the request on the real server). One question, or a
    server that refused locks, gets the result frame instead (no lock params)."""
    path = FIXTURES / "newer" / "newer_clarify_lockall.jsonl"
    rows = frames(path)
    cut = next(i for i, (d, f) in enumerate(rows) if f.get("method") == "clarify") + 1
    replay = Replay(path).run(stop_after=cut)
    srq = rows[cut - 1][1]
    captured = [f["params"] for d, f in rows if d == "send" and f.get("method") == "clarify.lock"][:3]
    ours = replay.core.prompts.lock_params(srq["id"], json.dumps({"q0": "A", "q1": ["X", "Y"], "q2": None}))

    def plain(params: dict[str, Any]) -> dict[str, Any]:  # a multi-select answer is a JSON array string
        answer = params["answer"]
        return {
            **params,
            "answer": json.loads(answer) if isinstance(answer, str) and answer[:1] == "[" else answer,
        }

    assert ours is not None and [plain(p) for p in ours] == [plain(p) for p in captured]
    replay.core.prompts.locks_refused()
    assert replay.core.prompts.lock_params(srq["id"], "A") is None
    one = {**srq, "id": "srq-one", "params": {**srq["params"], "questions": srq["params"]["questions"][:1]}}
    replay.core.prompts.clarify_locks = None  # untried again
    replay.core.receive(json.dumps(one))
    assert replay.core.prompts.lock_params("srq-one", "A") is None


# --- the core side stays pure
# ----------------------------------------------------------------------------------

DASHBOARD = REPO / "hermes_notebook" / "client" / "dashboard"
#: The protocol side: state and decisions, no I/O. Everything else in the package is the asyncio shell.
CORE_SIDE = (
    "attachments",
    "backoff",
    "core",
    "prompts",
    "routing",
    "rpc",
    "server_requests",
    "session",
    "turn_state",
)
SHELL = (
    "callbacks",
    "channel",
    "commands",
    "compaction",
    "connection",
    "early_stop",
    "files",
    "history",
    "mcp_servers",
    "media",
    "offered",
    "profiles",
    "reconnect",
    "rewind",
    "rollback",
    "session_info",
    "settling",
    "steering",
    "turn",
    "ws",
)
IO_LIBRARIES = frozenset({"asyncio", "websockets", "httpx", "httpx_sse"})


def _imports(path: Path, package: str | None = None) -> list[str]:
    """Absolute names imported anywhere in ``path`` (annotation-only and function-level imports included);
    relative imports are resolved against ``package`` (by default the one ``path`` sits in)."""
    parts = package.split(".") if package else list(path.parent.relative_to(DASHBOARD.parents[2]).parts)
    names: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = parts[: len(parts) - node.level + 1] if node.level else []
            module = ".".join([*base, *([node.module] if node.module else [])])
            names.append(module)
            names.extend(
                f"{module}.{alias.name}" for alias in node.names
            )  # ``from . import x`` names a module
    return names


def _reached(module: str) -> dict[str, str]:
    """Every name ``client/dashboard/<module>.py`` imports, following package modules: ``name ->
    importer``."""
    root = DASHBOARD.parents[2]
    found: dict[str, str] = {}
    todo, seen = [DASHBOARD / f"{module}.py"], set()
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        for name in _imports(path):
            found.setdefault(name, path.relative_to(root).as_posix())
            target = root / Path(*name.split("."))
            for candidate in (target.with_suffix(".py"), target / "__init__.py"):
                if name.startswith("hermes_notebook.") and candidate.is_file() and candidate != path:
                    todo.append(candidate)
    return found


def test_core_and_shell_lists_cover_the_package() -> None:
    """Every module of the Dashboard client is either core side or shell, so a new one is placed on
    purpose."""
    modules = {p.stem for p in DASHBOARD.glob("*.py")} - {"__init__"}
    assert modules == set(CORE_SIDE) | set(SHELL) and not set(CORE_SIDE) & set(SHELL)


@pytest.mark.parametrize("module", CORE_SIDE)
def test_core_side_imports_no_io_and_nothing_from_the_shell(module: str) -> None:
    """The protocol side imports no event loop or transport and no shell module (the connection, channel,
    reconnector or turn handle), not even for annotations or through another package module."""
    shell = {f"hermes_notebook.client.dashboard.{name}" for name in SHELL} | {
        "hermes_notebook.client.dashboard"
    }
    offenders = sorted(
        f"{where} imports {name}"
        for name, where in _reached(module).items()
        if name.split(".")[0] in IO_LIBRARIES or name in shell
    )
    assert offenders == []


def test_the_import_check_sees_a_shell_import(tmp_path: Path) -> None:
    """The import reader resolves relative imports, annotation-only ones included (a self-test)."""
    path = DASHBOARD / "core.py"
    names = _imports(path)
    assert "hermes_notebook.client.dashboard.routing" in names and "hermes_notebook.errors" in names
    fake = tmp_path / "x.py"
    fake.write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import asyncio\n    from .turn import "
        "Turn\n"
    )
    assert {"asyncio", "hermes_notebook.client.dashboard.turn"} <= set(
        _imports(fake, "hermes_notebook.client.dashboard")
    )


def test_a_turns_usage_carries_its_own_token_counts() -> None:
    """message.complete reports the session's running totals; each turn's usage gets its own counts (``turn``)
    from the totals before it: zero for a session created here, the last session.info otherwise; ticks while a
    turn runs do not move the start; a resumed session's first turn without totals gets none."""
    core = DashboardCore()
    ref = SessionRef("live-1", "stored-1")
    session = core.bind(ref)
    session.started_here()

    def event(kind: str, payload: dict[str, Any]) -> None:
        frame = {
            "jsonrpc": "2.0",
            "method": "event",
            "params": {"type": kind, "session_id": "live-1", "payload": payload},
        }
        core.receive(json.dumps(frame))

    def usage(calls: int) -> dict[str, Any]:
        return {"input": 10 * calls, "output": 5 * calls, "reasoning": 0, "calls": calls, "context_used": 10}

    ends = []
    for calls in (1, 3):
        turn = core.open_turn(session, "hi")
        event("message.start", {})
        event("session.usage", {"usage": usage(calls + 5)})  # a tick mid-turn: not a start
        event("message.complete", {"text": "ok", "usage": usage(calls), "status": "complete"})
        ends.append(turn.message.usage)
    assert [u["turn"] for u in ends] == [
        {"input": 10, "output": 5, "reasoning": 0, "calls": 1},
        {"input": 20, "output": 10, "reasoning": 0, "calls": 2},
    ]
    assert ends[1]["input"] == 30  # the running totals stay as the server sent them

    other = core.bind(SessionRef("live-2", "stored-2"))  # resumed: its totals so far are unknown
    turn = core.open_turn(other, "hi")
    frame = {"type": "message.complete", "session_id": "live-2", "payload": {"text": "ok", "usage": usage(4)}}
    core.receive(json.dumps({"jsonrpc": "2.0", "method": "event", "params": frame}))
    assert "turn" not in turn.message.usage


def test_a_session_is_held_from_message_complete_until_hermes_reports_it_idle() -> None:
    """Replaying a real newer capture frame by frame: the session is held from the turn's message.complete
    until the session.info after it says ``running: false``, and the server is known to report it. This
    server takes the ``queued`` key, so a prompt sent while it holds the session carries ``queued: true``
    (settling.py sends it at once); once let go, a plain prompt. A server without the key
    (0.19.0: no replay epoch) never gets it."""
    path = FIXTURES / "newer" / "newer_approval_once.jsonl"
    replay = Replay(path, "once")
    core = replay.core
    held: list[tuple[str, bool, bool, bool]] = []  # event, session held, core says held, sent queued
    for direction, frame in frames(path):
        replay.step(direction, frame)
        params = frame.get("params") or {}
        if direction == "recv" and params.get("type") in ("message.complete", "session.info"):
            (session,) = core.sessions.values()
            queued = core.submit_params(session, "next").get("queued", False)
            held.append((params["type"], session.held, core.held(session.ref.stored_id), queued))
    assert ("message.complete", True, True, True) in held and held[-1] == (
        "session.info",
        False,
        False,
        False,
    )
    assert core.reports_running and core.takes_queued
    (session,) = core.sessions.values()
    core.ready = {}  # a server without the queued key (0.19.0 sends no replay epoch)
    session.held = True
    assert not core.takes_queued and core.held(session.ref.stored_id)
    assert "queued" not in core.submit_params(session, "next")
