"""What users expect when they script Hermes cron jobs from a notebook, on top of :class:`JobsClient`.

- **Validation before any request**: :func:`validate_job` checks name, schedule (exactly as Hermes 0.19.0
  parses it, :mod:`hermes_notebook.schedules`), prompt, deliver, skills and repeat, and raises
  :class:`HermesValidationError` / :class:`HermesUsageError` without sending anything. Why: the server answers
  a bad schedule with HTTP 500 and a parser dump.
- **Find by name** and **create-or-update by name** (:meth:`JobsHelpers.ensure`), so re-running a notebook
  leaves one job, changed only where the cell changed.
- **Wait for a triggered run** (:meth:`JobsHelpers.wait_for_run`): ``POST /api/jobs/{id}/run`` only marks
  the job due; it runs on the scheduler's next 60 s tick, and ``last_run_at`` changes when it has finished.
- **Display**: :class:`JobList` (a list of jobs with an HTML table repr and ``to_dicts()`` for pandas) and
  :func:`job_html` / :func:`job_to_dict` for one job.

Every coroutine runs on the package loop (:mod:`hermes_notebook.runtime`); each ``*_async`` method has a
blocking twin for notebook cells.
"""

from __future__ import annotations

import asyncio
import html
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import Any, SupportsIndex, overload

from ..client.jobs import MAX_NAME_LENGTH, MAX_PROMPT_LENGTH, Job, JobsClient
from ..errors import HermesRunError, HermesTimeoutError, HermesUsageError, HermesValidationError
from ..inert import html_block
from ..runtime import blocking, on_loop
from . import schedules

__all__ = [
    "JobList",
    "JobsHelpers",
    "job_html",
    "job_to_dict",
    "validate_job",
]

#: The Hermes scheduler ticks every 60 s; a triggered job can take a tick plus its own run time.
DEFAULT_WAIT_TIMEOUT = 150.0


# --- validation ------------------------------------------------------------------------------------------


def validate_job(
    *,
    name: object = None,
    schedule: object = None,
    prompt: object = None,
    deliver: object = None,
    skills: object = None,
    repeat: object = None,
    require: Iterable[str] = (),
) -> dict[str, Any]:
    """Check job fields the way the server will, and return them ready to send (``None`` ones dropped).

    ``require`` names fields that must be present (``("name", "schedule")`` for a create). A bad schedule
    raises :class:`HermesValidationError` (with an example that works); other bad values raise
    :class:`HermesUsageError`. Nothing is sent in either case.
    """
    given = {"name": name, "schedule": schedule, "prompt": prompt, "deliver": deliver, "skills": skills,
             "repeat": repeat}
    for key in require:
        if given.get(key) is None:
            raise HermesUsageError(f"a job needs a {key}")
    out: dict[str, Any] = {}
    if name is not None:
        if not isinstance(name, str) or not name.strip():
            raise HermesUsageError("a job name must be a non-empty string")
        if len(name.strip()) > MAX_NAME_LENGTH:
            raise HermesUsageError(f"a job name has at most {MAX_NAME_LENGTH} characters; this one has {len(name.strip())}")
        out["name"] = name.strip()
    if schedule is not None:
        out["schedule"] = schedules.validate(schedule)
    if prompt is not None:
        if not isinstance(prompt, str):
            raise HermesUsageError(f"a prompt must be a string, not {type(prompt).__name__}")
        if len(prompt) > MAX_PROMPT_LENGTH:
            raise HermesUsageError(f"a prompt has at most {MAX_PROMPT_LENGTH} characters; this one has {len(prompt)}")
        out["prompt"] = prompt
    if deliver is not None:
        if not isinstance(deliver, str) or not deliver.strip():
            raise HermesUsageError("deliver must be a non-empty string such as 'local' or 'telegram:<chat id>'")
        out["deliver"] = deliver.strip()
    if skills is not None:
        if isinstance(skills, str):
            skills = [s.strip() for s in skills.split(",")]
        if not isinstance(skills, Sequence) or not all(isinstance(s, str) for s in skills):
            raise HermesUsageError("skills must be a skill name or a list of skill names")
        out["skills"] = [s for s in (x.strip() for x in skills) if s]
    if repeat is not None:
        if isinstance(repeat, bool) or not isinstance(repeat, int) or repeat < 1:
            raise HermesUsageError(f"repeat must be a positive number of runs (or None for forever), not {repeat!r}")
        out["repeat"] = repeat
    return out


