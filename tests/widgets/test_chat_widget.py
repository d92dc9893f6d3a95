"""Kernel-side tests of ``Chat``: mostly with a scripted in-memory connection (no Hermes, no browser).

The fake connection speaks the ``DashboardConnection`` surface the chat uses (create_session, resume, history,
sessions, listen, submit -> Turn-like change stream, respond, request, interrupt) and folds events with the
real ``TurnFolder``, so the change records are the real ones. Browser messages are fed through the widget's
comm handler exactly as the front end sends them, and everything the widget sends is captured. The last test
drives a chat on the real Dashboard (the ``hermes`` fixture).
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
import uuid
from collections.abc import Callable
from typing import Any

import pytest

from hermes_notebook import runtime
from hermes_notebook.errors import HermesGatewayClosedError, HermesRPCError
from hermes_notebook.settings import Settings
from hermes_notebook.turns import TurnFolder, user_message
from hermes_notebook.turns.events import Event
from hermes_notebook.widgets import Chat
from hermes_notebook.widgets._stream import change_weight
from tests.helpers import MoreReader, eventually, expand_more

pytestmark = pytest.mark.both_servers  # real-server tests run on 0.19.0 and newer Hermes

API_KEY = "sk-test-api-key-0123456789abcdef"
TOKEN = "dash-token-0123456789abcdef"
SUDO_PASSWORD = "hunter2-very-secret"


class FakeTurn:
    """A submitted turn: the user message, then whatever events the test feeds, folded by the real model."""

    def __init__(self, turn_id: str, text: str) -> None:
        self.id = turn_id
        self.text = text
        self.folder = TurnFolder(turn_id)
        self.changes: list[dict[str, Any]] = [
            {"op": "message", "message": user_message(turn_id, text).to_dict()}
        ]
        self.changes.extend(self.folder.begin())
        self.error: BaseException | None = None
        self._wake = asyncio.Event()

    @property
    def message(self) -> Any:
        """The assistant message so far (what the turn runner reads when the turn ends)."""
        return self.folder.message

    def feed(self, type_: str, **payload: Any) -> None:
        """Apply one Dashboard event (call on the package loop)."""
        self._push(self.folder.apply(Event(type_, payload, "live-1")))

    def fail(self, error: BaseException) -> None:
        self.error = error
        self._push(self.folder.finish("error", str(error)))

    def drop(self, error: BaseException) -> None:
        """The connection dropped under the turn: iteration raises ``error``; the folder never sees an end."""
        self.error = error
        self._wake.set()

    def _push(self, changes: list[dict[str, Any]]) -> None:
        self.changes.extend(changes)
        self._wake.set()

    async def __aiter__(self):  # type: ignore[override]
        i = 0
        while True:
            while i < len(self.changes):
                yield self.changes[i]
                i += 1
            if self.folder.done or self.error is not None:
                break
            self._wake.clear()
            await self._wake.wait()
        if self.error is not None:
            raise self.error


class Ref:
    def __init__(self, stored_id: str) -> None:
        self.live_id = "live-1"
        self.stored_id = stored_id
        self.title: str | None = None


class FakeConnection:
    """Records every call; turns are driven by the test through :meth:`feed`."""

    def __init__(self, history: list[dict[str, Any]] | None = None) -> None:
        self.settings = Settings(api_key=API_KEY, dashboard_token=TOKEN)
        self.calls: list[tuple[str, Any]] = []
        self.turn_ids: list[str | None] = []  # the turn_id each submit was given
        self.more_sessions: list[dict[str, Any]] = []
        self.change_listeners: list[Callable[[str], None]] = []
        self.turns: list[FakeTurn] = []
        self.histories: dict[str, list[dict[str, Any]]] = {"stored-1": list(history or [])}
        self.listeners: list[Callable[[Any], None]] = []
        self.submit_error: BaseException | None = None

    async def create_session(self) -> Ref:
        self.calls.append(("create_session", None))
        return Ref("stored-new")

    async def resume(self, stored_id: str) -> Ref:
        self.calls.append(("resume", stored_id))
        return Ref(stored_id)

    async def history(self, stored_id: str) -> list[dict[str, Any]]:
        self.calls.append(("history", stored_id))
        return list(self.histories.get(stored_id, []))

    async def sessions(self) -> list[dict[str, Any]]:
        return [
            {"id": "stored-1", "title": "First", "preview": "hi"},
            {"id": "stored-2", "title": None, "preview": ""},
            *self.more_sessions,
        ]

    def on_change(self, callback: Callable[[str], None]) -> Callable[[], None]:
        self.change_listeners.append(callback)
        return lambda: self.change_listeners.remove(callback)

    def held(self, stored_id: Any) -> bool:
        """A fake turn ends when the test says, with no post-turn work after it: never held."""
        return False

    def listen(self, stored_id: str, callback: Callable[[Any], None]) -> Callable[[], None]:
        self.listeners.append(callback)
        return lambda: self.listeners.remove(callback)

    async def submit(
        self, ref: Ref, text: str, images: Any = None, *, turn_id: str | None = None
    ) -> FakeTurn:
        self.calls.append(("submit", (text, images)))
        if self.submit_error is not None:
            raise self.submit_error
        self.turn_ids.append(turn_id)
        turn = FakeTurn(f"t{len(self.turns) + 1}", text)
        self.turns.append(turn)
        return turn

    async def respond(self, ref: Ref, request_id: str, response: str) -> None:
        self.calls.append(("respond", (request_id, response)))
        turn = self.turns[-1]
        turn._push(turn.folder.answer(request_id, response))

    async def request(self, method: str, params: dict[str, Any]) -> Any:
        # Record only that a value arrived (a test asserts it is the one typed), never keep it around.
        self.calls.append(("request", (method, params["request_id"], sorted(params))))
        self.last_secret_ok = SUDO_PASSWORD in params.values()
        turn = self.turns[-1]
        turn._push(turn.folder.answer(params["request_id"], "x"))
        return {"status": "ok"}

    async def interrupt(self, ref: Ref) -> None:
        self.calls.append(("interrupt", ref.stored_id))
        runtime.call_soon(lambda: self.turns[-1]._push(self.turns[-1].folder.finish("interrupted")))

    async def close(self) -> None:
        self.calls.append(("close", None))

    # test helpers (called from the test thread)
    def feed(self, type_: str, **payload: Any) -> None:
        runtime.call_soon(lambda: self.turns[-1].feed(type_, **payload))

    def notify(self, **fields: Any) -> None:
        item = type("Item", (), fields)()
        for callback in list(self.listeners):
            callback(item)


class Sent:
    """Captures the widget's custom messages with their send time."""

    def __init__(self, chat: Chat) -> None:
        self.items: list[tuple[float, dict[str, Any]]] = []
        chat.send = self._send  # type: ignore[method-assign]

    def _send(self, content: dict[str, Any], buffers: Any = None) -> None:
        self.items.append((time.monotonic(), json.loads(json.dumps(content))))

    def of(self, type_: str) -> list[dict[str, Any]]:
        """The messages of one type, short ``more`` batches read as the ``changes`` they stand for."""
        return [c for c in expand_more(c for _, c in self.items) if c["type"] == type_]


