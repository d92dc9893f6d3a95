"""DashboardConnection against the scripted fake ``/api/ws``: faults and orderings the real server can't
cue."""

from __future__ import annotations

import asyncio
import json
import logging
import traceback
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio

from hermes_notebook.client.dashboard import DashboardConnection, ListenerItem, Turn
from hermes_notebook.errors import (
    HermesAuthError,
    HermesClosedError,
    HermesGatewayClosedError,
    HermesProtocolError,
    HermesRPCError,
    HermesRunError,
    HermesUnsupportedAttachmentError,
    HermesUsageError,
)
from tests.fake_ws_server import REPLY, FakeDashboard, event
from tests.helpers import eventually_async

pytestmark = pytest.mark.asyncio(loop_scope="function")


class Errors(list[tuple[str, BaseException]]):
    """Collects on_error calls."""

    def __call__(self, kind: str, error: BaseException) -> None:
        self.append((kind, error))


@pytest_asyncio.fixture(loop_scope="function")
async def fake() -> AsyncIterator[FakeDashboard]:
    async with FakeDashboard() as server:
        yield server


@pytest_asyncio.fixture(loop_scope="function")
async def errors() -> Errors:
    return Errors()


@pytest_asyncio.fixture(loop_scope="function")
async def conn(fake: FakeDashboard, errors: Errors) -> AsyncIterator[DashboardConnection]:
    connection = DashboardConnection(fake.settings(), reconnect=False, on_error=errors)
    await connection.connect()
    yield connection
    await connection.close()


async def test_bad_frames_are_reported_and_do_not_disturb_other_sessions(
    fake: FakeDashboard, conn: DashboardConnection, errors: Errors
) -> None:
    """Malformed JSON, a non-object, a binary frame and an unknown reply id each reach on_error("frame")."""
    quiet = await conn.create_session()
    busy = await conn.create_session()
    fake.script(
        busy.live_id,
        [
            REPLY,
            event("message.start", busy.live_id),
            event("message.delta", busy.live_id, {"text": "one "}),
            0.05,
            event("message.delta", busy.live_id, {"text": "two"}),
            event("message.complete", busy.live_id, {"text": "one two", "status": "complete"}),
        ],
    )
    turn = await conn.submit(busy, "go")
    for bad in ("{not json", "[1, 2, 3]", b"\x00\x01binary", {"jsonrpc": "2.0", "id": 999, "result": {}}):
        await fake.send(bad)
    await fake.send(event("totally.unknown", busy.live_id, {"x": 1}))  # unknown types are fine, not faults
    message = await turn
    assert message.parts[-1].text == "one two"
    assert [kind for kind, _ in errors] == ["frame"] * 4
    assert all(isinstance(err, HermesProtocolError) for _, err in errors)
    assert "unknown request id 999" in str(errors[3][1])
    other = await conn.submit(quiet, "still fine")  # the connection and the other session still work
    assert (await other).parts[-1].text == "Hello from the fake."
    assert conn.connected


async def test_events_before_the_submit_reply_belong_to_the_turn(
    fake: FakeDashboard, conn: DashboardConnection
) -> None:
    """A turn's events that beat the prompt.submit reply are folded into that turn (docs/protocol/dashboard.md
    §8.2)."""
    ref = await conn.create_session()
    sid = ref.live_id
    fake.script(
        sid,
        [
            event("message.start", sid),
            event("message.start", sid),  # duplicated start (§8.3)
            event("message.delta", sid, {"text": "early "}),
            REPLY,
            event("message.delta", sid, {"text": "late  "}),
            event("message.complete", sid, {"text": "early late", "status": "complete"}),
        ],
    )
    turn = await conn.submit(ref, "hi")
    message = await turn
    assert message.status == "complete"
    assert [(p.id, p.text) for p in message.parts] == [("text:0", "early late")]
    ops = [c["op"] for c in turn.changes]
    assert ops[0] == "message" and ops[-1] == "finish"
    assert turn.changes[0]["message"]["id"] == f"user:{turn.id}"


