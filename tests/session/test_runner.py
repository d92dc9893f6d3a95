"""The turn runner (session/runner.py): one skeleton, a Dashboard driver and an API driver, on the real
servers.

The runner is driven directly here (no facade): a :class:`Conversation` over our own clients, turns started as
:class:`TurnHandle` s. What the facade adds on top (presenters, the blocking wait) is tested in
test_notebook_facade.py.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from hermes_notebook import runtime
from hermes_notebook.client.api import ApiClient
from hermes_notebook.client.dashboard import DashboardConnection
from hermes_notebook.notebook.handle import TurnHandle, TurnOptions, reply_for
from hermes_notebook.session import Conversation
from hermes_notebook.session.runner import answer_pending
from hermes_notebook.settings import Settings
from hermes_notebook.turns import ChangeRecord, MessageDict, TurnFolder
from hermes_notebook.turns.events import Event
from tests.helpers import eventually

VIAS = ("dashboard", "api")


class Clients:
    """Our real clients, created on the package loop on first use and closed at the end."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.dashboard_conn: DashboardConnection | None = None
        self.api_client: ApiClient | None = None

    async def dashboard(self) -> DashboardConnection:
        if self.dashboard_conn is None:
            self.dashboard_conn = DashboardConnection(self.settings)
        if not self.dashboard_conn.connected:
            await self.dashboard_conn.connect()
        return self.dashboard_conn

    async def api(self) -> ApiClient:
        if self.api_client is None:
            self.api_client = ApiClient(self.settings)
        return self.api_client

    async def close(self) -> None:
        if self.dashboard_conn is not None:
            await self.dashboard_conn.close()
        if self.api_client is not None:
            await self.api_client.aclose()


@pytest.fixture
def runner(settings: Settings) -> Iterator[Conversation]:
    """A conversation (the runner, its session book and turn queue) over fresh clients."""
    clients = Clients(settings)
    yield Conversation(dashboard=clients.dashboard, api=clients.api)
    runtime.run_sync(clients.close(), timeout=10)


def options(prompt: str, via: str, **kwargs: Any) -> TurnOptions:
    values: dict[str, Any] = {
        "session": None,
        "approve": None,
        "clarify": None,
        "new": False,
        "instructions": None,
        "model": None,
        "images": None,
    }
    values.update(kwargs)
    return TurnOptions(prompt=prompt, via=via, **values)


def start(runner: Conversation, prompt: str, via: str, **kwargs: Any) -> TurnHandle:
    return TurnHandle(options(prompt, via, **kwargs), runner).start()


@pytest.mark.parametrize("via", VIAS)
def test_both_drivers_give_a_reply_whose_records_rebuild_the_message(runner: Conversation, via: str) -> None:
    """Each driver ends in a complete Reply; the records pushed to listeners rebuild exactly its message."""
    handle = TurnHandle(options(f"runner hello {via}", via, new=True), runner)
    batches: list[list[Any]] = []
    handle.add_listener(batches.append)
    reply = handle.start().future.result(timeout=60)
    assert reply.ok and reply.via == via and reply.text.endswith(f"runner hello {via}")
    assert reply.session_id == handle.session_id == runner.book.current and reply.session_id
    assert handle.message == reply.message
    records = [change for batch in batches for change in batch]
    assert records[0]["op"] == "message" and records[-1]["op"] == "finish"
    assert all(
        c["message"]["role"] == "assistant" for c in records if c["op"] == "message"
    )  # user record dropped


@pytest.mark.parametrize("via", VIAS)
def test_a_stop_before_the_turn_starts_interrupts_it_once_armed(runner: Conversation, via: str) -> None:
    """``stop()`` before the driver has armed its interrupt still stops the turn as soon as it is armed."""
    handle = TurnHandle(options("SLOW 40", via, new=True), runner)
    handle.stop()
    reply = handle.start().future.result(
        timeout=60
    )  # the server honours an early interrupt at its next check
    assert reply.status in ("interrupted", "cancelled") and "tick 39" not in reply.text
    assert "the turn was interrupted" in reply.notes


@pytest.mark.parametrize("via", VIAS)
def test_cancelling_the_turn_interrupts_it_on_the_server(runner: Conversation, via: str) -> None:
    """Cancelling the runner's task (what a timed-out wait does) sends the interrupt; the session is free
    again."""
    first = start(runner, "SLOW 40", via, new=True)
    eventually(lambda: "tick 1" in first.text, timeout=20, what="the turn's second tick")
    first.future.cancel()
    with pytest.raises(concurrent.futures.CancelledError):
        first.future.result(timeout=5)
    t0 = time.monotonic()
    after = start(runner, "after the cancel", via, session=first.session_id).future.result(timeout=30)
    assert after.ok and after.text.endswith("after the cancel")
    assert time.monotonic() - t0 < 8  # not queued behind the 40 ticks (10 s) of the cancelled turn