def browser(chat: Chat, **content: Any) -> None:
    """Deliver a message as the front end would (through the comm handler)."""
    chat._dispatch(chat, content, [])


def answer(
    chat: Chat, request_id: str, response: str, *, message_id: str = "assistant:t1", part_id: str = "tool:c1"
) -> None:
    """A click on a card's choice, as the front end sends it."""
    browser(
        chat, type="respond", message_id=message_id, part_id=part_id, request_id=request_id, response=response
    )


@pytest.fixture
def conn() -> FakeConnection:
    return FakeConnection()


@pytest.fixture
def chat(conn: FakeConnection):
    widget = Chat(conn, session="stored-1")
    widget.wait_ready(5)
    yield widget
    widget.close()


def start_turn(chat: Chat, conn: FakeConnection, text: str = "hello") -> FakeTurn:
    browser(chat, type="send", text=text, images=[])
    eventually(lambda: conn.turns and chat.busy, what="turn started")
    return conn.turns[-1]


# ------------------------------------------------------------------------------------------------------------


def test_opens_session_with_history_and_picker(conn: FakeConnection) -> None:
    """Resuming a session loads its history, names it, and fills the session picker."""
    conn.histories["stored-1"] = [user_message("h1", "earlier question").to_dict()]
    chat = Chat(conn, session="stored-1").wait_ready(5)
    try:
        assert ("resume", "stored-1") in conn.calls and ("history", "stored-1") in conn.calls
        assert [m["id"] for m in chat.snapshot()] == ["user:h1"]
        assert [e["id"] for e in chat.index] == ["user:h1"]
        eventually(lambda: chat.sessions, what="session list")
        assert chat.sessions[0] == {"id": "stored-1", "title": "First"}  # no preview in synced state
        assert chat.session == {"id": "stored-1", "title": "First"}
    finally:
        chat.close()


def test_new_session_without_id(conn: FakeConnection) -> None:
    """Without a session id the chat creates a new session and starts empty."""
    chat = Chat(conn).wait_ready(5)
    try:
        assert ("create_session", None) in conn.calls
        assert chat.session_id == "stored-new" and chat.snapshot() == [] and chat.index == []
    finally:
        chat.close()


def test_user_message_shows_before_the_turn_and_turn_streams(chat: Chat, conn: FakeConnection) -> None:
    """The prompt appears at once, deltas stream as coalesced appends, and the finished turn is in the
    index."""
    sent = Sent(chat)
    turn = start_turn(chat, conn, "hello there")
    assert any(
        m["id"].startswith("user:") and m["parts"][0]["text"] == "hello there" for m in chat.snapshot()
    )
    for word in ["Hi", " there", ", friend"]:
        conn.feed("message.delta", text=word)
    conn.feed("message.complete", text="Hi there, friend", status="complete", usage={"input": 3, "output": 4})
    eventually(lambda: not chat.busy, what="turn end")
    final = next(m for m in chat.snapshot() if m["id"] == f"assistant:{turn.id}")
    assert final["status"] == "complete" and final["parts"][0]["text"] == "Hi there, friend"
    assert final["usage"] == {"input": 3, "output": 4}
    entry = eventually(
        lambda: next((e for e in chat.index if e["id"] == final["id"] and e["status"] == "complete"), None),
        what="index entry",
    )
    assert entry["usage"] == {"input": 3, "output": 4} and entry["role"] == "assistant"
    # The turn's own user message is not shown twice.
    assert sum(m["role"] == "user" for m in chat.snapshot()) == 1
    ops = lambda: [c["op"] for b in sent.of("changes") for c in b["changes"]]  # noqa: E731
    eventually(lambda: "finish" in ops(), what="finish streamed")
    assert "append" in ops()


