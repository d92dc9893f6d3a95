"""``hermes.jobs``: Hermes cron jobs for notebook code, one class, blocking with ``*_async`` twins.

Each operation is written once as ``name_async`` (a coroutine that runs on the package loop whichever loop
awaits it, :func:`hermes_notebook.runtime.on_loop`) and ``name`` is derived from it by
:func:`hermes_notebook.runtime.blocking` with the same signature and docstring, so the two never drift apart.

Beyond the HTTP client (:class:`~hermes_notebook.client.jobs.JobsClient`) it adds what scripting needs:
validation before any request (:func:`~hermes_notebook.cron.validation.validate_job`; the server answers a bad
schedule with HTTP 500 and a parser dump), find by name, create-or-update by name (:meth:`JobsAPI.ensure`: a
notebook run twice leaves one job), and waiting for a triggered run (:meth:`JobsAPI.wait_for_run`:
``POST /api/jobs/{id}/run`` only marks the job due; it runs on the scheduler's next 60 s tick).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..client.jobs import Job, JobsClient
from ..cron import schedules
from ..cron.display import JobList
from ..cron.validation import validate_job
from ..errors import HermesRunError, HermesTimeoutError, HermesUsageError, HermesValidationError
from ..runtime import blocking, on_loop
from ..settings import Settings
from .reproduce_job import reproduce_prompt
from .runs import RUN_ID, JobRun, RunList, RunTranscript, job_id_of, job_runs, run_transcript

if TYPE_CHECKING:
    from ..client.api import ApiClient

__all__ = ["DEFAULT_WAIT_TIMEOUT", "JobsAPI"]

#: The Hermes scheduler ticks every 60 s; a triggered job can take a tick plus its own run time.
DEFAULT_WAIT_TIMEOUT = 150.0

_VALIDATED = ("name", "schedule", "prompt", "deliver", "skills", "repeat")


@contextmanager
def _server_refusal(what: str) -> Iterator[None]:
    """Say "Hermes refused the job" for the jobs API's HTTP 500 answers to values it does not like.

    Why: our checks already passed the schedule, so a 500 here is another rule of the server (e.g. its
    gateway-lifecycle guard on prompts); the server's own sentence is the useful part, not the status.
    """
    try:
        yield
    except HermesValidationError as exc:
        if exc.status != 500:
            raise
        detail = " ".join((exc.server_message or "no details").split())
        raise HermesValidationError(
            f"Hermes refused the job {what!r}: {detail}",
            status=exc.status,
            endpoint=exc.endpoint,
            server_message=exc.server_message,
            param=exc.param or _refused_field(detail),
        ) from exc


def _refused_field(detail: str) -> str | None:
    """The field a server refusal is about, when its sentence says (the server sends only text)."""
    text = detail.lower()
    if "prompt" in text and ("threat" in text or "blocked" in text):
        return "prompt"
    return None


def _same_schedule(job: Job, wanted: schedules.Schedule) -> bool:
    """Whether the stored schedule already means ``wanted`` (so create-or-update sends nothing)."""
    stored = job.schedule
    if stored.kind != wanted.kind:
        return False
    if wanted.kind == "cron":
        return stored.expr == wanted.expr
    if wanted.kind == "interval":
        return stored.minutes == wanted.minutes
    # A one-shot duration ("30m") is relative to when it was sent: the same text counts as unchanged, so
    # re-running a notebook does not push the job's time back.
    if wanted.minutes is not None:
        return stored.display == wanted.display
    return stored.run_at is not None and wanted.run_at is not None and stored.run_at == wanted.run_at


class JobsAPI:
    """Hermes cron jobs (the API Server's ``/api/jobs``), blocking; every method has an ``*_async`` twin.

    ``client`` is a :class:`JobsClient` (the caller's to close), :class:`Settings` (a client is opened here on
    first use and closed by :meth:`aclose`), or an awaitable factory returning one (created on the package
    loop the first time it is needed, so building a ``JobsAPI`` does no I/O). ``sessions`` gives the API
    client whose stored sessions hold the cron runs; without it one is opened here from the settings when runs
    are first asked for. ``list()`` hides paused and finished jobs, as the server does;
    ``list(include_disabled=True)`` shows them.
    """

    def __init__(
        self,
        client: JobsClient | Settings | Callable[[], Awaitable[JobsClient]],
        sessions: Callable[[], Awaitable[ApiClient]] | None = None,
    ) -> None:
        #: The settings this reaches Hermes with (None for a bare client factory): the jobs widget shows the
        # server's address from them and scrubs their key and token from what it shows.
        self.settings: Settings | None = (
            client
            if isinstance(client, Settings)
            else client.settings
            if isinstance(client, JobsClient)
            else None
        )
        self._owned: JobsClient | None = None
        self._owned_sessions: ApiClient | None = None
        self._client_or_factory = client
        self._sessions_factory = sessions  # the API client whose stored sessions hold the cron runs

    async def _client(self) -> JobsClient:
        source = self._client_or_factory
        if isinstance(source, Settings):
            if self._owned is None:
                self._owned = JobsClient(source)
            return self._owned
        return source if isinstance(source, JobsClient) else await source()

    async def _sessions(self) -> ApiClient:
        """The API client the cron runs are read through: the given factory's, else one opened here."""
        if self._sessions_factory is not None:
            return await self._sessions_factory()
        if self.settings is None:
            raise HermesUsageError("runs() needs the API Server client: use hermes_notebook.connect().jobs")
        if self._owned_sessions is None:
            from ..client.api import ApiClient  # opened only when runs are asked for

            self._owned_sessions = ApiClient(self.settings)
        return self._owned_sessions

    async def aclose(self) -> None:
        """Close the clients this object opened (a given client stays open)."""
        owned, self._owned = self._owned, None
        sessions, self._owned_sessions = self._owned_sessions, None
        for client in (owned, sessions):
            if client is not None:
                await client.aclose()

    def __repr__(self) -> str:
        return (
            "<hermes.jobs: list(), get(id), create(...), update(id, ...), pause/resume/run/delete(id), "
            "find(name), ensure(...), runs(job), transcript(run)>"
        )

    # ---- reading ----

    @on_loop
    async def list_async(self, include_disabled: bool = False) -> JobList[Job]:
        """The jobs as a :class:`JobList` (an HTML table in a notebook, ``to_dicts()`` for pandas); paused and
        finished ones only with ``include_disabled=True``."""
        return JobList(await (await self._client()).list(include_disabled=include_disabled))

    list = blocking(list_async)

    @on_loop
    async def get_async(self, job_id: str) -> Job:
        """One job by id."""
        return await (await self._client()).get(job_id)

    get = blocking(get_async)

    # ---- state changes ----

    @on_loop
    async def pause_async(self, job_id: str) -> Job:
        """Pause a job (it keeps its schedule)."""
        return await (await self._client()).pause(job_id)

    pause = blocking(pause_async)

    @on_loop
    async def resume_async(self, job_id: str) -> Job:
        """Resume a paused job."""
        return await (await self._client()).resume(job_id)

    resume = blocking(resume_async)

    @on_loop
    async def run_async(self, job_id: str) -> Job:
        """Ask the scheduler to run a job on its next tick."""
        return await (await self._client()).run(job_id)

    run = blocking(run_async)

    @on_loop
    async def delete_async(self, job_id: str) -> None:
        """Delete a job."""
        await (await self._client()).delete(job_id)

    delete = blocking(delete_async)

    # ---- validated create / update ----

    @on_loop
    async def create_async(
        self,
        *,
        name: str,
        schedule: str,
        prompt: str | None = None,
        deliver: str | None = None,
        skills: Sequence[str] | str | None = None,
        repeat: int | None = None,
    ) -> Job:
        """Create a job after validating every field (a bad schedule raises before any request)."""
        fields = validate_job(
            name=name,
            schedule=schedule,
            prompt=prompt,
            deliver=deliver,
            skills=skills,
            repeat=repeat,
            require=("name", "schedule"),
        )
        with _server_refusal(fields["name"]):
            return await (await self._client()).create(**fields)

    create = blocking(create_async)

    @on_loop
    async def reproduce_async(
        self, notebook: str | Path, schedule: str, *, name: str | None = None, deliver: str | None = None
    ) -> Job:
        """A job that checks ``notebook`` on ``schedule`` (:func:`~hermes_notebook.reproducibility.reproduce`
        in a fresh kernel) and delivers a report only when the verdict changed since its last run: its agent
        runs the check's command and relays what it printed (``[SILENT]``: nothing to deliver)."""
        path = Path(notebook).expanduser().resolve()
        if not path.is_file():
            raise HermesUsageError(f"jobs.reproduce: no notebook at {path}", param="notebook")
        label = name or f"Reproduce {path.name}"[:200]
        return await self.create_async(
            name=label, schedule=schedule, prompt=reproduce_prompt(path), deliver=deliver
        )

    reproduce = blocking(reproduce_async)

    @on_loop
    async def update_async(self, job_id: str, **fields: Any) -> Job:
        """Update a job after validating the changed fields (``enabled`` passes through)."""
        known = {k: v for k, v in fields.items() if k in _VALIDATED}
        checked = validate_job(**known)
        if "repeat" in fields:
            checked["repeat"] = (
                fields["repeat"] if fields["repeat"] is None else checked["repeat"]
            )  # None: forever
        checked.update({k: v for k, v in fields.items() if k not in _VALIDATED})  # JobsClient checks the rest
        with _server_refusal(job_id):
            return await (await self._client()).update(job_id, **checked)

    update = blocking(update_async)

    # ---- find ----

    @on_loop
    async def find_all_async(self, name: str) -> JobList[Job]:
        """Every job with exactly this name, paused and finished ones included."""
        return JobList(await (await self._client()).list(include_disabled=True)).by_name(name)

    find_all = blocking(find_all_async)

    @on_loop
    async def find_async(self, name: str) -> Job | None:
        """The one job with this name, or ``None``; HermesUsageError if several share it (say which)."""
        found = await self.find_all_async(name)
        if len(found) > 1:
            ids = ", ".join(job.id for job in found)
            raise HermesUsageError(f"{len(found)} jobs are named {name!r} (ids {ids}); use an id instead")
        return found[0] if found else None

    find = blocking(find_async)

    # ---- create or update ----

    @on_loop
    async def ensure_async(
        self,
        *,
        name: str,
        schedule: str,
        prompt: str | None = None,
        deliver: str | None = None,
        skills: Sequence[str] | str | None = None,
        repeat: int | None = None,
    ) -> Job:
        """Create the job called ``name``, or bring the existing one in line: running twice leaves one job.

        Only fields that differ are sent (none at all when nothing changed). Fields left ``None`` are not
        touched on an existing job. A paused job stays paused.
        """
        fields = validate_job(
            name=name,
            schedule=schedule,
            prompt=prompt,
            deliver=deliver,
            skills=skills,
            repeat=repeat,
            require=("name", "schedule"),
        )
        existing = await self.find_async(fields["name"])
        if existing is None:
            with _server_refusal(fields["name"]):
                return await (await self._client()).create(**fields)
        changes: dict[str, Any] = {}
        if not _same_schedule(existing, schedules.parse(fields["schedule"])):
            changes["schedule"] = fields["schedule"]
        if "prompt" in fields and fields["prompt"] != existing.prompt:
            changes["prompt"] = fields["prompt"]
        if "deliver" in fields and fields["deliver"] != existing.deliver:
            changes["deliver"] = fields["deliver"]
        if "skills" in fields and list(fields["skills"]) != list(existing.skills):
            changes["skills"] = fields["skills"]
        if "repeat" in fields and fields["repeat"] != existing.repeat.times:
            changes["repeat"] = fields["repeat"]
        if not changes:
            return existing
        with _server_refusal(existing.name):
            return await (await self._client()).update(existing.id, **changes)

    ensure = blocking(ensure_async)

    # ---- trigger and wait ----

    @on_loop
    async def runs_async(self, job: Any, limit: int = 20) -> RunList:
        """A job's recent runs, newest first (time, status, duration); ``run.transcript()`` opens one."""
        api = await self._sessions()
        return await job_runs(api, job_id_of(job), limit=limit, factory=self._sessions)

    runs = blocking(runs_async)

    @on_loop
    async def transcript_async(self, run: JobRun | str) -> RunTranscript:
        """One run's conversation (the cron prompt, tool calls, the answer), by its :class:`JobRun` or its id
        (``cron_<job id>_<YYYYmmdd_HHMMSS>``); empty when Hermes has no such session."""
        run_id = run.id if isinstance(run, JobRun) else run
        if not isinstance(run_id, str) or not RUN_ID.match(run_id):
            raise HermesUsageError(f"{run_id!r} is not a cron run (cron_<job id>_<YYYYmmdd_HHMMSS>)")
        return await run_transcript(await self._sessions(), run_id)

    transcript = blocking(transcript_async)

    @on_loop
    async def wait_for_run_async(
        self,
        job: Job | str,
        *,
        since: datetime | None | str = "job",
        timeout: float = DEFAULT_WAIT_TIMEOUT,
        poll: float = 2.0,
        raise_on_error: bool = False,
    ) -> Job:
        """Wait until the job's ``last_run_at`` moves past ``since``, and return the updated job.

        ``since`` defaults to the ``last_run_at`` of the ``job`` you pass (the one ``run()`` returned still
        has the previous value), or to the current one if you pass an id. Raises HermesTimeoutError after
        ``timeout`` s (runs start on the scheduler's 60 s tick, and only while the gateway runs), and
        HermesRunError if ``raise_on_error`` and the run's ``last_status`` is ``error``.
        """
        job_id = job.id if isinstance(job, Job) else job
        if since == "job":
            baseline = (
                job.last_run_at
                if isinstance(job, Job)
                else (await (await self._client()).get(job_id)).last_run_at
            )
        else:
            baseline = since if isinstance(since, datetime) or since is None else None
        deadline = time.monotonic() + timeout
        while True:
            current = await (await self._client()).get(job_id)
            if current.last_run_at is not None and current.last_run_at != baseline:
                if raise_on_error and current.last_status == "error":
                    raise HermesRunError(
                        f"job {current.name!r} ran and failed: {current.last_error or 'no details'}",
                        status="error",
                    )
                return current
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise HermesTimeoutError(
                    f"job {current.name!r} ({job_id}) did not finish a run within {timeout:g} s; runs start "
                    "on the scheduler's next tick (every 60 s) and only while the Hermes gateway is running"
                )
            await asyncio.sleep(min(poll, remaining))

    wait_for_run = blocking(wait_for_run_async)

    @on_loop
    async def run_and_wait_async(
        self,
        job: Job | str,
        *,
        timeout: float = DEFAULT_WAIT_TIMEOUT,
        poll: float = 2.0,
        raise_on_error: bool = False,
    ) -> Job:
        """Trigger a run (due on the next scheduler tick) and wait for its result."""
        job_id = job.id if isinstance(job, Job) else job
        before = await (await self._client()).run(job_id)
        return await self.wait_for_run_async(
            before, timeout=timeout, poll=poll, raise_on_error=raise_on_error
        )

    run_and_wait = blocking(run_and_wait_async)
