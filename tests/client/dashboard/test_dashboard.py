"""DashboardConnection against the real Hermes Dashboards (0.19.0 and newer) with the scripted model."""

from __future__ import annotations

import asyncio
import json
import logging
import socket
import traceback
import uuid
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from hermes_notebook._demo.local_hermes import LocalHermes
from hermes_notebook.client.dashboard import DashboardConnection, ListenerItem, SessionRef, Turn, reconnect
from hermes_notebook.client.dashboard.backoff import Backoff
from hermes_notebook.errors import (
    HermesAuthError,
    HermesConnectionError,
    HermesGatewayClosedError,
    HermesRunError,
    HermesUsageError,
)
from tests.helpers import eventually_async

pytestmark = [pytest.mark.asyncio(loop_scope="module"), pytest.mark.both_servers]


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def session(conn: DashboardConnection) -> SessionRef:
    """One session shared by tests whose turns do not depend on each other."""
    return await conn.create_session()


async def _first(turn: Turn, predicate: Any, timeout: float = 30.0) -> dict[str, Any]:
    """The first change record of the turn that satisfies ``predicate``."""

    async def scan() -> dict[str, Any]:
        async for change in turn:
            if predicate(change):
                return change
        raise AssertionError(f"the turn ended without such a change: {turn.message}")

    return await asyncio.wait_for(scan(), timeout)


def _srq(inter: dict[str, Any]) -> list[str]:
    rid = str(inter["request_id"])
    return [rid] if rid.startswith("srq-") else []


def _pending_interaction(change: dict[str, Any]) -> bool:
    fields = change.get("fields") or change.get("part") or {}
    inter = fields.get("interaction")
    return bool(inter) and inter["status"] == "pending"


async def test_plain_turn_streams_and_matches_message_complete(
    conn: DashboardConnection, session: SessionRef
) -> None:
    """A plain turn streams appends, and the final text equals the server's message.complete text."""
    events: list[ListenerItem] = []
    off = conn.listen(session, events.append)
    turn = await conn.submit(session, "hello plain dashboard")
    streamed = [
        c["part"]["text"] if c["op"] == "part" else c["text"]
        async for c in turn
        if c["op"] == "append" or (c["op"] == "part" and c["part"]["kind"] == "text")
    ]
    message = await turn
    off()
    complete = [i.event for i in events if i.event is not None and i.event.type == "message.complete"]
    assert len(streamed) >= 2  # a part, then appends
    assert message.status == "complete" and [p.id for p in message.parts] == ["text:0"]
    assert (
        message.parts[0].text
        == complete[-1].payload["text"]
        == "Hello from the scripted model. You said: hello plain dashboard"
    )
    assert "".join(streamed).strip() == message.parts[0].text
    assert message.usage and message.usage["total"] > 0
    assert turn.status == "complete" and message.id == f"assistant:{turn.id}"


async def test_submit_names_the_turn_when_asked(conn: DashboardConnection, session: SessionRef) -> None:
    """``submit(turn_id=)`` names the turn, so a view's early user message and the reply share one turn id;
    an empty id is refused before anything is sent."""
    turn = await conn.submit(session, "hello named turn", turn_id="view-turn-7")
    message = await turn
    assert turn.id == "view-turn-7" and message.id == "assistant:view-turn-7" and message.status == "complete"
    with pytest.raises(HermesUsageError, match="turn_id"):
        await conn.submit(session, "never sent", turn_id=" ")


async def test_thinkrun_parts_and_history_are_equal(conn: DashboardConnection) -> None:
    """THINKRUN gives reasoning:0, tool:<id> (completed, result, duration), text:1; history folds to the
    same."""
    ref = await conn.create_session()
    live = await (await conn.submit(ref, "THINKRUN echo hermes-notebook-ok"))
    kinds = [(p.id.split(":")[0], p.kind) for p in live.parts]
    assert kinds == [("reasoning", "reasoning"), ("tool", "tool"), ("text", "text")]
    reasoning, tool, text = live.parts
    assert (reasoning.id, text.id) == ("reasoning:0", "text:1")
    assert tool.status == "completed" and tool.result["output"] == "hermes-notebook-ok"
    assert tool.duration is not None and tool.duration > 0
    assert "hermes-notebook-ok" in text.text

    history = await conn.history(ref.stored_id)
    assert [m.role for m in history] == ["user", "assistant"]
    assert history[0].parts[0].text == "THINKRUN echo hermes-notebook-ok"

    def content(parts: list[Any]) -> list[tuple[Any, ...]]:
        return [(p.id, p.kind, p.text, p.name, p.status, p.arguments, p.result) for p in parts]

    assert content(history[1].parts) == content(live.parts)