def test_coalesces_20000_deltas_to_at_most_30_batches_per_second(chat: Chat, conn: FakeConnection) -> None:
    """20,000 tiny deltas over about a second reach the browser in at most 30 batches per second, text
    intact."""
    sent = Sent(chat)
    turn = start_turn(chat, conn)
    chunks = [f"w{i:05d} " for i in range(20_000)]

    async def paced() -> None:
        for i in range(0, len(chunks), 500):
            for chunk in chunks[i : i + 500]:
                turn._push(turn.folder.apply(Event("message.delta", {"text": chunk}, "live-1")))
            await asyncio.sleep(0.025)

    runtime.run_sync(paced(), timeout=30)
    conn.feed("message.complete", status="complete")
    eventually(lambda: not chat.busy, what="turn end")
    eventually(
        lambda: any(c["op"] == "finish" for b in sent.of("changes") for c in b["changes"]), what="last batch"
    )
    times = [t for t, c in sent.items if c["type"] in ("changes", "more")]
    assert len(times) >= 10
    worst = max(sum(1 for u in times if t <= u < t + 1.0) for t in times)
    assert worst <= 30, f"{worst} batches in one second"
    streamed = "".join(
        c["part"]["text"] if c["op"] == "part" else c["text"]
        for b in sent.of("changes")
        for c in b["changes"]
        if c["op"] == "append" or (c["op"] == "part" and c["part"]["kind"] == "text")
    )
    assert streamed == "".join(chunks)
    final = next(m for m in chat.snapshot() if m["id"] == f"assistant:{turn.id}")
    assert final["parts"][0]["text"] == "".join(chunks).rstrip()


def test_snapshot_answer_carries_the_seq_of_what_it_contains(chat: Chat, conn: FakeConnection) -> None:
    """A snapshot mid-stream holds everything sent so far and its seq; later batches have larger seqs."""
    sent = Sent(chat)
    start_turn(chat, conn)
    conn.feed("message.delta", text="part one ")
    eventually(lambda: "part one" in json.dumps(chat.snapshot()), what="first delta")
    browser(chat, type="snapshot")
    snap = sent.of("snapshot")[-1]
    before = [b["seq"] for b in sent.of("changes")]
    assert before and snap["seq"] == max(before)
    live = next(m for m in snap["messages"] if m["id"].startswith("assistant:"))
    assert live["status"] == "streaming" and live["parts"][0]["text"] == "part one "
    conn.feed(
        "message.delta", text="part two "
    )  # a finished word: the scrubber holds back only an unfinished one
    eventually(lambda: any(b["seq"] > snap["seq"] for b in sent.of("changes")), what="a newer batch")
    newer = [b for b in sent.of("changes") if b["seq"] > snap["seq"]]
    assert any(c.get("text") == "part two " for b in newer for c in b["changes"])


class Wire:
    """Everything the widget sends to its views, in order: custom messages, the index entries riding in them,
    and ``settled_seq`` updates."""

    def __init__(self, chat: Chat) -> None:
        self.items: list[tuple[str, Any]] = []
        self.custom_bytes = 0
        self.index_bytes = 0
        self._reader = MoreReader()
        chat.send = self._send  # type: ignore[method-assign]
        chat.observe(self._settled_seq, names="settled_seq")

    def _send(self, content: dict[str, Any], buffers: Any = None) -> None:
        self.custom_bytes += len(json.dumps(content, separators=(",", ":"), ensure_ascii=False).encode())
        self.items.append(("custom", self._reader.read(json.loads(json.dumps(content)))))
        if "index" in content:
            self.index_bytes += len(json.dumps(content["index"], separators=(",", ":")))
            self.items.append(("index", json.loads(json.dumps(content["index"]))))

    def _settled_seq(self, change: dict[str, Any]) -> None:
        # What ipywidgets sends for it, as JSON (not part of the custom bytes).
        self.index_bytes += len(
            json.dumps(
                {"method": "update", "state": {"settled_seq": change["new"]}, "buffer_paths": []},
                separators=(",", ":"),
            )
        )
        self.items.append(("settled_seq", change["new"]))

    def indexes(self) -> list[list[dict[str, Any]]]:
        return [v for kind, v in self.items if kind == "index"]


def replay_revs(items: list[tuple[str, Any]]) -> list[tuple[dict[str, int], list[dict[str, Any]]]]:
    """Follow the wire like a view that saw all of it: for each batch's index entries, the revs it holds
    then."""
    revs: dict[str, int] = {}
    seq = -1
    seen: list[tuple[dict[str, int], list[dict[str, Any]]]] = []
    for kind, value in items:
        if kind == "index":
            seen.append((dict(revs), value))
        elif kind != "custom":
            continue
        elif value["type"] == "snapshot" and value["seq"] >= seq:
            revs, seq = dict(value["revs"]), value["seq"]
        elif value["type"] == "changes" and value["seq"] > seq:
            seq = value["seq"]
            for c in value["changes"]:
                mid = c["message"]["id"] if c["op"] == "message" else c["message_id"]
                revs[mid] = revs.get(mid, 0) + change_weight(c)
    return seen


def index_settled(chat: Chat, turn: FakeTurn) -> None:
    """Wait until the views were sent the turn's reply finished (its entry rides in a batch, up to a tick
    later)."""
    mid = f"assistant:{turn.id}"
    eventually(
        lambda: (
            any(e["id"] == mid and e["status"] != "streaming" for e in chat.index)
            and not chat._settled
            and not chat._coalescer._buffer
        ),
        what="index settled",
    )


