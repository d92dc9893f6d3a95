"""Cron runs you can open: ``hermes.jobs.runs(job)`` and ``run.transcript()`` on a REAL triggered run."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from hermes_notebook import connect, runtime
from hermes_notebook._demo.local_hermes import LocalHermes
from hermes_notebook.errors import HermesUsageError
from hermes_notebook.jobs.runs import JobRun, job_runs, run_status
from hermes_notebook.notebook import Hermes


def test_run_status_from_the_session_row() -> None:
    """Run status from the session row."""
    assert run_status({"ended_at": None}) == "running"
    assert run_status({"ended_at": 1.0, "end_reason": "cron_complete"}) == "ok"
    assert run_status({"ended_at": 1.0, "end_reason": "cron_error"}) == "error"
    assert run_status({"ended_at": 1.0}) == "ended"


def test_a_run_row_needs_a_cron_id_and_reports_its_duration() -> None:
    """A run row needs a cron id and reports its duration."""
    run = JobRun.from_session(
        {
            "id": "cron_ab12_20261202_103235",
            "started_at": 10.0,
            "ended_at": 12.5,
            "end_reason": "cron_complete",
        }
    )
    assert (run.job_id, run.status, run.duration) == ("ab12", "ok", 2.5)
    with pytest.raises(HermesUsageError, match="not a cron run session id"):
        JobRun.from_session({"id": "api_123"})
    with pytest.raises(HermesUsageError, match="cannot fetch its transcript"):
        run.transcript()


@pytest.mark.parametrize(
    ("job_id", "limit", "message"),
    [("../x", 5, "a job id is letters and digits"), ("ab12", 0, "limit must be between 1 and 200")],
)
def test_bad_arguments_fail_before_any_request(job_id: str, limit: int, message: str) -> None:
    """Bad arguments fail before any request."""
    with pytest.raises(HermesUsageError, match=message):
        runtime.run_sync(job_runs(None, job_id, limit=limit))  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def ran(hermes: LocalHermes) -> Iterator[tuple[Hermes, Any, str]]:
    """One job, triggered once and waited for (the scheduler ticks every 60 s): shared by the tests below."""
    client = connect(hermes.settings())
    marker = f"cron-run-{uuid.uuid4().hex[:8]}"
    job = client.jobs.create(name=marker, schedule="every 1h", prompt=f"RUN echo {marker}")
    try:
        client.jobs.run_and_wait(job, timeout=150, poll=1.0)
        yield client, job, marker
    finally:
        client.jobs.delete(job.id)
        client.close()


def test_runs_lists_the_triggered_run(ran: tuple[Hermes, Any, str]) -> None:
    """Runs lists the triggered run."""
    client, job, _ = ran
    runs = client.jobs.runs(job)
    assert len(runs) == 1
    run = runs[0]
    assert run.id.startswith(f"cron_{job.id}_") and run.job_id == job.id
    assert run.status == "ok" and run.duration is not None and 0 <= run.duration < 120
    assert client.jobs.runs(job.id)[0].id == run.id  # an id works as well as a Job
    assert run.id in runs._repr_html_() and ">ok<" in runs._repr_html_()


def test_a_runs_transcript_shows_the_prompt_the_tool_call_and_the_answer(
    ran: tuple[Hermes, Any, str],
) -> None:
    """A runs transcript shows the prompt the tool call and the answer."""
    client, job, marker = ran
    transcript = client.jobs.runs(job)[0].transcript()
    roles = [m["role"] for m in transcript]
    assert roles == ["user", "assistant"]
    prompt = transcript[0]["parts"][0]["text"]
    assert prompt.endswith(f"RUN echo {marker}")
    tools = [p for p in transcript[1]["parts"] if p["kind"] == "tool"]
    assert tools and tools[0]["name"] == "terminal" and marker in str(tools[0]["result"])
    assert f"Command output:\n```\n{marker}\n```" in transcript[1]["parts"][-1]["text"]
    assert marker in transcript._repr_mimebundle_()["text/html"]


def test_jobs_widget_lists_runs_and_sends_a_transcript(
    ran: tuple[Hermes, Any, str], hermes: LocalHermes
) -> None:
    """The widget's ``runs`` and ``transcript`` messages answer with the run rows and its messages."""
    from hermes_notebook.widgets import Jobs

    _, job, marker = ran
    widget = Jobs(hermes.settings(), auto_refresh=0, refresh=False)
    sent: list[dict[str, Any]] = []
    widget.send = lambda content, buffers=None: sent.append(content)  # type: ignore[method-assign]
    try:
        for message in (
            {"type": "runs", "request": 1, "id": job.id},
            {"type": "transcript", "request": 2, "run_id": "api_not_a_run"},
        ):
            future = widget.handle_message(message)
            assert future is not None
            future.result(30)
        runs, refused = sent
        assert runs["type"] == "runs_result" and runs["ok"] and runs["request"] == 1
        assert [r["status"] for r in runs["runs"]] == ["ok"] and runs["runs"][0]["id"].startswith(
            f"cron_{job.id}_"
        )
        assert refused == {
            "type": "transcript_result",
            "request": 2,
            "run_id": "api_not_a_run",
            "ok": False,
            "messages": [],
            "message": "'api_not_a_run' is not a cron run",
        }
        future = widget.handle_message({"type": "transcript", "request": 3, "run_id": runs["runs"][0]["id"]})
        assert future is not None
        future.result(30)
        opened = sent[-1]
        assert opened["ok"] and [m["role"] for m in opened["messages"]] == ["user", "assistant"]
        assert marker in str(opened["messages"][1])
        assert hermes.api_key not in str(sent)
    finally:
        widget.close()


def test_a_refresh_that_sees_a_new_run_says_so() -> None:
    """A newer ``last_run_at`` after a refresh becomes a notice naming the job and its status."""
    from hermes_notebook.widgets.job_runs import finished_runs_notice

    before = [
        {"id": "a", "name": "nightly", "last_run_at": None},
        {"id": "b", "name": "other", "last_run_at": "t1"},
    ]
    after = [
        {"id": "a", "name": "nightly", "last_run_at": "t2", "last_status": "ok"},
        {"id": "b", "name": "other", "last_run_at": "t1"},
        {"id": "c", "name": "new", "last_run_at": "t3"},
    ]
    assert (
        finished_runs_notice(before, after) == "'nightly' finished a run (ok). Open Runs to see what it did."
    )
    assert finished_runs_notice(after, after) is None