async def test_out_of_order_replies_are_matched_by_id(fake: FakeDashboard, conn: DashboardConnection) -> None:
    """Replies that come back in reverse order still resolve the right requests."""
    release = asyncio.Event()

    async def slow(server: FakeDashboard, ws: Any, frame: dict[str, Any]) -> None:
        await release.wait()
        await server._reply(ws, frame, {"which": "slow"})

    async def fast(server: FakeDashboard, ws: Any, frame: dict[str, Any]) -> None:
        await server._reply(ws, frame, {"which": "fast"})
        release.set()

    fake.handlers.update({"x.slow": slow, "x.fast": fast})
    first = asyncio.ensure_future(conn.request("x.slow", {}))
    await fake.wait_for("x.slow")
    second = await conn.request("x.fast", {})
    assert second == {"which": "fast"}
    assert await first == {"which": "slow"}


async def test_rpc_error_reply_raises_with_code(fake: FakeDashboard, conn: DashboardConnection) -> None:
    """An error reply becomes HermesRPCError carrying the server's code and the method."""

    async def refuse(server: FakeDashboard, ws: Any, frame: dict[str, Any]) -> None:
        error = {"code": 4007, "message": "session not found"}
        await ws.send(json.dumps({"jsonrpc": "2.0", "id": frame["id"], "error": error}))

    fake.handlers["session.resume"] = refuse
    with pytest.raises(HermesRPCError) as info:
        await conn.resume("nope")
    assert info.value.code == 4007
    assert info.value.method == "session.resume"
    assert "session not found" in str(info.value)


async def test_drop_between_two_deltas_fails_turn_and_requests(
    fake: FakeDashboard, conn: DashboardConnection
) -> None:
    """A socket dropped mid-turn fails the turn and waiting requests with HermesGatewayClosedError."""
    ref = await conn.create_session()
    sid = ref.live_id
    items: list[ListenerItem] = []
    conn.listen(ref.stored_id, items.append)
    fake.script(sid, [REPLY, event("message.start", sid), event("message.delta", sid, {"text": "partial  "})])
    fake.handlers["x.never"] = lambda *a: asyncio.sleep(3600)
    turn = await conn.submit(ref, "go")
    pending = asyncio.ensure_future(conn.request("x.never", {}))
    await fake.wait_for("x.never")
    await eventually_async(lambda: len(turn.changes) >= 3)
    await fake.drop()
    with pytest.raises(HermesGatewayClosedError):
        await turn
    with pytest.raises(HermesGatewayClosedError):
        await pending
    changes = [c async for c in _drain(turn)]
    assert changes[-1]["op"] == "finish" and changes[-1]["status"] == "error"
    assert turn.message.parts[0].text == "partial"  # trimmed at the end of the turn
    assert "closed" in (turn.message.error or "")
    assert [i.status for i in items if i.kind == "connection"] == ["disconnected"]
    with pytest.raises(HermesGatewayClosedError):  # reconnect=False: nothing reconnects behind our back
        await conn.request("x.any", {})


async def _drain(turn: Any) -> AsyncIterator[dict[str, Any]]:
    try:
        async for change in turn:
            yield change
    except HermesGatewayClosedError:
        return


async def test_interrupted_turn_cancels_running_tools(fake: FakeDashboard, conn: DashboardConnection) -> None:
    """message.complete{interrupted} with a tool still running marks that tool cancelled and trims text."""
    ref = await conn.create_session()
    sid = ref.live_id
    fake.script(
        sid,
        [
            REPLY,
            event("message.start", sid),
            event("message.delta", sid, {"text": "working on it \n"}),
            event("tool.start", sid, {"tool_id": "call_1", "name": "terminal", "context": "sleep 99"}),
            event("message.complete", sid, {"text": "working on it", "status": "interrupted"}),
        ],
    )
    message = await (await conn.submit(ref, "go"))
    assert message.status == "interrupted"
    assert [(p.id, p.status) for p in message.parts if p.kind == "tool"] == [("tool:call_1", "cancelled")]
    assert message.parts[0].text == "working on it"