async def test_approval_deny_blocks_the_command(
    conn: DashboardConnection, session: SessionRef, workdir: Path
) -> None:
    """DANGER asks for approval on the tool part; "deny" blocks it (the directory survives)."""
    workdir.mkdir(parents=True)
    turn = await conn.submit(session, f"DANGER {workdir.name}")
    change = await _first(turn, _pending_interaction)
    inter = (change.get("fields") or change["part"])["interaction"]
    # 0.19.0 numbers approvals (they resolve FIFO); a newer server's request carries its own srq- id.
    assert inter["kind"] == "approval" and inter["request_id"] in ("approval-1", *_srq(inter))
    assert f"rm -rf ./{workdir.name}" in inter["command"]
    assert "once" in inter["choices"] and "deny" in inter["choices"]
    assert (change.get("part_id") or change["part"]["id"]).startswith("tool:")  # hangs on the tool part
    await conn.respond(session, inter["request_id"], "deny")
    message = await turn
    tool = next(p for p in message.parts if p.kind == "tool")
    assert tool.interaction is not None
    assert (tool.interaction.status, tool.interaction.response) == ("answered", "deny")
    assert "BLOCKED" in str(tool.result)
    assert workdir.exists()


async def test_approval_once_runs_the_command(
    conn: DashboardConnection, session: SessionRef, workdir: Path
) -> None:
    """Answering the approval "once" lets the command run (the directory is gone)."""
    workdir.mkdir(parents=True)
    turn = await conn.submit(session, f"DANGER {workdir.name}")
    change = await _first(turn, _pending_interaction)
    await conn.respond(session, (change.get("fields") or change["part"])["interaction"]["request_id"], "once")
    message = await turn
    tool = next(p for p in message.parts if p.kind == "tool")
    assert tool.status == "completed" and tool.interaction and tool.interaction.status == "answered"
    assert not workdir.exists()


async def test_clarify_answer_reaches_the_model(conn: DashboardConnection, session: SessionRef) -> None:
    """CLARIFY shows a pending question with choices; answering "B" reaches the model."""
    turn = await conn.submit(session, "CLARIFY")
    change = await _first(turn, _pending_interaction)
    inter = (change.get("fields") or change["part"])["interaction"]
    assert (inter["kind"], inter["question"], inter["choices"]) == ("clarify", "Pick A or B?", ["A", "B"])
    await conn.respond(session, inter["request_id"], "B")
    message = await turn
    assert message.parts[-1].text.endswith("You chose: B")
    clarify = next(p for p in message.parts if p.interaction is not None)
    assert (clarify.interaction.status, clarify.interaction.response) == ("answered", "B")


async def test_busy_submit_is_queued_then_runs_as_its_own_turn(conn: DashboardConnection) -> None:
    """A second submit while the first runs is reported queued and later runs as its own turn."""
    ref = await conn.create_session()
    first = await conn.submit(ref, "SLOW 16")
    await _first(first, lambda c: c["op"] == "append")
    second = await conn.submit(ref, "hello while busy")
    assert second.status == "queued" and first.status == "streaming"
    # 0.19.0 interrupts the running turn (busy_input_mode "interrupt", docs/protocol/dashboard.md §7); a newer
    # server is asked to queue (prompt.submit queued=true), so the running turn completes first.
    assert (await first).status == ("complete" if conn.replay_epoch else "interrupted")
    message = await second
    assert message.status == "complete" and second.status == "complete"
    assert message.parts[-1].text.endswith("hello while busy")


