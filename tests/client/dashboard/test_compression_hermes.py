"""Context compression against the real Hermes Dashboards (0.19.0 and newer) with the scripted model.

``session.compress`` between turns, the compression counter growing without us asking, and an auto-compaction
in the middle of a turn (``BIGCONTEXT``: the scripted model reports 150k prompt tokens of a 200k context) all
show as a ``marker`` part, and the turn streams on below it.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

import hermes_notebook as hn
from hermes_notebook.client.dashboard import DashboardConnection, ListenerItem, SessionRef
from hermes_notebook.errors import HermesRPCError, HermesUsageError
from hermes_notebook.settings import Settings
from hermes_notebook.turns.compression import (
    BETWEEN_TURNS,
    COMPACTED,
    REFUSED,
    compress_result_text,
    compressions_of,
)
from tests.helpers import eventually_async

pytestmark = pytest.mark.both_servers

WARM_UP_TURNS = (
    4  # session.compress keeps the last messages: it needs a few turns before it has anything to do
)


async def _warm_session(conn: DashboardConnection) -> SessionRef:
    ref = await conn.create_session()
    for i in range(WARM_UP_TURNS):
        message = await asyncio.wait_for(await conn.submit(ref, f"warm-up {i}"), 60)
        assert [p.kind for p in message.parts] == ["text"]  # no marker while nothing was compressed
    return ref


async def _run(conn: DashboardConnection, ref: SessionRef, text: str) -> tuple[Any, list[dict[str, Any]]]:
    turn = await conn.submit(ref, text)
    changes = [c async for c in turn]
    return await asyncio.wait_for(turn, 60), changes


@pytest.mark.asyncio(loop_scope="module")
async def test_compress_between_turns_opens_the_next_turn_with_a_marker(
    conn: DashboardConnection, hermes_server: str
) -> None:
    """compress() answers with the counts; the next turn opens with a marker saying them, then streams its
    reply. History shows the stored summary as a marker too, never as someone's message."""
    ref = await _warm_session(conn)
    result = await conn.compress(ref)
    assert result["status"] == "compressed" and result["before_messages"] == 2 * WARM_UP_TURNS
    assert "messages" not in result and result["usage"]["compressions"] == 1
    message, changes = await _run(conn, ref, "after the compression")
    assert message.status == "complete"
    assert [(p.id, p.kind) for p in message.parts] == [("marker:1", "marker"), ("text:1", "text")]
    assert message.parts[0].text == compress_result_text(result)
    assert message.parts[1].text == "Hello from the scripted model. You said: after the compression"
    # The marker is the first part record; the reply streams after it.
    part_ids = [c["part"]["id"] for c in changes if c["op"] == "part"]
    assert part_ids[:2] == ["marker:1", "text:1"]
    again, _ = await _run(conn, ref, "and once more")
    assert [p.kind for p in again.parts] == ["text"]  # shown once
    history = await conn.history(ref.stored_id)
    texts = [p.text for m in history for p in m.parts if p.kind == "text"]
    assert not [t for t in texts if t.startswith(("[CONTEXT", "[PRIOR CONTEXT"))]
    markers = [i for i, m in enumerate(history) for p in m.parts if p.kind == "marker"]
    if result["after_messages"] < result["before_messages"]:  # 0.19.0 compacts; the newer server refuses
        asked = next(
            i
            for i, m in enumerate(history)
            if m.role == "user" and m.parts[0].text == "after the compression"
        )
        assert markers and markers[0] < asked
        assert all(p.text == COMPACTED for i in markers for p in history[i].parts if p.kind == "marker")
    assert texts[-1] == "Hello from the scripted model. You said: and once more"


@pytest.mark.asyncio(loop_scope="module")
async def test_a_compression_we_did_not_ask_for_shows_from_the_counter(conn: DashboardConnection) -> None:
    """session.compress sent as a raw request (as another tool would): usage.compressions grows in
    session.info, and the next turn opens with the between-turns marker."""
    ref = await _warm_session(conn)
    items: list[ListenerItem] = []
    off = conn.listen(ref, items.append)
    for _ in range(30):  # the server marks the session idle a moment after message.complete
        try:
            await conn.request("session.compress", {"session_id": ref})
            break
        except HermesRPCError as exc:
            if exc.code != 4009:
                raise
            await asyncio.sleep(0.1)
    else:
        pytest.fail("the session stayed busy")
    await eventually_async(  # the session.info with the new count follows the answer
        lambda: any(
            i.event and i.event.type == "session.info" and compressions_of(i.event.payload.get("usage"))
            for i in items
        ),
        timeout=10,
        what="session.info counting the compression",
    )
    off()
    message, _ = await _run(conn, ref, "after a silent compression")
    assert [(p.kind, p.text) for p in message.parts][0] == ("marker", BETWEEN_TURNS)
    assert message.parts[-1].kind == "text" and message.status == "complete"


@pytest.mark.asyncio(loop_scope="module")
async def test_auto_compaction_mid_turn_is_a_marker_and_the_turn_streams_on(
    conn: DashboardConnection, hermes_server: str
) -> None:
    """BIGCONTEXT: Hermes compacts after the tool ran; the marker sits between the tool and the streamed
    reply."""
    ref = await _warm_session(conn)
    message, changes = await _run(conn, ref, "BIGCONTEXT echo compacted")
    assert message.status == "complete"
    assert [p.kind for p in message.parts] == ["tool", "marker", "text"]
    assert message.parts[1].text == (COMPACTED if hermes_server == "0.19.0" else REFUSED)
    assert message.parts[2].text == "Command output:\n```\ncompacted\n```"
    appends_after = [
        c
        for c in changes[
            changes.index(next(c for c in changes if c["op"] == "part" and c["part"]["kind"] == "marker")) :
        ]
        if c["op"] in ("part", "append") and (c.get("part_id") or c.get("part", {}).get("id")) == "text:2"
    ]
    assert appends_after  # the reply streamed after the marker
    assert message.usage is not None and message.usage["compressions"] >= 1


def test_facade_compress_marks_the_next_reply(settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    """Hermes.compress() refuses without a session, then compresses the current one; the next reply has the
    marker."""
    monkeypatch.setattr("hermes_notebook.shell.host.ipython", lambda: None)
    facade = hn.connect(settings)
    try:
        with pytest.raises(HermesUsageError, match="no session to compress"):
            facade.compress()
        for i in range(WARM_UP_TURNS):
            facade.ask(f"facade warm-up {i}", via="dashboard")
        result = facade.compress()
        assert result["before_messages"] == 2 * WARM_UP_TURNS
        reply = facade.ask("after facade compress", via="dashboard")
        assert [p["kind"] for p in reply.parts] == ["marker", "text"]
        assert reply.parts[0]["text"] == compress_result_text(result)
        assert reply.text == "Hello from the scripted model. You said: after facade compress"
    finally:
        facade.close()
