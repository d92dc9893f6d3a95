"""``hermes.jobs``: the cron-jobs client for notebook code, blocking with ``*_async`` twins.

Why one definition per operation: each operation is written once as a coroutine decorated with
:func:`operation`; the decorator installs ``name_async`` (the coroutine, for ``await`` in a cell) and ``name``
(blocking, through the package loop with :func:`hermes_notebook.runtime.run_sync`) with the same signature and
docstring. Adding a helper is adding one coroutine, so the two never drift apart.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from .client.jobs import Job, JobsClient
from .jobs_helpers import JobList, JobsHelpers
from .runtime import operation

__all__ = ["JobsAPI"]

class JobsAPI:
    """Hermes cron jobs (the API Server's ``/api/jobs``), blocking; every method has an ``*_async`` twin.

    ``client`` is an awaitable factory returning the :class:`JobsClient` to use; it is created on the
    package loop the first time it is needed, so building a ``JobsAPI`` does no I/O.
    """

    def __init__(self, client: Callable[[], Awaitable[JobsClient]]) -> None:
        self._client_factory = client

    async def _client(self) -> JobsClient:
        return await self._client_factory()

    def __repr__(self) -> str:
        return "<hermes.jobs: list(), get(id), create(...), update(id, ...), pause/resume/run/delete(id)>"

    @operation
    async def list(self, include_disabled: bool = True) -> JobList:
        """All jobs (paused ones included unless ``include_disabled=False``) as a ``JobList``: an HTML table
        in a notebook, ``to_dicts()`` for pandas."""
        return await (await self._helpers()).list_async(include_disabled)

    @operation
    async def get(self, job_id: str) -> Job:
        """One job by id."""
        return await (await self._client()).get(job_id)

    @operation
    async def create(
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

    @operation
    async def update(self, job_id: str, **fields: Any) -> Job:
        """Change some fields of a job (checked before sending, like :meth:`create`)."""
        return await (await self._helpers()).update_async(job_id, **fields)

    @operation
    async def pause(self, job_id: str) -> Job:
        """Pause a job (it keeps its schedule)."""
        return await (await self._client()).pause(job_id)

    @operation
    async def resume(self, job_id: str) -> Job:
        """Resume a paused job."""
        return await (await self._client()).resume(job_id)

    @operation
    async def run(self, job_id: str) -> Job:
        """Ask the scheduler to run a job on its next tick."""
        return await (await self._client()).run(job_id)

    @operation
    async def delete(self, job_id: str) -> None:
        """Delete a job."""
        await (await self._client()).delete(job_id)

    # ------------------------------------------------------------------------------------------------------
    # Scripting helpers users expect (implemented in hermes_notebook/jobs_helpers.py)
    # ------------------------------------------------------------------------------------------------------

    async def _helpers(self) -> JobsHelpers:
        return JobsHelpers(await self._client())

    @operation
    async def find(self, name: str) -> Job | None:
        """The one job with this exact name (paused ones included), or None; an error if several share it."""
        return await (await self._helpers()).find_async(name)

    @operation
    async def find_all(self, name: str) -> Any:
        """Every job with this exact name, as a ``JobList``."""
        return await (await self._helpers()).find_all_async(name)

    @operation
    async def ensure(
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

    @operation
    async def wait_for_run(self, job: Any, *, timeout: float = 150.0, poll: float = 2.0,
                           raise_on_error: bool = False) -> Job:
        """Wait until a triggered job's ``last_run_at`` changes (runs start on the 60 s scheduler tick)."""
        return await (await self._helpers()).wait_for_run_async(
            job, timeout=timeout, poll=poll, raise_on_error=raise_on_error
        )

    @operation
    async def run_and_wait(self, job: Any, *, timeout: float = 150.0, poll: float = 2.0,
                           raise_on_error: bool = False) -> Job:
        """Trigger a run and wait for its result (``last_run_at``, ``last_status``, ``last_error``)."""
        return await (await self._helpers()).run_and_wait_async(
            job, timeout=timeout, poll=poll, raise_on_error=raise_on_error
        )