def test_index_changes_only_at_boundaries(chat: Chat, conn: FakeConnection) -> None:
    """Deltas carry no index entries; a message settling (the prompt, the reply's end) sends its entry,
    once."""
    wire = Wire(chat)
    start_turn(chat, conn)
    conn.feed("message.delta", text="first ")
    eventually(lambda: "first" in json.dumps(chat.snapshot()), what="reply started")
    chat.flush()  # whatever the applied records call for has been sent after this
    assert [[e["id"] for e in v] for v in wire.indexes()] == [[chat.index[0]["id"]]]  # the user message only
    at_start = len(wire.indexes())
    for i in range(500):
        conn.feed("message.delta", text=f"{i} ")
    eventually(lambda: "499" in json.dumps(chat.snapshot()), what="deltas applied")
    chat.flush()
    assert len(wire.indexes()) == at_start
    conn.feed("message.complete", status="complete")
    eventually(lambda: not chat.busy, what="turn end")
    eventually(lambda: len(wire.indexes()) == at_start + 1, what="end boundary")
    chat.flush()
    assert len(wire.indexes()) == at_start + 1
    assert [e["status"] for e in wire.indexes()[-1]] == ["complete"]
    assert chat.index[-1]["status"] == "complete"
    # settled_seq names the batch that carried the last entries.
    last = [v for kind, v in wire.items if kind == "custom" and "index" in v][-1]
    assert chat.settled_seq == last["seq"]
    assert "index" not in chat.get_state()


def test_index_is_compact_and_never_holds_part_text(chat: Chat, conn: FakeConnection) -> None:
    """Every `index` value has only id/role/status/usage/error/rev per message: no prompt or reply text."""
    wire = Wire(chat)
    turn = start_turn(chat, conn, "PROMPT-MARKER what now")
    conn.feed("reasoning.delta", text="REASONING-MARKER ")
    conn.feed("tool.start", tool_id="c1", name="terminal", context="TOOL-MARKER ls")
    conn.feed("tool.complete", tool_id="c1", result="RESULT-MARKER")
    for i in range(200):
        conn.feed("message.delta", text=f"REPLY-MARKER{i} ")
    conn.feed("message.complete", status="complete", usage={"input": 5, "output": 200})
    eventually(lambda: not chat.busy, what="turn end")
    index_settled(chat, turn)
    assert wire.indexes()
    for value in [*wire.indexes(), chat.index]:
        for entry in value:
            assert set(entry) == {"id", "role", "status", "usage", "error", "rev"}
            assert isinstance(entry["rev"], int)
        assert "MARKER" not in json.dumps(value)
    # ...while the content did reach the views, through custom messages.
    custom = json.dumps([v for kind, v in wire.items if kind == "custom"])
    for marker in ("REASONING-MARKER", "TOOL-MARKER", "RESULT-MARKER", "REPLY-MARKER199"):
        assert marker in custom


def test_index_revs_match_what_views_replay_and_never_run_ahead(chat: Chat, conn: FakeConnection) -> None:
    """A view that applies every batch holds, at each index update, the rev the index shows for settled
    messages."""
    wire = Wire(chat)
    browser(chat, type="snapshot")  # the view's first request: its starting point
    turn = start_turn(chat, conn, "first")
    for i in range(150):
        conn.feed("message.delta", text=f"w{i} \u00e9\U0001f642 ")  # non-ASCII: UTF-16 counting on both sides
    browser(chat, type="send", text="second", images=[])  # queued: a boundary mid-stream
    eventually(
        lambda: any(e["status"] == "queued" for v in wire.indexes() for e in v), what="queued in the index"
    )
    for i in range(150):
        conn.feed("message.delta", text=f"v{i} \U0001f642")
    conn.feed("message.complete", status="complete")
    eventually(lambda: len(conn.turns) == 2, what="second turn")
    conn.feed("message.delta", text="short")
    conn.feed("message.complete", status="complete")
    eventually(lambda: not chat.busy, what="both turns")
    index_settled(chat, conn.turns[-1])
    seen = replay_revs(wire.items)
    assert len(seen) >= 3
    for revs, index in seen:
        for entry in index:
            if entry["status"] != "streaming":
                assert revs.get(entry["id"]) == entry["rev"], (entry, revs)
    final = {e["id"]: e["rev"] for e in chat.index}
    assert final[f"assistant:{turn.id}"] == seen[-1][0][f"assistant:{turn.id}"]


def test_streamed_reply_bytes_stay_under_1_5x(chat: Chat, conn: FakeConnection) -> None:
    """A 100 KB reply in 10,000 deltas costs at most 1.5x its size: custom messages plus index updates."""
    wire = Wire(chat)
    before = chat.bytes_sent
    turn = start_turn(chat, conn, "long please")
    chunks = [f"{i:05d}abcd " for i in range(10_000)]  # 10 characters each

    async def paced() -> None:
        for i in range(0, len(chunks), 250):
            for chunk in chunks[i : i + 250]:
                turn._push(turn.folder.apply(Event("message.delta", {"text": chunk}, "live-1")))
            await asyncio.sleep(0.02)

    runtime.run_sync(paced(), timeout=30)
    conn.feed("message.complete", status="complete")
    eventually(lambda: not chat.busy, what="turn end")
    index_settled(chat, turn)
    reply = len("".join(chunks))
    custom = chat.bytes_sent - before
    assert custom == wire.custom_bytes
    total = custom + wire.index_bytes
    assert wire.index_bytes < 2_000, wire.index_bytes
    print(f"streamed reply: {total / reply:.3f}x ({custom} custom + {wire.index_bytes} index)")
    assert total <= 1.5 * reply, f"{total / reply:.2f}x ({custom} custom + {wire.index_bytes} index)"
    # The end-of-turn trim of the trailing space went as a splice, not as a second copy of the text.
    records = [
        c for kind, v in wire.items if kind == "custom" and v["type"] == "changes" for c in v["changes"]
    ]
    assert {
        "op": "splice",
        "message_id": f"assistant:{turn.id}",
        "part_id": "text:0",
        "keep": reply - 1,
        "text": "",
    } in records
    assert not any(c["op"] == "patch" and "text" in c["fields"] for c in records)