async def test_interrupt_ends_the_turn_interrupted_and_trimmed(conn: DashboardConnection) -> None:
    """interrupt() ends the turn "interrupted" with its partial text trimmed."""
    ref = await conn.create_session()
    turn = await conn.submit(ref, "SLOW 60")
    appends = 0
    async for change in turn:
        appends += change["op"] == "append"
        if appends == 3:
            break
    await turn.interrupt()
    message = await turn
    assert message.status == "interrupted"
    assert message.parts[0].text.startswith("tick 0 tick 1")
    assert message.parts[0].text == message.parts[0].text.rstrip()


async def test_interrupt_cancels_a_pending_clarify(conn: DashboardConnection) -> None:
    """Interrupting while a clarify waits leaves no running tool and no pending interaction."""
    ref = await conn.create_session()
    turn = await conn.submit(ref, "CLARIFY")
    await _first(turn, _pending_interaction)
    await conn.interrupt(ref)
    message = await turn
    assert message.status == "interrupted"
    assert all(p.status != "running" for p in message.parts if p.kind == "tool")
    assert all(p.interaction.status != "pending" for p in message.parts if p.interaction is not None)


async def test_history_of_a_session_never_prompted_is_empty(conn: DashboardConnection) -> None:
    """A session with no prompt has no DB row yet: its history (REST 404) is []."""
    ref = await conn.create_session()
    assert await conn.history(ref) == []


async def test_sessions_and_title(conn: DashboardConnection, session: SessionRef) -> None:
    """sessions() lists stored sessions and set_title() renames one."""
    await (await conn.submit(session, "hello title"))
    assert await conn.set_title(session, "dashboard-test title") == "dashboard-test title"
    listed = {s["id"]: s for s in await conn.sessions()}
    assert listed[session.stored_id]["title"] == "dashboard-test title"


async def test_wrong_token_raises_auth_error_without_leaking(hermes: LocalHermes, caplog: Any) -> None:
    """A wrong token gives HermesAuthError (HTTP 403); the token appears in no message, repr or log."""
    bad = "bad-token-" + hermes.dashboard_token[::-1]
    caplog.set_level(logging.DEBUG)
    conn = DashboardConnection(hermes.dashboard_url, bad, reconnect=False)
    with pytest.raises(HermesAuthError) as info:
        await conn.connect()
    text = "".join(traceback.format_exception(info.value)) + repr(info.value) + repr(conn) + caplog.text
    assert info.value.status == 403 and "token" in str(info.value)
    assert bad not in text and hermes.dashboard_token not in text
    await conn.close()


async def test_an_unreachable_dashboard_chains_no_library_error() -> None:
    """Connecting to a port with nothing listening fails with one HermesConnectionError: no library exception
    is chained (their text may quote the ``?token=`` URL), and the formatted traceback never holds the
    token."""
    token = "tok-" + uuid.uuid4().hex
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    conn = DashboardConnection(f"http://127.0.0.1:{port}", token, reconnect=False)
    with pytest.raises(HermesConnectionError, match="cannot reach the Dashboard") as info:
        await conn.connect()
    await conn.close()
    assert info.value.__cause__ is None and info.value.__suppress_context__
    assert token not in "".join(traceback.format_exception(info.value))