async def test_unsolicited_turn_goes_to_listeners(fake: FakeDashboard, conn: DashboardConnection) -> None:
    """A turn nobody submitted (goal/background, §7) is folded and handed to listeners with its changes."""
    ref = await conn.create_session()
    sid = ref.live_id
    items: list[ListenerItem] = []
    off = conn.listen(ref, items.append)
    for frame in (
        event("status.update", sid, {"kind": "process", "text": "bg done"}),
        event("message.start", sid),
        event("message.start", sid),
        event("message.delta", sid, {"text": "background result"}),
        event("message.complete", sid, {"text": "background result", "status": "complete"}),
    ):
        await fake.send(frame)
    await eventually_async(lambda: len(items) == 5)
    assert [i.event.type for i in items if i.event] == [
        "status.update",
        "message.start",
        "message.start",
        "message.delta",
        "message.complete",
    ]
    turn_ids = {i.turn_id for i in items[1:]}
    assert len(turn_ids) == 1 and next(iter(turn_ids)).startswith("unsolicited-")
    assert items[0].turn_id is None
    assert items[-1].changes and items[-1].changes[-1]["op"] == "finish"
    off()
    seen: list[ListenerItem] = []
    conn.listen(
        ref, seen.append
    )  # listeners get each event in turn: once this one has it, a removed one would too
    await fake.send(event("message.start", sid))
    await eventually_async(lambda: bool(seen))
    assert len(items) == 5


async def test_listener_that_raises_is_reported(
    fake: FakeDashboard, conn: DashboardConnection, errors: Errors
) -> None:
    """A failing callback goes to on_error("listener") and the other callbacks still run."""
    ref = await conn.create_session()
    seen: list[str] = []

    def bad(item: ListenerItem) -> None:
        raise RuntimeError("callback bug")

    conn.listen(ref, bad)
    conn.listen(ref, lambda item: seen.append(item.event.type if item.event else ""))
    await (await conn.submit(ref, "go"))
    assert "message.complete" in seen
    assert errors and {kind for kind, _ in errors} == {"listener"}
    assert str(errors[0][1]) == "callback bug"


async def test_busy_submits_queue_and_merge(fake: FakeDashboard, conn: DashboardConnection) -> None:
    """Queued submits report "queued"; two merged into the one queue slot end together (§3.1)."""
    ref = await conn.create_session()
    sid = ref.live_id
    fake.script(sid, [REPLY, event("message.start", sid), event("message.delta", sid, {"text": "first"})])
    queued = {"id": "REPLY", "result": {"status": "queued"}}
    fake.script(sid, [queued])
    fake.script(sid, [queued])
    first = await conn.submit(ref, "one")
    second = await conn.submit(ref, "two")
    third = await conn.submit(ref, "three")
    assert (first.status, second.status, third.status) == ("streaming", "queued", "queued")
    assert second.changes[-1]["message"]["status"] == "queued"
    for frame in (
        event("message.complete", sid, {"text": "first", "status": "interrupted"}),
        event("message.start", sid),
        event("message.delta", sid, {"text": "merged"}),
        event("message.complete", sid, {"text": "merged", "status": "complete"}),
    ):
        await fake.send(frame)
    assert (await first).status == "interrupted"
    assert (await second).parts[0].text == "merged"
    assert (await third).parts[0].text == "merged"
    assert third.message.id != second.message.id


async def test_interrupt_drops_queued_turns(fake: FakeDashboard, conn: DashboardConnection) -> None:
    """session.interrupt also clears the queued prompt, so a queued turn ends cancelled."""
    ref = await conn.create_session()
    sid = ref.live_id
    fake.script(sid, [REPLY, event("message.start", sid)])
    fake.script(sid, [{"id": "REPLY", "result": {"status": "queued"}}])
    running = await conn.submit(ref, "one")
    waiting = await conn.submit(ref, "two")
    await waiting.interrupt()
    assert (await waiting).status == "cancelled"
    assert fake.requests("session.interrupt")[0]["params"] == {"session_id": sid}
    await fake.send(event("message.complete", sid, {"text": "", "status": "interrupted"}))
    assert (await running).status == "interrupted"


