"""Steering a running turn against the real servers: the text reaches the model mid-turn and shows where it
went.

``session.steer`` adds the text to the running turn's next tool result (docs/protocol/dashboard-newer.md §16).
The scripted model's ``RUN`` keeps the turn in a tool call long enough to steer; the model's request log
proves the text reached it. Live, the turn gets a marker. The newer server stores the steer as a user row of
its own: history shows the same marker in the same turn. 0.19.0 adds it to the tool result in memory after
storing that row, so its history keeps no trace of it (only what the model then said).
"""

from __future__ import annotations

import asyncio
import json
import uuid
from typing import Any

import pytest

from hermes_notebook.client.api import ApiClient
from hermes_notebook.client.dashboard import DashboardConnection
from hermes_notebook.client.dashboard.steering import interrupt_subagent, steer_subagent, steer_turn
from hermes_notebook.errors import HermesUsageError
from hermes_notebook.settings import Settings
from hermes_notebook.turns.steering import steer_marker

pytestmark = pytest.mark.both_servers


@pytest.mark.asyncio(loop_scope="module")
async def test_a_steer_reaches_the_running_turn_and_is_marked_live_and_in_history(
    conn: DashboardConnection, scripted_model: Any, hermes_server: str
) -> None:
    """Sent once the tool runs: accepted, seen by the model in the same turn, one marker live and (newer) from
    history, in the same turn, the tool's stored result as the tool returned it."""
    ref = await conn.create_session()
    with pytest.raises(HermesUsageError, match="no running turn to steer"):
        await steer_turn(conn, ref, "nothing runs yet")
    guidance = f"also mention STEER-{uuid.uuid4().hex[:8]}"
    turn = await conn.submit(ref, "RUN sleep 3 && echo ran")
    async for change in turn:
        if change["op"] == "part" and change["part"]["kind"] == "tool":
            break
    outcome = await steer_turn(conn, ref, guidance)
    message = await asyncio.wait_for(turn, 90)
    assert outcome.status == "queued" and message.status == "complete"
    assert [p.text for p in message.parts if p.kind == "marker"] == [steer_marker(guidance)]
    assert any(guidance in json.dumps(body.get("messages")) for body in scripted_model.requests)
    stored = [m for m in await conn.history(ref) if m.role == "assistant"]
    assert len(stored) == 1, [m.id for m in stored]  # the steer is no new turn
    markers = [p.text for p in stored[0].parts if p.kind == "marker"]
    assert markers == ([steer_marker(guidance)] if hermes_server == "newer" else [])
    tool = next(p for p in stored[0].parts if p.kind == "tool")
    assert guidance not in json.dumps(tool.result) and "ran" in json.dumps(tool.result)


@pytest.mark.asyncio(loop_scope="module")
async def test_subagents_and_runs_are_steered_where_offered(
    conn: DashboardConnection, hermes_server: str, settings: Settings
) -> None:
    """A subagent that is not running: ``subagent.steer`` rejects (newer) or is not offered (0.19.0);
    ``subagent.interrupt`` finds nothing on both; a run's steer is not offered on 0.19.0."""
    ref = await conn.create_session()
    assert await interrupt_subagent(conn, ref, "sa-0-00000000") is False
    if hermes_server == "newer":
        assert (await steer_subagent(conn, ref, "sa-0-00000000", "faster")).status == "rejected"
        return
    with pytest.raises(HermesUsageError, match=r"not offered by this Hermes \(subagent.steer\)"):
        await steer_subagent(conn, ref, "sa-0-00000000", "faster")
    async with ApiClient(settings) as api:  # refused from /v1/capabilities, before any run is named
        with pytest.raises(HermesUsageError, match="steering a run is not offered by this Hermes"):
            await api.steer_run("run_0000", "never sent")