# --- display ---------------------------------------------------------------------------------------------


def _iso(value: datetime | None) -> str:
    return value.isoformat(timespec="seconds") if value else ""


def _short(value: datetime | None) -> str:
    return value.strftime("%Y-%m-%d %H:%M") if value else "—"


def schedule_description(job: Job) -> str:
    """Plain-language schedule of a stored job ("every day at 09:00")."""
    return schedules.describe_stored(job.schedule) or job.schedule_display


def repeat_text(job: Job) -> str:
    """"3 of 5 runs" / "3 runs (forever)"."""
    done = job.repeat.completed
    if job.repeat.times is None:
        return f"{done} run{'s' if done != 1 else ''} (no limit)"
    return f"{done} of {job.repeat.times}"


def job_to_dict(job: Job) -> dict[str, Any]:
    """A flat, plain dict of one job (datetimes kept as datetimes), one column per field for pandas."""
    return {
        "id": job.id,
        "name": job.name,
        "schedule": job.schedule_display,
        "schedule_kind": job.schedule.kind,
        "schedule_description": schedule_description(job),
        "state": job.state,
        "enabled": job.enabled,
        "next_run_at": job.next_run_at,
        "last_run_at": job.last_run_at,
        "last_status": job.last_status,
        "last_error": job.last_error,
        "last_delivery_error": job.last_delivery_error,
        "repeat_times": job.repeat.times,
        "repeat_completed": job.repeat.completed,
        "deliver": job.deliver,
        "skills": list(job.skills),
        "prompt": job.prompt,
        "created_at": job.created_at,
        "paused_at": job.paused_at,
    }


_CSS = (
    ".hn-jobs-static{border-collapse:collapse;font-family:var(--jp-ui-font-family,system-ui,sans-serif);"
    "font-size:var(--jp-ui-font-size1,13px);color:var(--jp-ui-font-color1,inherit)}"
    ".hn-jobs-static th,.hn-jobs-static td{border-bottom:1px solid var(--jp-border-color2,#ccc);"
    "padding:3px 8px;text-align:left;vertical-align:top}"
    ".hn-jobs-static th{color:var(--jp-ui-font-color2,#555);font-weight:600}"
    ".hn-jobs-static .hn-sub{color:var(--jp-ui-font-color2,#666);font-size:smaller}"
    ".hn-jobs-static .hn-err{color:var(--jp-error-color1,#c62828)}"
)

_COLUMNS = ("Name", "Schedule", "State", "Next run", "Last run", "Last status", "Repeat", "Deliver", "Skills")


def _status_cell(job: Job) -> str:
    esc = html.escape
    parts = [esc(job.last_status or "—")]
    if job.last_error:
        parts.append(f'<div class="hn-err">error: {esc(job.last_error)}</div>')
    if job.last_delivery_error:
        parts.append(f'<div class="hn-err">delivery: {esc(job.last_delivery_error)}</div>')
    return "".join(parts)


def _row(job: Job) -> str:
    esc = html.escape
    state = esc(job.state or "") + ("" if job.enabled else ' <span class="hn-sub">(disabled)</span>')
    cells = [
        f'{esc(job.name)}<div class="hn-sub">{esc(job.id)}</div>',
        f'{esc(schedule_description(job))}<div class="hn-sub"><code>{esc(job.schedule_display)}</code></div>',
        state,
        f'<span title="{esc(_iso(job.next_run_at))}">{esc(_short(job.next_run_at))}</span>',
        f'<span title="{esc(_iso(job.last_run_at))}">{esc(_short(job.last_run_at))}</span>',
        _status_cell(job),
        esc(repeat_text(job)),
        esc(job.deliver or ""),
        esc(", ".join(job.skills)),
    ]
    return f'<tr data-job-id="{esc(job.id)}">' + "".join(f"<td>{c}</td>" for c in cells) + "</tr>"