async def test_non_image_attachment_sends_nothing(fake: FakeDashboard, conn: DashboardConnection) -> None:
    """A non-image attachment raises UNSUPPORTED_ATTACHMENT before any frame is sent."""
    ref = await conn.create_session()
    before = len(fake.received)
    with pytest.raises(HermesUnsupportedAttachmentError) as info:
        await conn.submit(ref, "look", images=[("image/png", b"\x89PNG"), ("application/pdf", b"%PDF-1.4")])
    assert info.value.code == "UNSUPPORTED_ATTACHMENT"
    with pytest.raises(HermesUnsupportedAttachmentError):
        await conn.submit(ref, "look", images=["notes.txt"])
    await conn.request(
        "test.barrier", {}
    )  # frames arrive in order: whatever the refused submits sent is in by now
    assert [f.get("method") if isinstance(f, dict) else f for f in fake.received[before:]] == ["test.barrier"]


async def test_images_are_attached_before_the_prompt(
    fake: FakeDashboard, conn: DashboardConnection, tmp_path: Any
) -> None:
    """Inline images and image paths go as image.attach_bytes (base64) ahead of prompt.submit."""
    ref = await conn.create_session()
    path = tmp_path / "pic.jpg"
    path.write_bytes(b"\xff\xd8\xff\xe0jpeg")
    await (await conn.submit(ref, "look", images=[("image/png", b"\x89PNGdata"), path]))
    methods = [
        f["method"] for f in fake.requests() if f["method"] not in ("session.create", "client.capabilities")
    ]
    assert methods == ["image.attach_bytes", "image.attach_bytes", "prompt.submit"]
    first, second = fake.requests("image.attach_bytes")
    assert first["params"] == {"session_id": ref.live_id, "content_base64": "iVBOR2RhdGE=", "ext": "png"}
    assert second["params"]["ext"] == "jpg"


async def test_wrong_token_is_an_auth_error_without_the_token(fake: FakeDashboard, caplog: Any) -> None:
    """A 403 handshake raises HermesAuthError; the token is in no message, repr, traceback or log line."""
    secret = "wrong-token-do-not-leak-42"
    caplog.set_level(logging.DEBUG)
    conn = DashboardConnection(fake.settings(token=secret), reconnect=False)
    with pytest.raises(HermesAuthError) as info:
        await conn.connect()
    text = "".join(traceback.format_exception(info.value)) + repr(info.value) + repr(conn) + caplog.text
    assert info.value.status == 403
    assert "token" in str(info.value)
    assert secret not in text
    assert "?token=********" in caplog.text  # websockets' own DEBUG request line, scrubbed
    await conn.close()


async def test_closed_connection_ends_turns_and_refuses_calls(
    fake: FakeDashboard, conn: DashboardConnection
) -> None:
    """close() ends open turns as cancelled, and later calls raise HermesClosedError."""
    ref = await conn.create_session()
    fake.script(ref.live_id, [REPLY, event("message.start", ref.live_id)])
    turn = await conn.submit(ref, "go")
    await conn.close()
    assert (await turn).status == "cancelled"
    with pytest.raises(HermesClosedError):
        await conn.create_session()
    with pytest.raises(HermesClosedError):
        conn.listen(ref, print)


