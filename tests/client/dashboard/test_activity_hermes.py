"""The task list, subagents, tool diffs and finished cron runs against the real servers and the scripted
model.

Both servers send the same events for these (docs/protocol/dashboard-newer.md §11): a todo tool's
``tool.complete`` carries ``todos`` (a newer server adds ``todo.updated``), ``subagent.*`` frames report a
delegated child, and a file edit's completion carries ``inline_diff``. Only a newer server keeps the diff
beside the history row.
"""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path
from typing import Any

import pytest

from hermes_notebook._demo.local_hermes import LocalHermes
from hermes_notebook._demo.script import DELEGATE_TEXT, PLAN_STEPS
from hermes_notebook.client.dashboard import DashboardConnection
from tests.helpers import eventually

pytestmark = [pytest.mark.asyncio(loop_scope="module"), pytest.mark.both_servers]


def _parts(message: Any, kind: str) -> list[dict[str, Any]]:
    return [p for p in message.to_dict()["parts"] if p["kind"] == kind]


async def test_a_plan_is_one_live_checklist_and_history_rebuilds_it(conn: DashboardConnection) -> None:
    """Two todo tool runs fold into ONE ``todo`` part with the final list; the REST history folds the same."""
    ref = await conn.create_session()
    turn = await conn.submit(ref, "PLAN")
    message = await asyncio.wait_for(turn, 60)
    todos = _parts(message, "todo")
    assert len(todos) == 1
    assert [(t["content"], t["status"]) for t in todos[0]["todos"]] == [
        (t["content"], t["status"]) for t in PLAN_STEPS[-1]
    ]
    history = await conn.history(ref)
    rebuilt = _parts(history[-1], "todo")
    assert [t["todos"] for t in rebuilt] == [todos[0]["todos"]]


async def test_a_file_edit_shows_its_diff_on_the_tool_part(
    conn: DashboardConnection, workdir: Path, hermes_server: str
) -> None:
    """A ``patch`` tool's completion carries the change as plain diff lines (no terminal colours); a newer
    server's history keeps it, 0.19.0's history does not (it stores no display metadata)."""
    workdir.mkdir(parents=True)
    target = workdir / "notes.txt"
    target.write_text("one\ntwo\n")
    ref = await conn.create_session()
    message = await asyncio.wait_for(await conn.submit(ref, f"EDIT {target} two TWO"), 60)
    assert target.read_text() == "one\nTWO\n"
    (tool,) = [p for p in _parts(message, "tool") if p["name"] == "patch"]
    diff = tool["diff"].split("\n")
    assert "-two" in diff and "+TWO" in diff and any(line.startswith("@@") for line in diff)
    assert "\x1b" not in tool["diff"]
    history = await conn.history(ref)
    (stored,) = [p for p in _parts(history[-1], "tool") if p["name"] == "patch"]
    if hermes_server == "0.19.0":
        assert "diff" not in stored
    else:
        assert stored["diff"] == tool["diff"]


async def test_a_delegated_subagent_is_a_part_with_its_own_tool_and_status(conn: DashboardConnection) -> None:
    """``delegate_task`` makes a ``subagent:<id>`` part: its goal, the terminal call it made, its final status
    and summary (the child is scripted too: ``RUN echo <marker>``)."""
    marker = f"child-{uuid.uuid4().hex[:6]}"
    ref = await conn.create_session()
    message = await asyncio.wait_for(await conn.submit(ref, f"DELEGATE RUN echo {marker}"), 90)
    assert DELEGATE_TEXT.strip() in message.to_dict()["parts"][-1]["text"]
    (sub,) = _parts(message, "subagent")
    info = sub["subagent"]
    assert sub["id"] == f"subagent:{info['id']}" and info["goal"] == f"RUN echo {marker}"
    assert info["tools"] == [{"name": "terminal", "preview": f"echo {marker}"}]
    assert (sub["status"], info["status"]) == ("completed", "completed")
    assert marker in (info["summary"] or "") and info["depth"] == 0 and info["parent_id"] is None
    (delegate,) = [p for p in _parts(message, "tool") if p["name"] == "delegate_task"]
    assert delegate["status"] == "completed"


@pytest.mark.servers("newer")
async def test_a_finished_cron_run_reaches_the_jobs_widget_and_its_followers(hermes: LocalHermes) -> None:
    """On a newer Dashboard's ``cron.changed`` the jobs widget refreshes, shows "finished a run" with the
    status and duration as its notice (the view's toast), and ``on_run_finished`` followers get the run."""
    await asyncio.to_thread(_cron_run_reported, hermes)


def _cron_run_reported(hermes: LocalHermes) -> None:
    import hermes_notebook as hn

    facade = hn.connect(hermes.settings())
    name = f"toast {uuid.uuid4().hex[:6]}"
    job = facade.jobs.create(name=name, schedule="every 1h", prompt="RUN echo cron-toast")
    widget = facade.jobs_widget()  # lists the job before it ever ran
    widget.auto_refresh = 0  # only the change feed can tell
    finished: list[Any] = []
    off = widget.on_run_finished(finished.append)
    try:
        eventually(lambda: any(row["name"] == name for row in widget.jobs), 30, "the new job listed")
        facade.jobs.run(job.id)
        eventually(lambda: bool(finished), 150, "a finished run reported")  # the scheduler ticks every 60 s
        run = finished[0]
        assert (run.job_id, run.name, run.status) == (job.id, name, "ok")
        assert (
            run.duration is not None and 0 <= run.duration < 120 and run.run_id.startswith(f"cron_{job.id}_")
        )
        assert widget.notice["kind"] == "run" and f"{name!r} finished a run (ok, " in widget.notice["text"]
    finally:
        off()
        facade.jobs.delete(job.id)
        widget.close()
        facade.close()
