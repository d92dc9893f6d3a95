"""Async client for Hermes cron jobs on the API Server (``/api/jobs``) and the typed :class:`Job`.

Section numbers (§7) refer to ``docs/protocol/api-server.md`` (hermes-agent 0.19.0). The jobs routes
differ from the rest of the API: errors are ``{"error": str}``, and any exception, including a bad schedule or
a one-shot time in the past, comes back as HTTP 500; this client reports those as HermesValidationError.
"""

from __future__ import annotations

import builtins
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ..cron.validation import (
    MAX_NAME_LENGTH,
    MAX_PROMPT_LENGTH,
    UPDATABLE_FIELDS,
    check_deliver,
    check_job_id,
    check_name,
    check_prompt,
    check_repeat,
    check_schedule_text,
    check_skills,
    update_body,
)
from ..errors import HermesValidationError
from ._http import ApiServerClient

__all__ = [
    "MAX_NAME_LENGTH",
    "MAX_PROMPT_LENGTH",
    "UPDATABLE_FIELDS",
    "Job",
    "JobRepeat",
    "JobSchedule",
    "JobsClient",
]


def _parse_time(value: object) -> datetime | None:
    """ISO-8601 with offset in the configured Hermes timezone, or null (§7 "Job object")."""
    if not isinstance(value, str) or not value:
        return None
    try:
        return datetime.fromisoformat(value)
    except ValueError:
        return None


@dataclass(frozen=True)
class JobSchedule:
    """A parsed schedule: ``kind`` is ``cron`` (``expr``), ``interval`` (``minutes``) or ``once``
    (``run_at``)."""

    kind: str
    display: str
    expr: str | None = None
    minutes: int | None = None
    run_at: datetime | None = None

    @classmethod
    def from_json(cls, data: object) -> JobSchedule:
        """Build from the job's ``schedule`` object (a raw string is kept as its display)."""
        if not isinstance(data, Mapping):
            return cls(kind="unknown", display=str(data))
        return cls(
            kind=str(data.get("kind", "unknown")),
            display=str(data.get("display", "")),
            expr=data.get("expr"),
            minutes=data.get("minutes"),
            run_at=_parse_time(data.get("run_at")),
        )


@dataclass(frozen=True)
class JobRepeat:
    """How many runs: ``times`` is None for forever; ``completed`` counts runs so far."""

    times: int | None
    completed: int = 0

    @classmethod
    def from_json(cls, data: object) -> JobRepeat:
        """Build from ``{"times","completed"}``; a bare int (a job corrupted by an int PATCH, §7) is its
        times."""
        if isinstance(data, Mapping):
            return cls(times=data.get("times"), completed=int(data.get("completed") or 0))
        if isinstance(data, int) and not isinstance(data, bool):
            return cls(times=data)
        return cls(times=None)


# Job fields this module knows; anything else the server sends lands in Job.extra.
_KNOWN = (
    "id name prompt skills skill model provider base_url script context_from enabled_toolsets workdir "
    "provider_snapshot model_snapshot no_agent schedule schedule_display repeat enabled state paused_at "
    "paused_reason created_at next_run_at last_run_at last_status last_error last_delivery_error deliver "
    "origin latest_execution"
).split()


@dataclass(frozen=True, repr=False)
class Job:
    """A cron job as the server returns it (§7 "Job object"); unknown fields are kept in ``extra``.

    ``state`` is ``scheduled``, ``paused``, ``completed`` or ``error``. ``latest_execution`` is only filled by
    :meth:`JobsClient.list`. Times are timezone-aware datetimes.
    """

    id: str
    name: str
    prompt: str = ""
    schedule: JobSchedule = field(default_factory=lambda: JobSchedule(kind="unknown", display=""))
    schedule_display: str = ""
    repeat: JobRepeat = field(default_factory=lambda: JobRepeat(times=None))
    enabled: bool = True
    state: str | None = None
    deliver: str | None = None
    skills: tuple[str, ...] = ()
    skill: str | None = None
    created_at: datetime | None = None
    next_run_at: datetime | None = None
    last_run_at: datetime | None = None
    last_status: str | None = None
    last_error: str | None = None
    last_delivery_error: str | None = None
    paused_at: datetime | None = None
    paused_reason: str | None = None
    model: str | None = None
    provider: str | None = None
    base_url: str | None = None
    script: str | None = None
    context_from: Any = None
    enabled_toolsets: Any = None
    workdir: str | None = None
    provider_snapshot: str | None = None
    model_snapshot: str | None = None
    no_agent: bool = False
    origin: Mapping[str, Any] | None = None
    latest_execution: Mapping[str, Any] | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)
    raw: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Job:
        """Build from one job object of the server."""
        times = ("created_at", "next_run_at", "last_run_at", "paused_at")
        values: dict[str, Any] = {k: data.get(k) for k in _KNOWN if k in data}
        for key in times:
            values[key] = _parse_time(data.get(key))
        values["schedule"] = JobSchedule.from_json(data.get("schedule"))
        values["repeat"] = JobRepeat.from_json(data.get("repeat"))
        values["skills"] = tuple(data.get("skills") or ())
        values["enabled"] = bool(data.get("enabled", True))
        values["no_agent"] = bool(data.get("no_agent", False))
        values["prompt"] = data.get("prompt") or ""
        values["schedule_display"] = data.get("schedule_display") or values["schedule"].display
        values["name"] = str(data.get("name", ""))
        values["id"] = str(data.get("id", ""))
        extra = {k: v for k, v in data.items() if k not in _KNOWN}
        return cls(**values, extra=extra, raw=dict(data))

    def _repr_html_(self) -> str:
        """A one-job table for notebooks (escaped: names and prompts are user text)."""
        from ..cron.display import job_html  # a lower layer: the rendering needs only the schedule rules

        return job_html(self)

    def __repr__(self) -> str:
        next_run = self.next_run_at.isoformat(timespec="seconds") if self.next_run_at else None
        return (
            f"Job(id={self.id!r}, name={self.name!r}, schedule={self.schedule_display!r}, "
            f"state={self.state!r}, "
            f"enabled={self.enabled}, next_run_at={next_run!r}, last_status={self.last_status!r})"
        )