async def test_respond_routes_each_interaction_kind(fake: FakeDashboard, conn: DashboardConnection) -> None:
    """Approval, clarify, sudo and secret answers use their own methods; sudo is recorded redacted."""
    ref = await conn.create_session()
    sid = ref.live_id
    fake.script(
        sid,
        [
            REPLY,
            event("message.start", sid),
            event("tool.start", sid, {"tool_id": "t1", "name": "terminal", "context": "rm -rf x"}),
            event(
                "approval.request",
                sid,
                {
                    "command": "rm -rf x",
                    "description": "recursive delete",
                    "choices": ["once", "session", "deny"],
                },
            ),
            event("sudo.request", sid, {"request_id": "s1"}),
            event("clarify.request", sid, {"request_id": "c1", "question": "A or B?", "choices": ["A", "B"]}),
        ],
    )
    turn = await conn.submit(ref, "go")
    await eventually_async(
        lambda: (
            len(turn.message.parts) == 3
            or any(p.interaction and p.interaction.request_id == "c1" for p in turn.message.parts)
        )
    )
    await conn.respond(ref, "approval-1", "deny")
    await conn.respond(ref, "s1", "hunter2")
    await conn.request("clarify.respond", {"request_id": "c1", "answer": "B"})
    sent = {f["method"]: f["params"] for f in fake.requests() if f["method"].endswith(".respond")}
    assert sent == {
        "approval.respond": {"session_id": sid, "choice": "deny"},
        "sudo.respond": {"request_id": "s1", "password": "hunter2"},
        "clarify.respond": {"request_id": "c1", "answer": "B"},
    }
    answers = {
        p.interaction.request_id: (p.interaction.status, p.interaction.response)
        for p in turn.message.parts
        if p.interaction
    }
    assert answers == {
        "approval-1": ("answered", "deny"),
        "s1": ("answered", "********"),
        "c1": ("answered", "B"),
    }
    assert "hunter2" not in repr(turn.changes)


async def test_server_requests_we_do_not_handle_are_refused_at_once(
    fake: FakeDashboard, conn: DashboardConnection
) -> None:
    """A server -> client request other than a prompt (e.g. a desktop theme picker) is answered -32601 at
    once, so the agent never waits out a timeout on us. A prompt is never refused (that would withdraw it)."""
    ref = await conn.create_session()
    await fake.send(
        {"jsonrpc": "2.0", "id": "srq-other", "method": "approval", "params": {"session_id": "later"}}
    )
    await fake.send(
        {"jsonrpc": "2.0", "id": "srq-theme", "method": "theme.pick", "params": {"session_id": ref.live_id}}
    )
    # Requests are handled in order: once the last one is answered, an answer to the prompt would be in too.
    await fake.send(
        {"jsonrpc": "2.0", "id": "srq-last", "method": "theme.pick", "params": {"session_id": ref.live_id}}
    )
    await eventually_async(
        lambda: any(isinstance(f, dict) and f.get("id") == "srq-last" for f in fake.received)
    )
    answers = {f["id"]: f["error"]["code"] for f in fake.received if isinstance(f, dict) and "error" in f}
    assert answers == {"srq-theme": -32601, "srq-last": -32601}


async def test_a_prompt_request_becomes_an_interaction_answered_by_a_result_frame(
    fake: FakeDashboard, conn: DashboardConnection
) -> None:
    """An approval server request hangs on the open turn; respond() sends {"choice"} under the srq id (no
    RPC), and a later request.cancel for another prompt ends that one with its reason."""
    ref = await conn.create_session()
    sid = ref.live_id
    srq = {
        "jsonrpc": "2.0",
        "id": "srq-a1",
        "method": "approval",
        "params": {
            "session_id": sid,
            "command": "rm -rf x",
            "description": "recursive delete",
            "choices": ["once", "deny"],
        },
    }
    clarify = {
        "jsonrpc": "2.0",
        "id": "srq-c1",
        "method": "clarify",
        "params": {"session_id": sid, "questions": [{"qid": "q0", "question": "Go?", "choices": None}]},
    }
    cancel = event("request.cancel", sid, {"id": "srq-c1", "method": "clarify", "reason": "timeout"})
    fake.script(
        sid,
        [
            REPLY,
            event("message.start", sid),
            srq,
            clarify,
            0.3,
            cancel,
            0.3,
            event("message.complete", sid, {"text": "done", "status": "complete"}),
        ],
    )
    turn = await conn.submit(ref, "go")
    await eventually_async(lambda: len(turn.pending()) == 2)
    await conn.respond(ref, "srq-a1", "once")
    message = await turn
    assert [f for f in fake.received if isinstance(f, dict) and f.get("id") == "srq-a1"] == [
        {"jsonrpc": "2.0", "id": "srq-a1", "result": {"choice": "once"}}
    ]
    assert not fake.requests("approval.respond")
    states = {
        p.interaction.request_id: (p.interaction.status, p.interaction.reason)
        for p in message.parts
        if p.interaction is not None
    }
    assert states == {"srq-a1": ("answered", None), "srq-c1": ("expired", "timeout")}


