"""What scheduled jobs actually did: each cron run is a stored Hermes session you can list and open.

Hermes 0.19 stores every cron run as a session with ``source="cron"`` and the id
``cron_<job_id>_<YYYYmmdd_HHMMSS>`` (dashboard-protocol: ``GET /api/cron/jobs/{id}/runs``). The API Server
lists those sessions (``GET /api/sessions?source=cron``) and serves their messages, so the runs need only the
API key; the transcript is folded by the same turn model as any other history.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from ..errors import HermesNotFoundError, HermesUsageError
from ..inert import table_html, terminal_safe
from ..render import transcript_bundle
from ..runtime import blocking, on_loop

if TYPE_CHECKING:
    from ..client.api import ApiClient

__all__ = ["JobRun", "RunList", "RunTranscript", "job_runs", "run_status"]

ApiFactory = Callable[[], Awaitable["ApiClient"]]

#: ``cron_<job id>_<date>_<time>``: the session id Hermes gives a cron run.
RUN_ID = re.compile(r"^cron_(?P<job>[A-Za-z0-9]+)_(?P<stamp>\d{8}_\d{6})$")
#: Sessions looked at per listing (the API Server's page limit).
PAGE = 200


def run_status(row: Mapping[str, Any]) -> str:
    """``running`` until the session ended, ``ok`` for a completed cron run, else the server's end reason."""
    if row.get("ended_at") is None:
        return "running"
    reason = str(row.get("end_reason") or "")
    if reason == "cron_complete":
        return "ok"
    return reason.removeprefix("cron_") or "ended"


def _time(value: Any) -> datetime | None:
    if isinstance(value, (int, float)):
        return datetime.fromtimestamp(value, tz=timezone.utc)
    return None


class RunTranscript(list):  # type: ignore[type-arg]
    """A run's messages (turn-model dicts) that display as a static, read-only transcript."""

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        return transcript_bundle(self)


@dataclass
class JobRun:
    """One run of a cron job: when, how it ended, how long it took; ``transcript()`` opens it."""

    id: str
    job_id: str
    status: str
    started_at: datetime | None
    ended_at: datetime | None
    title: str | None = None
    message_count: int | None = None
    tool_call_count: int | None = None
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False)
    _api: ApiFactory | None = field(default=None, repr=False, compare=False)

    @classmethod
    def from_session(cls, row: Mapping[str, Any], api: ApiFactory | None = None) -> JobRun:
        match = RUN_ID.match(str(row.get("id") or ""))
        if match is None:
            raise HermesUsageError(f"{row.get('id')!r} is not a cron run session id (cron_<job>_<timestamp>)")
        return cls(
            id=match.group(0),
            job_id=match.group("job"),
            status=run_status(row),
            started_at=_time(row.get("started_at")),
            ended_at=_time(row.get("ended_at")),
            title=row.get("title"),
            message_count=row.get("message_count"),
            tool_call_count=row.get("tool_call_count"),
            raw=dict(row),
            _api=api,
        )

    @property
    def duration(self) -> float | None:
        """Seconds from start to end (None while it runs)."""
        if self.started_at is None or self.ended_at is None:
            return None
        return (self.ended_at - self.started_at).total_seconds()

    def to_dict(self) -> dict[str, Any]:
        """A JSON-able row (for widgets and pandas)."""
        return {
            "id": self.id,
            "job_id": self.job_id,
            "status": self.status,
            "started_at": self.started_at.isoformat() if self.started_at else None,
            "ended_at": self.ended_at.isoformat() if self.ended_at else None,
            "duration": self.duration,
            "title": self.title,
            "message_count": self.message_count,
            "tool_call_count": self.tool_call_count,
        }

    @on_loop
    async def transcript_async(self) -> RunTranscript:
        """The run's conversation (the cron prompt, tool calls, the final answer), folded like any history."""
        if self._api is None:
            raise HermesUsageError(
                "this run was not listed through hermes.jobs.runs(); it cannot fetch its transcript"
            )
        return await run_transcript(await self._api(), self.id)

    transcript = blocking(transcript_async)

    def __repr__(self) -> str:
        when = self.started_at.strftime("%Y-%m-%d %H:%M:%S") if self.started_at else "?"
        took = f", {self.duration:.1f} s" if self.duration is not None else ""
        return terminal_safe(f"<JobRun {self.id} {self.status} at {when}{took}>")  # the status is server text


class RunList(list):  # type: ignore[type-arg]
    """Runs of a job, newest first; an HTML table in a notebook, ``to_dicts()`` for pandas."""

    def to_dicts(self) -> list[dict[str, Any]]:
        return [run.to_dict() for run in self]

    def _repr_html_(self) -> str:
        # Statuses come from the server's end reason: escaped cells in the inert (MathJax-ignored) container.
        rows = [
            {
                "started": r.started_at.strftime("%Y-%m-%d %H:%M:%S") if r.started_at else "",
                "status": r.status,
                "duration": "" if r.duration is None else f"{r.duration:.1f} s",
                "session": r.id,
            }
            for r in self
        ]
        return table_html(rows, ("started", "status", "duration", "session"), empty="no runs yet")

    def __str__(self) -> str:
        return "\n".join(repr(r) for r in self) or "(no runs yet)"

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(str(self))


async def job_runs(
    api: ApiClient, job_id: str, *, limit: int = 20, factory: ApiFactory | None = None
) -> RunList:
    """The newest ``limit`` runs of ``job_id`` (from the cron sessions the API Server lists)."""
    if not isinstance(job_id, str) or not re.fullmatch(r"[A-Za-z0-9]+", job_id):
        raise HermesUsageError(f"a job id is letters and digits, not {job_id!r}")
    if not 1 <= limit <= PAGE:
        raise HermesUsageError(f"limit must be between 1 and {PAGE}; got {limit}")
    prefix = f"cron_{job_id}_"
    sessions = await api.sessions(limit=PAGE, source="cron")
    rows = [dict(s.raw) or {"id": s.id} for s in sessions if s.id.startswith(prefix)]
    runs = [JobRun.from_session(row, factory) for row in rows if RUN_ID.match(str(row.get("id")))]
    runs.sort(key=lambda r: r.id, reverse=True)  # the id ends in the start time
    return RunList(runs[:limit])


async def run_transcript(api: ApiClient, session_id: str) -> RunTranscript:
    """A cron run session's messages as turn-model dicts (empty if the server has no such session)."""
    from ..turns import fold_history

    try:
        rows = [dict(m.raw) for m in await api.session_messages(session_id)]
    except HermesNotFoundError:
        rows = []
    return RunTranscript([m.to_dict() for m in fold_history(rows)])


def job_id_of(job: Any) -> str:
    """A job's id from a Job, a mapping with ``id``, or the id itself."""
    value = job.get("id") if isinstance(job, Mapping) else getattr(job, "id", job)
    if not isinstance(value, str):
        raise HermesUsageError(f"runs() needs a job or a job id, not {type(job).__name__}")
    return value
