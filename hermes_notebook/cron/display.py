"""How jobs look in a notebook: :class:`JobList` (an HTML table, a text table, ``to_dicts()`` for pandas),
:func:`job_html` (what ``Job._repr_html_`` shows) and the plain-language schedule and repeat texts.

Every server string is escaped. What a job must offer to be shown is the :class:`JobLike` protocol (the
client's ``Job`` is one), so the client renders a Job through this module and this module imports nothing of
the client.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any, Protocol, SupportsIndex, TypeVar, overload

from ..inert import html_block, terminal_safe
from . import schedules

__all__ = [
    "JobLike",
    "JobList",
    "job_html",
    "job_to_dict",
    "jobs_table_html",
    "jobs_table_text",
    "repeat_text",
    "schedule_description",
]


class _Kind(Protocol):
    @property
    def kind(self) -> str: ...


class _Repeat(Protocol):
    @property
    def times(self) -> int | None: ...
    @property
    def completed(self) -> int: ...


class JobLike(Protocol):
    """The fields a job needs to be shown (``client.jobs.Job`` has them, as the server sends them)."""

    @property
    def id(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def prompt(self) -> str: ...
    @property
    def schedule(self) -> _Kind: ...
    @property
    def schedule_display(self) -> str: ...
    @property
    def repeat(self) -> _Repeat: ...
    @property
    def enabled(self) -> bool: ...
    @property
    def state(self) -> str | None: ...
    @property
    def deliver(self) -> str | None: ...
    @property
    def skills(self) -> tuple[str, ...]: ...
    @property
    def created_at(self) -> datetime | None: ...
    @property
    def next_run_at(self) -> datetime | None: ...
    @property
    def last_run_at(self) -> datetime | None: ...
    @property
    def last_status(self) -> str | None: ...
    @property
    def last_error(self) -> str | None: ...
    @property
    def last_delivery_error(self) -> str | None: ...
    @property
    def paused_at(self) -> datetime | None: ...


_J = TypeVar("_J", bound=JobLike)


def _iso(value: datetime | None) -> str:
    return value.isoformat(timespec="seconds") if value else ""


def _short(value: datetime | None) -> str:
    return value.strftime("%Y-%m-%d %H:%M") if value else "—"


def schedule_description(job: JobLike) -> str:
    """Plain-language schedule of a stored job ("every day at 09:00")."""
    return schedules.describe_stored(job.schedule) or job.schedule_display


def repeat_text(job: JobLike) -> str:
    """ "3 of 5 runs" / "3 runs (forever)"."""
    done = job.repeat.completed
    if job.repeat.times is None:
        return f"{done} run{'s' if done != 1 else ''} (no limit)"
    return f"{done} of {job.repeat.times}"


def job_to_dict(job: JobLike) -> dict[str, Any]:
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


def _status_cell(job: JobLike) -> str:
    esc = html.escape
    parts = [esc(job.last_status or "—")]
    if job.last_error:
        parts.append(f'<div class="hn-err">error: {esc(job.last_error)}</div>')
    if job.last_delivery_error:
        parts.append(f'<div class="hn-err">delivery: {esc(job.last_delivery_error)}</div>')
    return "".join(parts)


def _row(job: JobLike) -> str:
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


def jobs_table_html(jobs: Iterable[JobLike], caption: str = "Hermes cron jobs") -> str:
    """A sanitized, self-contained HTML table of jobs (every server string is escaped)."""
    rows = [_row(job) for job in jobs]
    head = "".join(f'<th scope="col">{c}</th>' for c in _COLUMNS)
    body = "".join(rows) or f'<tr><td colspan="{len(_COLUMNS)}"><i>No jobs.</i></td></tr>'
    return html_block(
        f'<style>{_CSS}</style><table class="hn-jobs-static"><caption>{html.escape(caption)}</caption>'
        f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
    )


def job_html(job: JobLike) -> str:
    """``Job._repr_html_``: the job as a one-row table plus its prompt."""
    prompt = html.escape(job.prompt) if job.prompt else "<i>(no prompt)</i>"
    return jobs_table_html([job], caption=f"Hermes cron job {job.name}") + html_block(
        f'<details><summary>Prompt</summary><pre style="white-space:pre-wrap">{prompt}</pre></details>'
    )


def jobs_table_text(jobs: Sequence[JobLike]) -> str:
    """A fixed-width text table (the text/plain repr of :class:`JobList`)."""
    if not jobs:
        return "JobList([])  (no jobs)"
    rows = [("id", "name", "schedule", "state", "next run", "last status")]
    for job in jobs:
        rows.append(
            (
                job.id,
                job.name[:30],
                job.schedule_display[:24],
                job.state or "",
                _short(job.next_run_at),
                job.last_status or "—",
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(widths[i]) for i, cell in enumerate(r)).rstrip() for r in rows]
    return f"JobList of {len(jobs)} job{'s' if len(jobs) != 1 else ''}:\n" + "\n".join(lines)


class JobList(list[_J]):
    """A list of :class:`Job` that shows as a table in a notebook and converts to plain dicts.

    ``pandas.DataFrame(jobs.to_dicts())`` gives one row per job and one column per field.
    """

    def to_dicts(self) -> list[dict[str, Any]]:
        """One flat dict per job (see :func:`job_to_dict`)."""
        return [job_to_dict(job) for job in self]

    def by_name(self, name: str) -> JobList[_J]:
        """The jobs with exactly this name (Hermes does not keep names unique)."""
        return JobList(job for job in self if job.name == name)

    def _repr_html_(self) -> str:
        return jobs_table_html(self)

    def __repr__(self) -> str:
        return terminal_safe(
            jobs_table_text(self)
        )  # job names are server text: no control reaches a terminal

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(repr(self))

    @overload
    def __getitem__(self, index: SupportsIndex) -> _J: ...
    @overload
    def __getitem__(self, index: slice) -> JobList[_J]: ...
    def __getitem__(self, index: SupportsIndex | slice) -> _J | JobList[_J]:
        if isinstance(index, slice):
            return JobList(super().__getitem__(index))
        return super().__getitem__(index)