def _active_list(statuses: list[str]) -> Any:
    """A ``session.active_list`` handler answering each call with the next status for every session."""

    async def handler(server: FakeDashboard, ws: Any, frame: dict[str, Any]) -> None:
        status = statuses.pop(0) if len(statuses) > 1 else statuses[0]
        rows = [{"id": f"live{n}", "status": status} for n in range(1, server._count + 1)]
        await server._reply(ws, frame, {"sessions": rows})

    return handler


async def _stopped_before_it_starts(
    fake: FakeDashboard, conn: DashboardConnection, statuses: list[str]
) -> Turn:
    """A turn the server accepted (``streaming``) and then sent nothing for, stopped at once;
    ``session.active_list`` answers with ``statuses`` in turn (the last one repeats)."""
    ref = await conn.create_session()
    fake.script(ref.live_id, [REPLY])
    fake.handlers["session.active_list"] = _active_list(statuses)
    turn = await conn.submit(ref, "SLOW 40")
    await turn.interrupt()
    return turn


async def test_a_stop_the_server_drops_before_the_turn_starts_ends_the_turn(
    fake: FakeDashboard, conn: DashboardConnection
) -> None:
    """0.19.0 answers ``streaming``, then drops a turn stopped before its agent is ready with no event at all;
    once the session is idle the turn ends cancelled instead of waiting forever."""
    turn = await _stopped_before_it_starts(fake, conn, ["starting", "working", "idle"])
    message = await asyncio.wait_for(turn, 10)
    assert message.status == "cancelled" and message.error is None
    assert len(fake.requests("session.active_list")) == 3
    assert len(fake.requests("session.interrupt")) == 1
    assert conn.open_turns(turn.ref) == 0  # the session takes the next prompt as its own turn


async def test_a_stop_lost_before_the_turn_starts_is_sent_again_once_it_starts(
    fake: FakeDashboard, conn: DashboardConnection
) -> None:
    """A stop that landed before the agent cleared its interrupt flag is lost: it goes again at
    message.start."""
    turn = await _stopped_before_it_starts(fake, conn, ["working"])
    sid = turn.ref.live_id
    await fake.wait_for("session.active_list")
    await fake.send(event("message.start", sid))
    await fake.wait_for("session.interrupt", count=2)
    await fake.send(event("message.complete", sid, {"text": "tick 0", "status": "interrupted"}))
    assert (await turn).status == "interrupted"


async def test_a_newer_servers_error_for_a_turn_stopped_before_it_started_is_a_cancel(
    fake: FakeDashboard, conn: DashboardConnection
) -> None:
    """Newer servers say "Turn cancelled before the agent was ready" as an ``error`` event: ours, not a
    failure."""
    turn = await _stopped_before_it_starts(fake, conn, ["starting"])
    await fake.send(
        event("error", turn.ref.live_id, {"message": "Turn cancelled before the agent was ready"})
    )
    message = await asyncio.wait_for(turn, 5)
    assert message.status == "cancelled" and message.error is None


async def test_an_error_before_a_turn_starts_without_a_stop_is_still_an_error(
    fake: FakeDashboard, conn: DashboardConnection
) -> None:
    """Without our stop, an ``error`` before message.start stays the failure it is (agent init failed)."""
    ref = await conn.create_session()
    sid = ref.live_id
    fake.script(sid, [REPLY, event("error", sid, {"message": "agent initialization failed"})])
    turn = await conn.submit(ref, "hello")
    with pytest.raises(HermesRunError, match="agent initialization failed"):
        await asyncio.wait_for(turn, 5)


async def _newer_capabilities(server: FakeDashboard, ws: Any, frame: dict[str, Any]) -> None:
    """``client.capabilities`` as a newer server answers it: prompts come as server requests."""
    await server._reply(ws, frame, {"server_requests": ["approval", "clarify", "sudo", "secret"]})