def test_reset_sends_the_content_once_as_a_snapshot(chat: Chat, conn: FakeConnection) -> None:
    """A session switch replaces the conversation with one snapshot message to the views; the index follows,
    without text."""
    browser(chat, type="snapshot")  # a view exists (it asked for its first snapshot)
    wire = Wire(chat)
    conn.histories["stored-2"] = [user_message("z", "HISTORY-MARKER other session").to_dict()]
    browser(chat, type="switch_session", session_id="stored-2")
    eventually(lambda: chat.session_id == "stored-2" and wire.items, what="switched")
    snaps = [v for kind, v in wire.items if kind == "custom" and v["type"] == "snapshot"]
    assert len(snaps) == 1
    assert snaps[0]["messages"][0]["parts"][0]["text"] == "HISTORY-MARKER other session"
    assert snaps[0]["revs"] == {"user:z": chat.index[0]["rev"]}
    assert chat.settled_seq == snaps[0]["seq"]  # a view that got the snapshot is not behind
    assert wire.indexes() == []  # the snapshot implies every entry: none sent besides it


def test_prompts_sent_while_busy_are_queued_then_run(chat: Chat, conn: FakeConnection) -> None:
    """A prompt sent during a turn waits in the kernel (queued count, queued message) and runs after it."""
    start_turn(chat, conn, "first")
    browser(chat, type="send", text="second", images=[])
    eventually(lambda: chat.queued == 1, what="queued")
    queued = [m for m in chat.snapshot() if m["status"] == "queued"]
    assert [m["parts"][0]["text"] for m in queued] == ["second"]
    assert [c for c in conn.calls if c[0] == "submit"] == [("submit", ("first", None))]
    conn.feed("message.complete", status="complete")
    eventually(lambda: len(conn.turns) == 2, what="second submit")
    assert chat.queued == 0 and chat.busy
    assert not [m for m in chat.snapshot() if m["status"] == "queued"]


def test_stop_interrupts_and_drops_the_queue(chat: Chat, conn: FakeConnection) -> None:
    """The stop button interrupts the running turn and cancels queued prompts."""
    start_turn(chat, conn, "first")
    browser(chat, type="send", text="later", images=[])
    eventually(lambda: chat.queued == 1, what="queued")
    browser(chat, type="stop")
    eventually(lambda: not chat.busy, what="turn end")
    assert ("interrupt", "stored-1") in conn.calls
    assert chat.queued == 0 and len(conn.turns) == 1
    statuses = {
        m["parts"][0]["text"] if m["role"] == "user" else m["id"]: m["status"] for m in chat.snapshot()
    }
    assert statuses["later"] == "cancelled"
    assert statuses[f"assistant:{conn.turns[0].id}"] == "interrupted"


def test_approval_answer_goes_once_and_is_recorded(chat: Chat, conn: FakeConnection) -> None:
    """Clicking a choice answers the approval through the connection; a second click is refused."""
    start_turn(chat, conn, "DANGER x")
    conn.feed("tool.start", tool_id="c1", name="terminal", context="rm -rf x")
    conn.feed(
        "approval.request", command="rm -rf x", description="recursive delete", choices=["once", "deny"]
    )
    eventually(lambda: "approval-1" in json.dumps(chat.snapshot()), what="approval shown")
    answer(chat, "approval-1", "deny")
    eventually(lambda: '"answered"' in json.dumps(chat.snapshot()), what="answered")
    answer(chat, "approval-1", "once")
    eventually(lambda: "already answered" in chat.notice, what="refusal notice")
    assert [c for c in conn.calls if c[0] == "respond"] == [("respond", ("approval-1", "deny"))]


def test_a_card_of_a_dropped_turn_never_answers_the_next_turns_request_with_its_id(
    chat: Chat,
    conn: FakeConnection,
) -> None:
    """Both turns number their approval approval-1: a click on the ended turn's card is refused, sends
    nothing."""
    first = start_turn(chat, conn, "DANGER one")
    conn.feed("tool.start", tool_id="c1", name="terminal", context="rm -rf one")
    conn.feed(
        "approval.request", command="rm -rf one", description="recursive delete", choices=["once", "deny"]
    )
    eventually(lambda: "approval-1" in json.dumps(chat.snapshot()), what="first approval shown")
    runtime.call_soon(lambda: first.drop(HermesGatewayClosedError("the connection dropped")))
    eventually(lambda: not chat.busy, what="first turn ended")
    ended = next(m for m in chat.snapshot() if m["id"] == "assistant:t1")
    assert ended["status"] == "interrupted"
    assert ended["parts"][0]["interaction"]["status"] == "cancelled"  # its card went inert with it

    start_turn(chat, conn, "DANGER two")
    conn.feed("tool.start", tool_id="c2", name="terminal", context="rm -rf two")
    conn.feed(
        "approval.request", command="rm -rf two", description="recursive delete", choices=["once", "deny"]
    )
    eventually(lambda: "tool:c2" in json.dumps(chat.snapshot()), what="second approval shown")
    answer(chat, "approval-1", "once")
    eventually(lambda: "Refused" in chat.notice, what="refusal notice")
    assert [c for c in conn.calls if c[0] == "respond"] == []
    answer(chat, "approval-1", "deny", message_id="assistant:t2", part_id="tool:c2")
    eventually(lambda: any(c[0] == "respond" for c in conn.calls), what="the open turn's answer")
    assert [c for c in conn.calls if c[0] == "respond"] == [("respond", ("approval-1", "deny"))]