def jobs_table_html(jobs: Iterable[Job], caption: str = "Hermes cron jobs") -> str:
    """A sanitized, self-contained HTML table of jobs (every server string is escaped)."""
    rows = [_row(job) for job in jobs]
    head = "".join(f'<th scope="col">{c}</th>' for c in _COLUMNS)
    body = "".join(rows) or f'<tr><td colspan="{len(_COLUMNS)}"><i>No jobs.</i></td></tr>'
    return html_block(f"<style>{_CSS}</style><table class=\"hn-jobs-static\"><caption>{html.escape(caption)}</caption>"
                      f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>")


def job_html(job: Job) -> str:
    """``Job._repr_html_``: the job as a one-row table plus its prompt."""
    prompt = html.escape(job.prompt) if job.prompt else "<i>(no prompt)</i>"
    return (jobs_table_html([job], caption=f"Hermes cron job {job.name}")
            + html_block(f'<details><summary>Prompt</summary><pre style="white-space:pre-wrap">{prompt}</pre></details>'))


def jobs_table_text(jobs: Sequence[Job]) -> str:
    """A fixed-width text table (the text/plain repr of :class:`JobList`)."""
    if not jobs:
        return "JobList([])  (no jobs)"
    rows = [("id", "name", "schedule", "state", "next run", "last status")]
    for job in jobs:
        rows.append((job.id, job.name[:30], job.schedule_display[:24], job.state or "",
                     _short(job.next_run_at), job.last_status or "—"))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(widths[i]) for i, cell in enumerate(r)).rstrip() for r in rows]
    return f"JobList of {len(jobs)} job{'s' if len(jobs) != 1 else ''}:\n" + "\n".join(lines)


class JobList(list[Job]):
    """A list of :class:`Job` that shows as a table in a notebook and converts to plain dicts.

    ``pandas.DataFrame(jobs.to_dicts())`` gives one row per job and one column per field.
    """

    def to_dicts(self) -> list[dict[str, Any]]:
        """One flat dict per job (see :func:`job_to_dict`)."""
        return [job_to_dict(job) for job in self]

    def by_name(self, name: str) -> JobList:
        """The jobs with exactly this name (Hermes does not keep names unique)."""
        return JobList(job for job in self if job.name == name)

    def _repr_html_(self) -> str:
        return jobs_table_html(self)

    def __repr__(self) -> str:
        return jobs_table_text(self)

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(repr(self))

    @overload
    def __getitem__(self, index: SupportsIndex) -> Job: ...
    @overload
    def __getitem__(self, index: slice) -> JobList: ...
    def __getitem__(self, index: SupportsIndex | slice) -> Job | JobList:
        if isinstance(index, slice):
            return JobList(super().__getitem__(index))
        return super().__getitem__(index)


# --- scripting helpers -----------------------------------------------------------------------------------


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
            f"Hermes refused the job {what!r}: {detail}", status=exc.status, endpoint=exc.endpoint,
            server_message=exc.server_message,
        ) from exc


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