def test_turns_on_one_session_run_one_at_a_time(runner: Conversation) -> None:
    """A second turn to a busy session waits for the first (the session's turn lock) instead of interrupting
    it."""
    first = start(runner, "SLOW 6", "dashboard", new=True)
    eventually(lambda: first.session_id is not None, what="the first turn's session")
    second = start(runner, "second in line", "dashboard", session=first.session_id)
    first_reply = first.future.result(timeout=30)
    second_reply = second.future.result(timeout=30)
    assert first_reply.ok and "tick 5" in first_reply.text
    assert second_reply.ok and second_reply.session_id == first_reply.session_id


@pytest.mark.parametrize("via", VIAS)
def test_a_policy_answers_the_approval_through_the_driver(
    runner: Conversation, via: str, workdir: Path
) -> None:
    """The skeleton hands a pending approval to the policy and the driver sends the answer to its server."""
    workdir.mkdir()
    reply = start(runner, f"DANGER {workdir.name}", via, approve="deny", new=True).future.result(timeout=60)
    assert workdir.exists() and "blocked" in reply.text
    assert reply.tools[0]["interaction"]["status"] == "answered"
    assert reply.tools[0]["interaction"]["response"] == "deny"


def test_answer_pending_starts_one_answer_per_request() -> None:
    """A pending interaction seen again (a repeated patch) is answered once; answered ones are left alone."""
    folder = TurnFolder("t1")
    records: list[ChangeRecord] = folder.apply(Event("tool.start", {"tool_id": "c1", "name": "terminal"}))
    records += folder.apply(Event("approval.request", {"command": "rm -rf x"}))
    pending = [c for c in records if c["op"] == "patch"]
    answered = folder.answer("approval-1", "deny")
    handle = TurnHandle(options("x", "dashboard", approve="deny"), _never_run)
    sent: list[tuple[str, str]] = []

    async def respond(request: dict[str, Any], value: str) -> None:
        sent.append((request["request_id"], value))

    async def main() -> None:
        tasks: set[asyncio.Task[None]] = set()
        seen: set[str] = set()
        answer_pending(handle, records + pending + answered, seen, respond, tasks)
        await asyncio.gather(*tasks)
        assert seen == {"approval-1"}

    asyncio.run(main())
    assert sent == [("approval-1", "deny")]


def test_reply_notes_say_what_the_transcript_does_not() -> None:
    """An expired approval and an interrupted turn each add a note; a clean turn adds none."""
    handle = TurnHandle(options("x", "api"), _never_run)
    handle.notes.append("earlier note")
    expired = {
        "kind": "approval",
        "request_id": "approval-1",
        "status": "expired",
        "command": "rm -rf x",
        "question": None,
        "description": None,
        "choices": [],
        "response": None,
    }
    message: MessageDict = {
        "id": "assistant:t",
        "role": "assistant",
        "status": "interrupted",
        "usage": None,
        "error": None,
        "parts": [
            {
                "id": "tool:c1",
                "kind": "tool",
                "text": "",
                "name": "terminal",
                "status": "cancelled",
                "arguments": None,
                "preview": None,
                "result": None,
                "duration": None,
                "interaction": expired,
            }
        ],  # type: ignore[typeddict-item]
    }
    reply = reply_for(handle, message)
    assert reply.notes[0] == "earlier note"
    assert "nobody answered the approval request (rm -rf x)" in reply.notes[1]
    assert reply.notes[2] == "the turn was interrupted"
    clean = reply_for(
        TurnHandle(options("x", "api"), _never_run), {**message, "status": "complete", "parts": []}
    )
    assert clean.notes == [] and clean.via == "api"


#: The conversation of handles that are never started (no client is ever opened).
_never_run = Conversation()


class TwoApprovalRun:
    """A scripted API Server run with two approvals pending at once, for what the real servers cannot do on
    demand.

    Real Hermes runs dangerous terminal commands one at a time, so one run never has two approvals waiting;
    a run whose tools run in parallel (subagents, execute_code) can. ``named`` plays a newer server (each
    ``approval.request`` carries a ``request_id``, and an answer naming one resolves exactly it); otherwise
    Hermes 0.19.0: no ids, and every answer resolves the oldest pending approval whatever the client meant.
    """

    def __init__(self, *, named: bool) -> None:
        self.named = named
        self.pending = ["ra", "rb"]  # server order
        self.resolved: dict[str, str] = {}  # server request id -> choice it was resolved with
        self.approval_bodies: list[dict[str, Any]] = []
        self._events: asyncio.Queue[dict[str, Any]] | None = None

    def client(self) -> ApiClient:
        return ApiClient(url="http://127.0.0.1:9", key="sk-fake", transport=httpx.MockTransport(self._handle))

    def _emit(self, event: str, **fields: Any) -> None:
        assert self._events is not None
        self._events.put_nowait({"event": event, "run_id": "run_two", **fields})

    async def _handle(self, request: httpx.Request) -> httpx.Response:
        path = request.url.path
        if path == "/v1/runs" and request.method == "POST":
            self._events = asyncio.Queue()
            for rid, target in (("ra", "alpha"), ("rb", "beta")):
                self._emit("tool.started", tool="terminal", preview=f"rm -rf {target}")
                named = {"request_id": rid} if self.named else {}
                self._emit(
                    "approval.request",
                    command=f"rm -rf {target}",
                    description="recursive delete",
                    choices=["once", "deny"],
                    **named,
                )
            return httpx.Response(202, json={"run_id": "run_two", "status": "started"})
        if path == "/v1/runs/run_two/events":
            return httpx.Response(200, headers={"content-type": "text/event-stream"}, stream=_Sse(self))
        if path == "/v1/runs/run_two/approval":
            body = json.loads(request.content)
            self.approval_bodies.append(body)
            wanted = body.get("request_id") if self.named else None
            rid = wanted if wanted in self.pending else None if wanted else self.pending[0]
            if rid is None:
                return httpx.Response(
                    409, json={"error": {"message": "no such approval", "code": "approval_not_pending"}}
                )
            self.pending.remove(rid)
            self.resolved[rid] = body["choice"]
            self._emit(
                "approval.responded",
                choice=body["choice"],
                resolved=1,
                **({"request_id": rid} if wanted else {}),
            )
            return httpx.Response(200, json={"run_id": "run_two", "choice": body["choice"], "resolved": 1})
        if path == "/v1/runs/run_two/stop":
            self._emit("run.cancelled")
            return httpx.Response(200, json={"run_id": "run_two", "status": "stopping"})
        return httpx.Response(404, json={"error": {"message": "not found"}})