@pytest.mark.asyncio(loop_scope="function")
async def test_reconnect_after_dashboard_restart(
    hermes_factory: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Killing the Dashboard mid-turn fails the turn; the listener sees disconnected/reconnected; work
    resumes."""
    # A newer Dashboard's open turns wait out the catch-up window (60 s) before they fail; that they fail is
    # what is checked here, not the window's length, so it is short (the same code path runs, sooner).
    monkeypatch.setattr(reconnect, "LOSSLESS_RECONNECT_WINDOW", 3.0)
    local = hermes_factory(api=False)
    conn = DashboardConnection(local.settings(), reconnect=Backoff(min_delay=0.2, max_delay=1.0))
    items: list[ListenerItem] = []
    try:
        ref = await conn.create_session()
        conn.listen(ref, items.append)
        await (await conn.submit(ref, "hello before restart"))
        old_live = ref.live_id
        turn = await conn.submit(ref, "SLOW 100")
        await _first(turn, lambda c: c["op"] == "append")
        await asyncio.to_thread(local.stop_dashboard)
        with pytest.raises(HermesGatewayClosedError):
            await turn
        assert turn.message.status == "error"
        await asyncio.to_thread(local.start_dashboard)
        await eventually_async(
            lambda: any(i.status == "reconnected" for i in items),
            timeout=30,
            what="reconnected after the Dashboard restart",
        )
        statuses = [i.status for i in items if i.kind == "connection"]
        assert statuses[0] == "disconnected" and statuses[-1] == "reconnected"
        assert ref.live_id != old_live  # a restarted process mints a new live id (§8.9)
        after = await (await conn.submit(ref, "hello after restart"))
        assert after.parts[-1].text.endswith("hello after restart")
        history = await conn.history(ref)
        users = [m.parts[0].text for m in history if m.role == "user"]
        assert users[0] == "hello before restart" and users[-1] == "hello after restart"
        assert history[1].parts[0].text.endswith("hello before restart")
    finally:
        await conn.close()


async def test_sudo_password_is_sent_once_and_never_kept(hermes: LocalHermes, caplog: Any) -> None:
    """A sudo request waits on the tool part; the password reaches Hermes, the turn ends, and nothing keeps
    it."""
    password = f"pw-{uuid.uuid4().hex}"
    marker = f"sudo-marker-{uuid.uuid4().hex[:8]}"
    caplog.set_level(logging.DEBUG)  # before connecting: websockets decides then whether to log frames
    async with DashboardConnection(hermes.settings()) as fresh:
        ref = await fresh.create_session()
        turn = await fresh.submit(ref, f"RUN sudo echo {marker}")
        change = await _first(turn, _pending_interaction)
        inter = (change.get("fields") or change["part"])["interaction"]
        tool_id = change.get("part_id") or change["part"]["id"]
        assert inter["kind"] == "sudo" and inter["response"] is None and tool_id.startswith("tool:")
        await fresh.respond(ref, inter["request_id"], password)
        message = await asyncio.wait_for(turn, 60)
        text = repr(fresh) + repr(turn) + repr(ref)
    tool = next(p for p in message.parts if p.id == tool_id)
    assert message.status == "complete" and tool.arguments == {"command": f"sudo echo {marker}"}
    assert tool.status == "completed" and tool.interaction is not None
    assert (tool.interaction.status, tool.interaction.response) == ("answered", "********")
    everything = json.dumps(message.to_dict()) + json.dumps(turn.changes) + caplog.text + text
    assert not [password[i : i + 10] for i in range(len(password) - 9) if password[i : i + 10] in everything]
    assert "> TEXT [" in caplog.text  # frames were logged at DEBUG (by size only)


async def test_the_session_list_says_whether_a_turn_runs(conn: DashboardConnection) -> None:
    """The early-stop follow-up reads ``session.active_list``: the row of our live id is busy during a turn
    and idle after it, on each server (the 0.19.0 way to see a turn its server dropped without an event)."""
    from hermes_notebook.client.dashboard.early_stop import session_runs

    ref = await conn.create_session()
    turn = await conn.submit(ref, "SLOW 8")
    await _first(turn, lambda change: change["op"] == "append")
    assert await session_runs(conn.request, ref.live_id)
    await turn
    for _ in range(40):  # the server clears ``running`` shortly after message.complete (post-turn work)
        if not await session_runs(conn.request, ref.live_id):
            break
        await asyncio.sleep(0.25)
    else:
        raise AssertionError("the session never showed idle after its turn")


async def test_a_stop_sent_right_after_submit_ends_the_turn(conn: DashboardConnection) -> None:
    """A stop that reaches the server before the turn has started ends the turn either way, never a hang."""
    ref = await conn.create_session()
    turn = await conn.submit(ref, "SLOW 40")
    await turn.interrupt()
    # a newer Hermes may end it as an error instead: "Turn cancelled before the agent was ready"
    ended = (await asyncio.wait_for(asyncio.gather(turn, return_exceptions=True), 30))[0]
    if isinstance(ended, HermesRunError):
        assert "cancelled" in str(ended), ended
    else:
        assert turn.message.status in ("interrupted", "cancelled"), ended
    message = turn.message
    assert "tick 39" not in "".join(p.text or "" for p in message.parts if p.kind == "text")