def test_a_stale_card_is_refused_even_if_its_turn_left_it_pending(chat: Chat, conn: FakeConnection) -> None:
    """The kernel binds an answer to the open turn: a pending-looking request of an ended message is
    refused."""
    first = start_turn(chat, conn, "DANGER one")
    conn.feed("tool.start", tool_id="c1", name="terminal", context="rm -rf one")
    conn.feed(
        "approval.request", command="rm -rf one", description="recursive delete", choices=["once", "deny"]
    )
    eventually(lambda: "approval-1" in json.dumps(chat.snapshot()), what="first approval shown")
    # An end that patches nothing (as an older kernel's local finish did): only the message status changes.
    chat.push(
        [{"op": "finish", "message_id": "assistant:t1", "status": "error", "usage": None, "error": "x"}]
    )
    answer(chat, "approval-1", "once")
    eventually(lambda: "Refused" in chat.notice, what="refusal notice")
    assert "turn has ended" in chat.notice
    assert [c for c in conn.calls if c[0] == "respond"] == []
    runtime.call_soon(lambda: first.fail(RuntimeError("end")))


def test_secret_value_is_sent_once_and_never_kept(conn: FakeConnection) -> None:
    """A sudo password reaches the connection once and appears nowhere in state, messages or transcript."""
    chat = Chat(conn, session="stored-1").wait_ready(5)
    try:
        sent = Sent(chat)
        start_turn(chat, conn, "RUN sudo ls")
        conn.feed("sudo.request", request_id="s1")
        eventually(lambda: '"s1"' in json.dumps(chat.snapshot()), what="sudo shown")
        content = {
            "type": "secret",
            "message_id": "assistant:t1",
            "part_id": "tool:sudo-s1",
            "request_id": "s1",
            "kind": "sudo",
            "value": SUDO_PASSWORD,
        }
        chat._dispatch(chat, content, [])
        eventually(lambda: any(c[0] == "request" for c in conn.calls), what="sudo.respond")
        assert conn.calls[-1] == ("request", ("sudo.respond", "s1", ["password", "request_id"]))
        assert conn.last_secret_ok
        assert "value" not in content  # taken out of the comm message at once
        conn.feed("message.complete", status="complete")
        eventually(lambda: not chat.busy, what="turn end")
        everything = json.dumps(
            [chat.get_state(), [c for _, c in sent.items], chat.transcript_bundle()], default=str
        )
        for secret in (SUDO_PASSWORD, API_KEY, TOKEN):
            assert secret not in everything
        assert "********" in json.dumps(chat.snapshot())
    finally:
        chat.close()


def test_no_credentials_in_widget_state(conn: FakeConnection) -> None:
    """The synced state of a chat built from settings with a key and token holds neither."""
    chat = Chat(conn, session="stored-1").wait_ready(5)
    try:
        state = json.dumps(chat.get_state(), default=str)
        assert API_KEY not in state and TOKEN not in state
        assert "settings" not in state.lower()
    finally:
        chat.close()


def test_refuses_non_image_attachments(chat: Chat, conn: FakeConnection) -> None:
    """A non-image attachment is refused with a notice and nothing is submitted; images pass through."""
    browser(chat, type="send", text="look", images=[{"mime": "application/pdf", "data": "JVBERg=="}])
    assert "only PNG, JPEG, GIF and WebP images can be attached (got application/pdf)" in chat.notice
    assert not any(c[0] == "submit" for c in conn.calls)
    browser(chat, type="send", text="look", images=[{"mime": "image/png", "data": "iVBORw0KGgo="}])
    eventually(lambda: any(c[0] == "submit" for c in conn.calls), what="submit")
    assert conn.calls[-1] == ("submit", ("look", [("image/png", b"\x89PNG\r\n\x1a\n")]))


def test_errors_become_a_notice_not_a_traceback(chat: Chat, conn: FakeConnection) -> None:
    """A failing submit leaves the chat usable and says what failed in one line."""
    conn.submit_error = HermesRPCError("session busy", code=4009)
    browser(chat, type="send", text="hi", images=[])
    eventually(lambda: chat.notice, what="notice")
    assert "session busy" in chat.notice and "Traceback" not in chat.notice
    assert not chat.busy