class JobsClient(ApiServerClient):
    """Async client for ``/api/jobs``. Use ``async with JobsClient(...) as jobs:`` or call :meth:`aclose`.

    Jobs only run while a scheduler ticks (the gateway's 60 s ticker, or ``hermes cron tick``).
    """

    # --- reading ---

    async def list(self, include_disabled: bool = False) -> builtins.list[Job]:
        """All jobs; by default the server hides ``enabled: false`` ones (paused, finished one-shots)."""
        params = {"include_disabled": "true"} if include_disabled else None
        data = await self._http.request_json("GET", "/api/jobs", params=params)
        return [Job.from_json(item) for item in data.get("jobs", [])]

    async def get(self, job_id: str) -> Job:
        """One job; HermesNotFoundError if there is none."""
        return await self._job("GET", f"/api/jobs/{check_job_id(job_id)}")

    # --- writing ---

    async def create(
        self,
        *,
        name: str,
        schedule: str,
        prompt: str | None = None,
        deliver: str | None = None,
        skills: Sequence[str] | str | None = None,
        repeat: int | None = None,
    ) -> Job:
        """Create a job. ``schedule``: ``every 30m``, a 5-field numeric cron (no ``@daily``, no ``MON``), an
        ISO time, or a bare duration like ``2h`` (a one-shot). ``deliver`` defaults to ``local`` server-side.
        ``repeat`` is a positive number of runs (omit for forever; one-shots default to 1).
        """
        body: dict[str, Any] = {"name": check_name(name), "schedule": check_schedule_text(schedule)}
        if prompt is not None:
            body["prompt"] = check_prompt(prompt)
        if deliver is not None:
            body["deliver"] = check_deliver(deliver)
        if skills is not None:
            body["skills"] = check_skills(skills)
        if repeat is not None:
            body["repeat"] = check_repeat(repeat)  # create takes the bare int (api:4183)
        return await self._job("POST", "/api/jobs", json_body=body, schedule=schedule)

    async def update(self, job_id: str, **fields: Any) -> Job:
        """Change some of ``name, schedule, prompt, deliver, skills, repeat, enabled``.

        ``repeat`` is sent as ``{"times": N, "completed": 0}`` (``None`` means forever): the server stores a
        bare int as-is, which breaks the job's next run (§7 "PATCH pitfalls"). ``enabled=False`` leaves
        ``state: scheduled``; use :meth:`pause` to pause.
        """
        check_job_id(job_id)
        body = update_body(fields)
        return await self._job(
            "PATCH", f"/api/jobs/{job_id}", json_body=body, schedule=fields.get("schedule")
        )

    async def pause(self, job_id: str) -> Job:
        """Pause: ``enabled: false``, ``state: paused`` (hidden from :meth:`list` unless include_disabled)."""
        return await self._job("POST", f"/api/jobs/{check_job_id(job_id)}/pause")

    async def resume(self, job_id: str) -> Job:
        """Resume; ``next_run_at`` is recomputed from now (a one-shot whose time passed is refused)."""
        return await self._job("POST", f"/api/jobs/{check_job_id(job_id)}/resume")

    async def run(self, job_id: str) -> Job:
        """Ask for a run soon. This only sets ``next_run_at`` to now (and enables the job); the job runs on
        the scheduler's next tick, up to 60 s later, and only while a gateway or ``hermes cron tick`` runs.
        The returned job still shows the previous ``last_run_at``; poll :meth:`get` for ``last_status``.
        """
        return await self._job("POST", f"/api/jobs/{check_job_id(job_id)}/run")

    async def delete(self, job_id: str) -> None:
        """Delete the job and its output directory."""
        await self._http.request_json("DELETE", f"/api/jobs/{check_job_id(job_id)}")

    async def _job(
        self, method: str, path: str, *, json_body: object = None, schedule: str | None = None
    ) -> Job:
        try:
            data = await self._http.request_json(method, path, json_body=json_body, validation_on_500=True)
        except HermesValidationError as exc:
            if exc.status not in (400, 500):
                raise
            # 0.19.0's jobs routes answer every refused value with HTTP 500 {"error": str} (protocol §7),
            # newer servers with 400: name the schedule only when the server's sentence is about it, otherwise
            # say the job was refused.
            detail = " ".join((exc.server_message or "no details").split())
            about_schedule = schedule is not None and _SCHEDULE_ERROR.search(detail) is not None
            subject = f"the schedule {schedule!r}" if about_schedule else "the job"
            raise HermesValidationError(
                f"{exc.endpoint} refused {subject}: {detail}",
                status=exc.status,
                endpoint=exc.endpoint,
                server_message=exc.server_message,
            ) from exc
        return Job.from_json(data.get("job") or {})


_SCHEDULE_ERROR = re.compile(r"schedule|duration|timestamp|cron|interval|one-shot|in the past", re.IGNORECASE)