class JobsHelpers:
    """Find, create-or-update and wait-for-run on top of a :class:`JobsClient`, blocking and ``*_async``.

    Each operation is one ``*_async`` coroutine (run on the package loop) plus its blocking twin from
    :func:`~hermes_notebook.runtime.blocking` (works inside a Jupyter cell). ``hermes.jobs`` delegates here.
    """

    def __init__(self, client: JobsClient) -> None:
        self._client = client

    # ---- validated create / update ----

    @on_loop
    async def create_async(self, *, name: str, schedule: str, prompt: str | None = None, deliver: str | None = None,
                           skills: Sequence[str] | str | None = None, repeat: int | None = None) -> Job:
        """Create a job after validating every field (a bad schedule raises before any request)."""
        fields = validate_job(name=name, schedule=schedule, prompt=prompt, deliver=deliver, skills=skills,
                              repeat=repeat, require=("name", "schedule"))
        with _server_refusal(fields["name"]):
            return await self._client.create(**fields)

    create = blocking(create_async)

    @on_loop
    async def update_async(self, job_id: str, **fields: Any) -> Job:
        """Update a job after validating the changed fields (``enabled`` passes through)."""
        known = {k: v for k, v in fields.items() if k in _VALIDATED}
        checked = validate_job(**known)
        if "repeat" in fields:
            checked["repeat"] = fields["repeat"] if fields["repeat"] is None else checked["repeat"]  # None: forever
        checked.update({k: v for k, v in fields.items() if k not in _VALIDATED})  # JobsClient checks the rest
        with _server_refusal(job_id):
            return await self._client.update(job_id, **checked)

    update = blocking(update_async)

    # ---- find ----

    @on_loop
    async def find_all_async(self, name: str) -> JobList:
        """Every job with exactly this name, paused and finished ones included."""
        return JobList(await self._client.list(include_disabled=True)).by_name(name)

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
    async def ensure_async(self, *, name: str, schedule: str, prompt: str | None = None, deliver: str | None = None,
                           skills: Sequence[str] | str | None = None, repeat: int | None = None) -> Job:
        """Create the job called ``name``, or bring the existing one in line: running twice leaves one job.

        Only fields that differ are sent (none at all when nothing changed). Fields left ``None`` are not
        touched on an existing job. A paused job stays paused.
        """
        fields = validate_job(name=name, schedule=schedule, prompt=prompt, deliver=deliver, skills=skills,
                              repeat=repeat, require=("name", "schedule"))
        existing = await self.find_async(fields["name"])
        if existing is None:
            with _server_refusal(fields["name"]):
                return await self._client.create(**fields)
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
            return await self._client.update(existing.id, **changes)

    ensure = blocking(ensure_async)

    # ---- trigger and wait ----

    @on_loop
    async def wait_for_run_async(self, job: Job | str, *, since: datetime | None | str = "job",
                                 timeout: float = DEFAULT_WAIT_TIMEOUT, poll: float = 2.0,
                                 raise_on_error: bool = False) -> Job:
        """Wait until the job's ``last_run_at`` moves past ``since``, and return the updated job.

        ``since`` defaults to the ``last_run_at`` of the ``job`` you pass (the one ``run()`` returned still
        has the previous value), or to the current one if you pass an id. Raises HermesTimeoutError after
        ``timeout`` s (runs start on the scheduler's 60 s tick, and only while the gateway runs), and
        HermesRunError if ``raise_on_error`` and the run's ``last_status`` is ``error``.
        """
        job_id = job.id if isinstance(job, Job) else job
        if since == "job":
            baseline = job.last_run_at if isinstance(job, Job) else (await self._client.get(job_id)).last_run_at
        else:
            baseline = since if isinstance(since, datetime) or since is None else None
        deadline = time.monotonic() + timeout
        while True:
            current = await self._client.get(job_id)
            if current.last_run_at is not None and current.last_run_at != baseline:
                if raise_on_error and current.last_status == "error":
                    raise HermesRunError(f"job {current.name!r} ran and failed: {current.last_error or 'no details'}",
                                         status="error")
                return current
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise HermesTimeoutError(
                    f"job {current.name!r} ({job_id}) did not finish a run within {timeout:g} s; runs start on the "
                    "scheduler's next tick (every 60 s) and only while the Hermes gateway is running"
                )
            await asyncio.sleep(min(poll, remaining))

    wait_for_run = blocking(wait_for_run_async)

    @on_loop
    async def run_and_wait_async(self, job: Job | str, *, timeout: float = DEFAULT_WAIT_TIMEOUT, poll: float = 2.0,
                                 raise_on_error: bool = False) -> Job:
        """Trigger a run (due on the next scheduler tick) and wait for its result."""
        job_id = job.id if isinstance(job, Job) else job
        before = await self._client.run(job_id)
        return await self.wait_for_run_async(before, timeout=timeout, poll=poll, raise_on_error=raise_on_error)

    run_and_wait = blocking(run_and_wait_async)

    @on_loop
    async def list_async(self, include_disabled: bool = False) -> JobList:
        """The jobs as a :class:`JobList` (table repr, ``to_dicts()``)."""
        return JobList(await self._client.list(include_disabled=include_disabled))

    list = blocking(list_async)