def test_disconnect_banner_and_history_refetch_on_reconnect(chat: Chat, conn: FakeConnection) -> None:
    """Connection items drive the banner; after a reconnect the history is fetched again."""
    conn.notify(kind="connection", status="disconnected", retry_in=1.0, error=None)
    assert chat.connection["status"] == "disconnected" and chat.connection["retry_in"] == 1.0
    conn.notify(kind="connection", status="reconnecting", retry_in=2.0, error=OSError("refused"))
    assert chat.connection == {"status": "reconnecting", "retry_in": 2.0, "message": "refused"}
    conn.histories["stored-1"] = [user_message("gap", "asked during the gap").to_dict()]
    fetches = sum(c == ("history", "stored-1") for c in conn.calls)
    conn.notify(kind="connection", status="reconnected", retry_in=None, error=None)
    assert chat.connection["status"] == "reconnected"
    eventually(lambda: any(m["id"] == "user:gap" for m in chat.snapshot()), what="history re-fetched")
    assert sum(c == ("history", "stored-1") for c in conn.calls) == fetches + 1


def test_history_refetch_during_a_turn_keeps_the_live_turn(chat: Chat, conn: FakeConnection) -> None:
    """A reconnect's history re-fetch that lands mid-turn keeps the streaming turn, which then finishes."""
    turn = start_turn(chat, conn, "long one")
    conn.feed("message.delta", text="streaming ")
    eventually(lambda: "streaming" in json.dumps(chat.snapshot()), what="delta")
    conn.histories["stored-1"] = [user_message("old", "from history").to_dict()]
    conn.notify(kind="connection", status="reconnected", retry_in=None, error=None)
    eventually(lambda: any(m["id"] == "user:old" for m in chat.snapshot()), what="history applied")
    conn.feed("message.delta", text="on")
    conn.feed("message.complete", status="complete")
    eventually(lambda: not chat.busy, what="turn end")
    ids = [m["id"] for m in chat.snapshot()]
    assert ids[0] == "user:old" and f"assistant:{turn.id}" in ids
    final = next(m for m in chat.snapshot() if m["id"] == f"assistant:{turn.id}")
    assert final["parts"][0]["text"] == "streaming on" and not chat.notice


def test_session_switch_and_new_session(chat: Chat, conn: FakeConnection) -> None:
    """The picker resumes another session with its history; "new session" starts an empty one."""
    conn.histories["stored-2"] = [user_message("z", "other session").to_dict()]
    browser(chat, type="switch_session", session_id="stored-2")
    eventually(lambda: chat.session_id == "stored-2", what="switched")
    assert [m["id"] for m in chat.snapshot()] == ["user:z"]
    assert [e["id"] for e in chat.index] == ["user:z"]
    browser(chat, type="new_session")
    eventually(lambda: chat.session_id == "stored-new", what="new session")
    assert chat.snapshot() == [] and chat.index == []


