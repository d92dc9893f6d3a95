"""``hermes.jobs``: the cron-jobs client for notebook code, blocking with ``*_async`` twins.

Why one definition per operation: each operation is written once as ``name_async`` (a coroutine that runs on
the package loop whichever loop awaits it, :func:`hermes_notebook.runtime.on_loop`), and ``name`` is derived
from it by :func:`hermes_notebook.runtime.blocking` with the same signature and docstring, so the two never
drift apart and type checkers see both.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from ..client.jobs import Job, JobsClient
from ..errors import HermesUsageError
from ..runtime import blocking, on_loop
from .helpers import JobList, JobsHelpers
from .runs import RunList, job_id_of, job_runs

if TYPE_CHECKING:
    from ..client.api import ApiClient

__all__ = ["JobsAPI"]


class JobsAPI:
    """Hermes cron jobs (the API Server's ``/api/jobs``), blocking; every method has an ``*_async`` twin.

    ``client`` is an awaitable factory returning the :class:`JobsClient` to use; it is created on the
    package loop the first time it is needed, so building a ``JobsAPI`` does no I/O.
    """

    def __init__(
        self, client: Callable[[], Awaitable[JobsClient]], sessions: Callable[[], Awaitable[ApiClient]] | None = None,
    ) -> None:
        self._client_factory = client
        self._sessions_factory = sessions  # the API client whose stored sessions hold the cron runs

    async def _client(self) -> JobsClient:
        return await self._client_factory()

    def __repr__(self) -> str:
        return "<hermes.jobs: list(), get(id), create(...), update(id, ...), pause/resume/run/delete(id)>"

    @on_loop
    async def list_async(self, include_disabled: bool = True) -> JobList:
        """All jobs (paused ones included unless ``include_disabled=False``) as a ``JobList``: an HTML table
        in a notebook, ``to_dicts()`` for pandas."""
        return await (await self._helpers()).list_async(include_disabled)

    list = blocking(list_async)

    @on_loop
    async def get_async(self, job_id: str) -> Job:
        """One job by id."""
        return await (await self._client()).get(job_id)

    get = blocking(get_async)

    @on_loop
    async def create_async(
        self,
        *,
        name: str,
        schedule: str,
        prompt: str | None = None,
        deliver: str | None = None,
        skills: Any = None,
        repeat: int | None = None,
    ) -> Job:
        """Create a job (``schedule``: cron, ``every 30m``, ``30m``, or an ISO time); every field is checked
        before anything is sent, so a bad schedule raises HermesValidationError naming it."""
        return await (await self._helpers()).create_async(
            name=name, schedule=schedule, prompt=prompt, deliver=deliver, skills=skills, repeat=repeat
        )

    create = blocking(create_async)

    @on_loop
    async def update_async(self, job_id: str, **fields: Any) -> Job:
        """Change some fields of a job (checked before sending, like :meth:`create`)."""
        return await (await self._helpers()).update_async(job_id, **fields)

    update = blocking(update_async)

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

    # ------------------------------------------------------------------------------------------------------
    # Scripting helpers users expect (implemented in hermes_notebook/jobs/helpers.py)
    # ------------------------------------------------------------------------------------------------------

    async def _helpers(self) -> JobsHelpers:
        return JobsHelpers(await self._client())

    @on_loop
    async def find_async(self, name: str) -> Job | None:
        """The one job with this exact name (paused ones included), or None; an error if several share it."""
        return await (await self._helpers()).find_async(name)

    find = blocking(find_async)

    @on_loop
    async def find_all_async(self, name: str) -> Any:
        """Every job with this exact name, as a ``JobList``."""
        return await (await self._helpers()).find_all_async(name)

    find_all = blocking(find_all_async)

    @on_loop
    async def ensure_async(
        self,
        *,
        name: str,
        schedule: str,
        prompt: str | None = None,
        deliver: str | None = None,
        skills: Any = None,
        repeat: int | None = None,
    ) -> Job:
        """Create the job called ``name`` or update it to match: running a notebook twice leaves one job."""
        return await (await self._helpers()).ensure_async(
            name=name, schedule=schedule, prompt=prompt, deliver=deliver, skills=skills, repeat=repeat
        )

    ensure = blocking(ensure_async)

    @on_loop
    async def runs_async(self, job: Any, limit: int = 20) -> RunList:
        """A job's recent runs, newest first (time, status, duration); ``run.transcript()`` opens one."""
        if self._sessions_factory is None:
            raise HermesUsageError("runs() needs the API Server client: use hermes_notebook.connect().jobs")
        api = await self._sessions_factory()
        return await job_runs(api, job_id_of(job), limit=limit, factory=self._sessions_factory)

    runs = blocking(runs_async)

    @on_loop
    async def wait_for_run_async(self, job: Any, *, timeout: float = 150.0, poll: float = 2.0,
                           raise_on_error: bool = False) -> Job:
        """Wait until a triggered job's ``last_run_at`` changes (runs start on the 60 s scheduler tick)."""
        return await (await self._helpers()).wait_for_run_async(
            job, timeout=timeout, poll=poll, raise_on_error=raise_on_error
        )

    wait_for_run = blocking(wait_for_run_async)

    @on_loop
    async def run_and_wait_async(self, job: Any, *, timeout: float = 150.0, poll: float = 2.0,
                           raise_on_error: bool = False) -> Job:
        """Trigger a run and wait for its result (``last_run_at``, ``last_status``, ``last_error``)."""
        return await (await self._helpers()).run_and_wait_async(
            job, timeout=timeout, poll=poll, raise_on_error=raise_on_error
        )

    run_and_wait = blocking(run_and_wait_async)
