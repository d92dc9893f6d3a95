"""JobsClient and Job against the real Hermes ``/api/jobs`` routes (docs/protocol/api-server.md §7)."""

from __future__ import annotations

import json
import socket
from collections.abc import AsyncIterator
from datetime import datetime, timedelta

import pytest
import pytest_asyncio

from hermes_notebook.client.jobs import Job, JobRepeat, JobsClient
from hermes_notebook.errors import HermesNotFoundError, HermesUsageError, HermesValidationError
from hermes_notebook.settings import Settings

pytestmark = pytest.mark.both_servers  # real-server tests run on 0.19.0 and newer Hermes

# A job exactly as GET /api/jobs returned it in shared/hermes/transcripts/api_jobs.txt, plus an unknown field.
_WIRE_JOB = json.loads(
    '{"id": "1418ae7571b3", "name": "probe job", "prompt": "RUN echo from-cron", "skills": [], "skill": null,'
    ' "model": null, "provider": null, "provider_snapshot": "custom", "model_snapshot": "fake-model",'
    ' "base_url": null, "script": null, "no_agent": false, "context_from": null, "schedule": {"kind":'
    ' "interval", "minutes": 60, "display": "every 60m"}, "schedule_display": "every 60m", "repeat":'
    ' {"times": null, "completed": 0}, "enabled": true, "state": "scheduled", "paused_at": null,'
    ' "paused_reason": null, "created_at": "2026-12-02T10:31:00.547542+00:00", "next_run_at":'
    ' "2026-12-02T11:31:00.554302+00:00", "last_run_at": null, "last_status": null, "last_error": null,'
    ' "last_delivery_error": null, "deliver": "local", "origin": {"platform": "api_server", "chat_id": '
    '"api"},'
    ' "enabled_toolsets": null, "workdir": null, "latest_execution": null, "fire_claim": null}'
)


@pytest_asyncio.fixture(loop_scope="function")
async def jobs(settings: Settings) -> AsyncIterator[JobsClient]:
    """A jobs client for the shared servers, closed after the test."""
    async with JobsClient(settings) as client:
        yield client


def _offline() -> JobsClient:
    """A client whose server does not exist, for checks that must fail before any request."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return JobsClient(url=f"http://127.0.0.1:{port}", key="k" * 32)


def test_job_from_wire_is_typed_keeps_unknown_fields_and_reads_well() -> None:
    """Job.from_json types schedule/repeat/times, keeps unknown keys in extra, and has a one-line repr."""
    job = Job.from_json(_WIRE_JOB)
    assert job.schedule.kind == "interval" and job.schedule.minutes == 60
    assert job.repeat == JobRepeat(times=None, completed=0)
    assert job.next_run_at == datetime.fromisoformat("2026-12-02T11:31:00.554302+00:00")
    assert job.next_run_at is not None and job.next_run_at.utcoffset() == timedelta(0)
    assert job.extra == {"fire_claim": None} and job.raw["id"] == "1418ae7571b3"
    assert job.origin == {"platform": "api_server", "chat_id": "api"}
    assert repr(job) == (
        "Job(id='1418ae7571b3', name='probe job', schedule='every 60m', state='scheduled', enabled=True, "
        "next_run_at='2026-12-02T11:31:00+00:00', last_status=None)"
    )
    assert JobRepeat.from_json(3) == JobRepeat(times=3, completed=0)  # a job corrupted by an int PATCH


async def test_jobs_round_trip(jobs: JobsClient) -> None:
    """create, list (with and without disabled), get, update incl. repeat, pause, resume, run and delete."""
    job = await jobs.create(name="nb round trip", schedule="every 1h", prompt="hello from cron", repeat=3)
    assert job.id and job.schedule.kind == "interval" and job.schedule_display == "every 60m"
    assert job.repeat == JobRepeat(times=3, completed=0) and job.deliver == "local" and job.enabled
    try:
        assert job.id in {j.id for j in await jobs.list()}
        fetched = await jobs.get(job.id)
        assert (fetched.name, fetched.prompt) == ("nb round trip", "hello from cron")

        updated = await jobs.update(job.id, name="nb renamed", schedule="every 2h", repeat=5)
        assert (updated.name, updated.schedule.minutes) == ("nb renamed", 120)
        assert updated.repeat == JobRepeat(times=5, completed=0)
        assert (await jobs.get(job.id)).raw["repeat"] == {
            "times": 5,
            "completed": 0,
        }  # object, not a bare int

        paused = await jobs.pause(job.id)
        assert (paused.enabled, paused.state) == (False, "paused") and paused.paused_at is not None
        assert job.id not in {j.id for j in await jobs.list()}
        assert job.id in {j.id for j in await jobs.list(include_disabled=True)}

        resumed = await jobs.resume(job.id)
        assert (resumed.enabled, resumed.state) == (True, "scheduled")

        triggered = await jobs.run(job.id)
        assert triggered.next_run_at is not None and triggered.last_run_at is None
        assert triggered.next_run_at <= datetime.now(triggered.next_run_at.tzinfo)
    finally:
        await jobs.delete(job.id)
    with pytest.raises(HermesNotFoundError):
        await jobs.get(job.id)


async def test_invalid_schedule_raises_validation_error_naming_it(jobs: JobsClient) -> None:
    """A bad schedule (HTTP 500 {"error"} from 0.19.0, 400 from newer servers) raises HermesValidationError
    that names the schedule."""
    with pytest.raises(HermesValidationError) as info:
        await jobs.create(name="nb bad schedule", schedule="@daily")
    assert info.value.status in (400, 500) and "'@daily'" in str(info.value)
    assert "Invalid schedule" in (info.value.server_message or "")
    assert isinstance(info.value, ValueError)
    with pytest.raises(HermesValidationError, match="'0 9 \\* \\* TUE'"):  # day names are refused too
        await jobs.create(name="nb bad schedule", schedule="0 9 * * TUE")


async def test_update_refuses_unknown_fields_before_sending() -> None:
    """update() with a field PATCH would drop (e.g. model) raises HermesUsageError without a request."""
    client = _offline()
    with pytest.raises(HermesUsageError, match="cannot update model"):
        await client.update("0123456789ab", model="gpt")
    with pytest.raises(HermesUsageError, match="at least one field"):
        await client.update("0123456789ab")
    with pytest.raises(HermesUsageError, match="repeat must be a positive integer"):
        await client.update("0123456789ab", repeat=0)
    await client.aclose()


async def test_bad_ids_and_values_are_refused_before_sending() -> None:
    """Ids that are not 12 hex characters and invalid create values raise HermesUsageError locally."""
    client = _offline()
    for bad in ("nothex", "0123456789AB", "../../etc", ""):
        with pytest.raises(HermesUsageError, match="12 lowercase hex"):
            await client.get(bad)
    with pytest.raises(HermesUsageError, match="repeat"):
        await client.create(name="x", schedule="every 1h", repeat=True)  # type: ignore[arg-type]
    with pytest.raises(HermesUsageError, match="name"):
        await client.create(name=" ", schedule="every 1h")
    with pytest.raises(HermesUsageError, match="prompt"):
        await client.create(name="x", schedule="every 1h", prompt="p" * 5001)
    await client.aclose()


async def test_missing_job_raises_not_found(jobs: JobsClient) -> None:
    """Getting, pausing or deleting a well-formed but unknown id raises HermesNotFoundError ("Job not
    found")."""
    for call in (jobs.get, jobs.pause, jobs.delete):
        with pytest.raises(HermesNotFoundError) as info:
            await call("0123456789ab")
        assert info.value.server_message == "Job not found"
