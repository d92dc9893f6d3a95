"""A raw client prompt sent right after a turn ended is never taken as busy (client/dashboard/settling.py).

Hermes emits a turn's ``message.complete`` and only then clears the session's "running" flag (after its
post-turn work: the ``/goal`` judge, titles). A prompt landing in between is taken as busy: on 0.19.0 it is
queued, and the default ``busy_input_mode`` interrupts the running turn for it, an interrupt that can hit the
queued prompt's own run ("Operation interrupted: waiting for model response"). The scripted model's
``JUDGE 1`` goal keeps Hermes in that window for a second after each turn, so a prompt sent at once always
lands in it. Nothing here waits itself: ``DashboardConnection.submit`` must.
"""

from __future__ import annotations

import pytest

from hermes_notebook.client.dashboard import DashboardConnection
from hermes_notebook.client.dashboard.commands import run_command

pytestmark = [pytest.mark.asyncio(loop_scope="module"), pytest.mark.both_servers]


async def test_two_raw_submits_back_to_back_on_one_session_are_both_answered(
    conn: DashboardConnection, hermes_server: str
) -> None:
    """Twice: a ``/goal`` turn whose judge holds the session for 1 s after ``message.complete``, then a
    raw ``submit`` at once. Both turns get their own complete reply. On 0.19.0 the second goes out only once
    Hermes let go (accepted ``streaming``, never ``queued`` behind the turn that ended); a newer server, which
    takes ``queued: true``, gets it at once while Hermes still holds the session (accepted ``queued``: the
    client did not wait out the judge), and it still runs as its own turn, uninterrupted."""
    ref = await conn.create_session()
    first = await (await conn.submit(ref, "settling start"))
    assert first.status == "complete"
    for i in range(2):
        goal = await run_command(conn, ref, "/goal JUDGE 1 settle")
        assert (
            goal.kind == "send" and goal.message == "JUDGE 1 settle"
        )  # the goal is set; its kickoff is ours
        kickoff = await (await conn.submit(ref, goal.message))
        assert kickoff.status == "complete" and kickoff.parts[-1].text.endswith("JUDGE 1 settle")
        assert conn.held(ref), "the judge holds the session: the next prompt lands in the window"
        turn = await conn.submit(ref, f"right after {i}")
        accepted = turn.status
        reply = await turn
        assert reply.status == "complete" and reply.parts[-1].text.endswith(f"right after {i}"), reply
        assert accepted == ("queued" if hermes_server == "newer" else "streaming"), (i, accepted)