def test_static_transcript_is_displayed_and_updated(
    chat: Chat, conn: FakeConnection, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Displaying the chat also shows a static transcript, re-published under its display id at boundaries."""
    import IPython.display as ipd

    shown: list[tuple[Any, dict[str, Any]]] = []
    updates: list[tuple[Any, dict[str, Any]]] = []
    monkeypatch.setattr(ipd, "display", lambda obj, **kw: shown.append((obj, kw)))
    monkeypatch.setattr(ipd, "update_display", lambda obj, **kw: updates.append((obj, kw)))
    chat._ipython_display_()
    assert "application/vnd.jupyter.widget-view+json" in shown[0][0]
    transcript, kw = shown[1]
    assert kw["display_id"] and kw["raw"] is True
    assert set(transcript) == {"text/plain", "text/html"}
    assert 'class="hn-transcript"' in transcript["text/html"]
    start_turn(chat, conn, "what is 2+2")
    conn.feed("message.delta", text="It is **4**.")
    conn.feed("message.complete", status="complete")
    eventually(lambda: updates and "It is" in updates[-1][0]["text/plain"], what="transcript update")
    html = updates[-1][0]["text/html"]
    assert "what is 2+2" in html and "<strong>4</strong>" in html
    assert updates[-1][1]["display_id"] == kw["display_id"]


def test_owned_connection_is_closed_with_the_widget(conn: FakeConnection) -> None:
    """A connection passed in stays open when the chat closes (it belongs to the caller)."""
    chat = Chat(conn, session="stored-1").wait_ready(5)
    chat.close()
    time.sleep(0.05)
    assert ("close", None) not in conn.calls


def test_sudo_password_from_the_browser_reaches_real_hermes_and_is_kept_nowhere(
    hermes: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """Against the real Dashboard, a browser ``secret`` answer ends the sudo wait and leaves no trace of the
    value."""
    password = f"pw-{uuid.uuid4().hex}"
    marker = f"chat-sudo-{uuid.uuid4().hex[:8]}"
    settings = hermes.settings()
    caplog.set_level(logging.DEBUG)  # before the chat connects: websockets decides then whether to log frames
    chat = Chat(settings)
    sent = Sent(chat)
    try:
        chat.wait_ready(30)
        browser(chat, type="send", text=f"RUN sudo echo {marker}", images=[])

        def pending() -> Any:
            for message in chat.snapshot():
                for part in message["parts"]:
                    inter = part.get("interaction")
                    if inter and inter["kind"] == "sudo" and inter["status"] == "pending":
                        return message["id"], part["id"], inter["request_id"]
            return None

        message_id, part_id, request_id = eventually(pending, 30, "a pending sudo request")
        content = {
            "type": "secret",
            "message_id": message_id,
            "part_id": part_id,
            "request_id": request_id,
            "kind": "sudo",
            "value": password,
        }
        browser(chat, **content)
        eventually(lambda: not chat.busy, 60, "the end of the turn")
        chat.flush()
        final = next(m for m in chat.snapshot() if m["id"] == message_id)
        tool = next(p for p in final["parts"] if p["id"] == part_id)
        assert final["status"] == "complete" and not chat.notice
        assert tool["arguments"] == {"command": f"sudo echo {marker}"}
        assert (tool["interaction"]["status"], tool["interaction"]["response"]) == ("answered", "********")
        assert [e["status"] for e in chat.index if e["id"] == message_id] == ["complete"]
        everything = (
            json.dumps(
                [
                    chat.get_state(),
                    chat.index,
                    chat.snapshot(),
                    [c for _, c in sent.items],
                    chat.transcript_bundle(),
                ],
                default=str,
            )
            + caplog.text
            + repr(chat.conversation)
        )
        assert any(c["type"] == "changes" for _, c in sent.items)
        secrets = [password, settings.api_key.reveal(), settings.dashboard_token.reveal()]
        leaks = [s[i : i + 10] for s in secrets for i in range(len(s) - 9) if s[i : i + 10] in everything]
        assert not leaks
    finally:
        chat.close()


def test_live_user_and_reply_share_the_turn_id(chat: Chat, conn: FakeConnection) -> None:
    """The user message shown before sending is ``user:<id>``, and the turn is submitted under that same id
    (``DashboardConnection.submit(turn_id=)`` then names the reply ``assistant:<id>``:
    tests/client/dashboard/test_dashboard.py)."""
    start_turn(chat, conn, "same turn please")
    users = [m["id"] for m in chat.snapshot() if m["role"] == "user"]
    assert conn.turn_ids and users == [f"user:{conn.turn_ids[-1]}"], (users, conn.turn_ids)


def test_sessions_changed_elsewhere_refreshes_the_picker(chat: Chat, conn: FakeConnection) -> None:
    """A newer Dashboard's ``sessions.changed`` (on_change "sessions") re-lists the picker; other kinds do
    not."""
    assert len(conn.change_listeners) == 1
    conn.more_sessions.append({"id": "stored-3", "title": "Made elsewhere", "preview": ""})
    conn.change_listeners[0]("cron")
    chat.flush()
    assert "stored-3" not in json.dumps(chat.sessions)
    runtime.run_sync(_on_loop(lambda: conn.change_listeners[0]("sessions")), timeout=5)
    eventually(lambda: "stored-3" in json.dumps(chat.sessions), what="picker re-listed")
    chat.close()
    eventually(lambda: conn.change_listeners == [], what="listener removed on close")


async def _on_loop(call: Callable[[], None]) -> None:
    call()  # the connection calls listeners on the package loop


def test_picker_list_is_sent_on_request_and_never_saved(conn: FakeConnection) -> None:
    """Other sessions' titles are not synced state (that is saved with the notebook): a view that opens the
    picker asks with ``list_sessions`` and gets them as a ``sessions`` message."""
    conn.more_sessions.append({"id": "stored-9", "title": "Someone else's private title", "preview": ""})
    chat = Chat(conn, session="stored-1").wait_ready(5)
    sent = Sent(chat)
    try:
        eventually(lambda: len(chat.sessions) == 3, what="session list")
        assert "private title" not in json.dumps(chat.get_state(), default=str)
        browser(chat, type="list_sessions")
        eventually(lambda: sent.of("sessions"), what="the picker's list")
        assert {"id": "stored-9", "title": "Someone else's private title"} in sent.of("sessions")[0][
            "sessions"
        ]
    finally:
        chat.close()


def _streamed_texts(items: list[tuple[str, Any]]) -> str:
    """Every text a view was sent, with each part's appends joined in order (a key split across two appends
    shows here whole)."""
    parts: dict[tuple[str, str], str] = {}
    for batch in expand_more([content for _, content in items]):
        for change in batch.get("changes", []):
            if change["op"] == "append":
                key = (change["message_id"], change["part_id"])
                parts[key] = parts.get(key, "") + change["text"]
    return "\n".join(parts.values())


def test_keys_in_a_reply_reach_no_view_state_or_static_twin(hermes: Any) -> None:
    """A real turn whose prompt, tool call and output hold an ``sk-`` key, an ``API_SERVER_KEY=`` assignment
    and the connection's own API key: none of them is in the synced state, any custom message (appends joined
    per part), the kernel's copy or the static transcript."""
    settings = hermes.settings()
    own = settings.api_key.reveal()
    shaped = "sk-" + uuid.uuid4().hex + uuid.uuid4().hex[:8]
    assignment = "API_SERVER_KEY=" + uuid.uuid4().hex
    chat = Chat(settings)
    sent = Sent(chat)
    try:
        chat.wait_ready(30)
        browser(chat, type="snapshot")
        browser(chat, type="send", text=f"RUN echo {shaped} {assignment} {own}", images=[])
        eventually(lambda: chat.busy, 30, "the turn to start")
        eventually(lambda: not chat.busy, 90, "the end of the turn")
        chat.flush()
        reply = next(m for m in chat.snapshot() if m["role"] == "assistant")
        assert reply["status"] == "complete" and "Command output" in json.dumps(reply)
        everything = json.dumps(
            [chat.get_state(), chat.snapshot(), [c for _, c in sent.items], chat.transcript_bundle()],
            default=str,
        ) + _streamed_texts(sent.items)
        for secret in (shaped, assignment.partition("=")[2], own):
            assert secret not in everything
        assert "API_SERVER_KEY=********" in everything
    finally:
        chat.close()
