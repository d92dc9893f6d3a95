"""Putting files back against the real servers: a turn edits a file, its checkpoint shows the change, a
restore undoes it.

The shared servers run with checkpoints on (``LocalHermes(checkpoints=True)``); the scripted model's ``EDIT``
patches a file in the agent's folder. Hermes snapshots the folder before the edit
(docs/protocol/dashboard-newer.md
§15): the oldest checkpoint taken during the turn holds the file as it was. A whole restore also drops the
last
turn: the newer Dashboard rewrites the stored history, 0.19.0 refuses it in one line (files one at a time
only).
"""

from __future__ import annotations

import asyncio
import uuid
from datetime import datetime, timezone

import pytest

from hermes_notebook._demo.local_hermes import LocalHermes
from hermes_notebook.client.dashboard import DashboardConnection
from hermes_notebook.client.dashboard.rollback import checkpoint_diff, list_checkpoints, restore_checkpoint
from hermes_notebook.errors import HermesUsageError
from hermes_notebook.turns.checkpoints import checkpoint_for_turn

pytestmark = pytest.mark.both_servers


async def _edit(conn: DashboardConnection, ref: object, path: object, old: str, new: str) -> datetime:
    started = datetime.now(timezone.utc)
    message = await asyncio.wait_for(await conn.submit(ref, f"EDIT {path} {old} {new}"), 90)  # type: ignore[arg-type]
    assert message.status == "complete", message
    return started


@pytest.mark.asyncio(loop_scope="module")
async def test_a_turns_file_changes_show_per_file_and_one_file_is_put_back(
    conn: DashboardConnection, hermes: LocalHermes
) -> None:
    """The checkpoint of the turn's start names the edited file with its diff; restoring that file puts it
    back."""
    target = hermes.workdir / f"rb-{uuid.uuid4().hex[:8]}.txt"
    target.write_text("alpha\nbeta\n")
    ref = await conn.create_session()
    started = await _edit(conn, ref, target, "alpha", "ALPHA")
    assert target.read_text() == "ALPHA\nbeta\n"
    listed = await list_checkpoints(conn, ref)
    checkpoint = checkpoint_for_turn(listed.checkpoints, started)
    assert listed.enabled and checkpoint is not None, listed
    diff = await checkpoint_diff(conn, ref, checkpoint)
    change = next(c for c in diff.files if c.path == target.name)
    assert (change.status, change.added, change.removed) == ("modified", 1, 1)
    assert "-alpha" in change.diff.splitlines() and "+ALPHA" in change.diff.splitlines()
    result = await restore_checkpoint(conn, ref, checkpoint, file_path=target.name)
    assert result.success and target.read_text() == "alpha\nbeta\n"
    with pytest.raises(HermesUsageError, match="a path inside the session's folder"):
        await restore_checkpoint(conn, ref, checkpoint, file_path="../config.yaml")


@pytest.mark.asyncio(loop_scope="module")
async def test_a_whole_restore_undoes_the_turn_with_its_files(
    conn: DashboardConnection, hermes: LocalHermes, hermes_server: str
) -> None:
    """Newer: the file is back and the stored history has lost the turn. 0.19.0: refused, nothing changed."""
    target = hermes.workdir / f"rb-{uuid.uuid4().hex[:8]}.txt"
    target.write_text("one\n")
    ref = await conn.create_session()
    known = [
        c.hash for c in (await list_checkpoints(conn, ref)).checkpoints
    ]  # exact: what existed before the turn
    started = await _edit(conn, ref, target, "one", "ONE")
    checkpoint = checkpoint_for_turn((await list_checkpoints(conn, ref)).checkpoints, started, known=known)
    assert checkpoint is not None
    if hermes_server != "newer":
        with pytest.raises(HermesUsageError, match="not offered by this Hermes"):
            await restore_checkpoint(conn, ref, checkpoint)
        assert target.read_text() == "ONE\n"
        return
    result = await restore_checkpoint(conn, ref, checkpoint)
    assert result.success and result.history_removed >= 2 and target.read_text() == "one\n"
    assert not any(
        "EDIT" in part.text for m in await conn.history(ref) for part in m.parts if part.kind == "text"
    )