class _Sse(httpx.AsyncByteStream):
    """The run's event stream: whatever the fake emits, until a terminal event."""

    def __init__(self, run: TwoApprovalRun) -> None:
        self._run = run

    async def __aiter__(self) -> AsyncIterator[bytes]:
        assert self._run._events is not None
        while True:
            event = await self._run._events.get()
            yield f"data: {json.dumps(event)}\n\n".encode()
            if event["event"] == "run.cancelled":
                return


def _two_approval_turn(fake: TwoApprovalRun) -> TurnHandle:
    async def api() -> ApiClient:
        return fake.client()

    async def no_dashboard() -> DashboardConnection:
        raise AssertionError("this turn runs on the API Server")

    runner = Conversation(dashboard=no_dashboard, api=api)
    handle = TurnHandle(options("two dangers", "api", new=True), runner)
    handle.buttons = True
    handle.start()
    eventually(
        lambda: (
            len([t for t in handle.tools if (t.get("interaction") or {}).get("status") == "pending"]) == 2
        ),
        what="two approvals pending",
    )
    return handle


def _statuses(handle: TurnHandle) -> list[tuple[str, str, str | None]]:
    return [
        (t["interaction"]["request_id"], t["interaction"]["status"], t["interaction"]["response"])
        for t in handle.tools
    ]


def test_an_api_run_without_approval_ids_refuses_an_answer_to_a_later_approval() -> None:
    """Hermes 0.19.0 answers the oldest pending approval: answering the second first is refused, nothing is
    sent."""
    fake = TwoApprovalRun(named=False)
    handle = _two_approval_turn(fake)
    assert handle.answer("approval-2", "once")
    eventually(lambda: any("answer approval-1 first" in n for n in handle.notes), what="refusal note")
    assert fake.approval_bodies == [] and fake.resolved == {}  # the first approval was not silently answered
    assert _statuses(handle) == [("approval-1", "pending", None), ("approval-2", "pending", None)]
    assert handle.answer("approval-1", "deny")
    eventually(lambda: fake.resolved == {"ra": "deny"}, what="the first approval answered")
    assert fake.approval_bodies == [{"choice": "deny"}]
    eventually(lambda: _statuses(handle)[0] == ("approval-1", "answered", "deny"), what="answer recorded")
    assert _statuses(handle)[1] == ("approval-2", "pending", None)
    handle.stop()
    reply = handle.future.result(timeout=10)
    assert reply.tools[1]["interaction"]["status"] == "cancelled"


def test_an_api_run_with_approval_ids_answers_exactly_the_approval_clicked() -> None:
    """A newer server names its approvals: answering the second first sends its id and leaves the first
    pending."""
    fake = TwoApprovalRun(named=True)
    handle = _two_approval_turn(fake)
    assert [t["interaction"]["request_id"] for t in handle.tools] == ["ra", "rb"]
    assert handle.answer("rb", "once")
    eventually(lambda: fake.resolved == {"rb": "once"}, what="the second approval answered")
    assert fake.approval_bodies == [{"choice": "once", "request_id": "rb"}]
    # The server's approval.responded names rb: the first approval stays pending (not taken for the oldest).
    eventually(lambda: _statuses(handle)[1] == ("rb", "answered", "once"), what="answer recorded")
    assert _statuses(handle)[0] == ("ra", "pending", None)
    assert handle.answer("ra", "deny")
    eventually(lambda: fake.resolved == {"rb": "once", "ra": "deny"}, what="the first approval answered")
    assert fake.approval_bodies[1] == {"choice": "deny", "request_id": "ra"}
    handle.stop()
    assert handle.future.result(timeout=10).tools[0]["interaction"]["response"] == "deny"