def _clarify_lock(answers: list[Any]) -> Any:
    """A ``clarify.lock`` handler answering each call with the next scripted result (an error dict or a
    result)."""

    async def handler(server: FakeDashboard, ws: Any, frame: dict[str, Any]) -> None:
        answer = answers.pop(0)
        if "code" in answer:
            await ws.send(json.dumps({"jsonrpc": "2.0", "id": frame["id"], "error": answer}))
        else:
            await server._reply(ws, frame, answer)

    return handler


async def _two_question_clarify(fake: FakeDashboard, errors: Errors) -> tuple[DashboardConnection, Any, Any]:
    fake.handlers["client.capabilities"] = _newer_capabilities
    conn = DashboardConnection(fake.settings(), reconnect=False, on_error=errors)
    await conn.connect()
    ref = await conn.create_session()
    sid = ref.live_id
    clarify = {
        "jsonrpc": "2.0",
        "id": "srq-c2",
        "method": "clarify",
        "params": {
            "session_id": sid,
            "questions": [
                {
                    "qid": "q0",
                    "question": "Pick one",
                    "choices": ["A (Recommended)", "B"],
                    "multi_select": False,
                },
                {"qid": "q1", "question": "Your name?", "choices": None, "multi_select": False},
            ],
        },
    }
    fake.script(
        sid,
        [
            REPLY,
            event("message.start", sid),
            clarify,
            0.5,
            event("message.complete", sid, {"text": "done", "status": "complete"}),
        ],
    )
    turn = await conn.submit(ref, "go")
    await eventually_async(lambda: len(turn.pending()) == 1)
    return conn, ref, turn


async def test_a_clarify_answer_settled_first_on_the_server_says_so(
    fake: FakeDashboard, errors: Errors
) -> None:
    """A multi-question answer goes as acknowledged clarify.lock calls; one the server answers ``expired``
    (the request settled there first, e.g. timed out) raises naming the request instead of vanishing."""
    fake.handlers["clarify.lock"] = _clarify_lock(
        [{"status": "ok", "remaining": ["q1"]}, {"status": "expired"}]
    )
    conn, ref, turn = await _two_question_clarify(fake, errors)
    try:
        with pytest.raises(HermesUsageError, match="srq-c2 was already settled"):
            await conn.respond(ref, "srq-c2", json.dumps({"q0": "B", "q1": "Ann"}))
        assert [f["params"] for f in fake.requests("clarify.lock")] == [
            {"request_id": "srq-c2", "question_id": "q0", "answer": "B"},
            {"request_id": "srq-c2", "question_id": "q1", "answer": "Ann"},
        ]
        assert not [f for f in fake.received if isinstance(f, dict) and f.get("id") == "srq-c2"]
        await turn
    finally:
        await conn.close()


async def test_a_server_without_clarify_lock_gets_the_result_frame(
    fake: FakeDashboard, errors: Errors
) -> None:
    """A server that does not know clarify.lock (-32601) gets the whole answer as one result frame, and the
    interaction is recorded answered."""
    fake.handlers["clarify.lock"] = _clarify_lock(
        [{"code": -32601, "message": "unknown method: clarify.lock"}]
    )
    conn, ref, turn = await _two_question_clarify(fake, errors)
    try:
        await conn.respond(ref, "srq-c2", json.dumps({"q0": "B", "q1": None}))
        await eventually_async(
            lambda: any(isinstance(f, dict) and f.get("id") == "srq-c2" for f in fake.received)
        )
        assert [f for f in fake.received if isinstance(f, dict) and f.get("id") == "srq-c2"] == [
            {"jsonrpc": "2.0", "id": "srq-c2", "result": {"answers": {"q0": "B", "q1": None}}}
        ]
        message = await turn
        inter = next(p.interaction for p in message.parts if p.interaction is not None)
        assert inter.status == "answered" and len(fake.requests("clarify.lock")) == 1
    finally:
        await conn.close()
