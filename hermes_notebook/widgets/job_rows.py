"""What the jobs view shows of a job: its table row, synced state saved with the notebook.

A row holds only what the table and the edit form show, JSON-ready, and never a prompt or an error's text
(both may quote what should not be saved): the edit form asks for the prompt (``get_prompt``) and the view for
the errors (``job_errors``), answers that are never state. The form's presets come from
:mod:`hermes_notebook.cron.presets`, so the view builds the same expressions.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ..cron import schedules
from ..cron.display import repeat_text, schedule_description
from ..jobs import Job

__all__ = ["job_row", "preset_dicts", "timezone_label"]


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value else None


def _editable_schedule(job: Job) -> str:
    """The schedule text to put back into the edit form (what the server would accept again)."""
    sched = job.schedule
    if sched.kind == "cron" and sched.expr:
        return sched.expr
    if sched.kind == "interval" and sched.minutes is not None:
        return f"every {sched.minutes}m"
    if sched.kind == "once" and sched.run_at is not None:
        return sched.run_at.isoformat(timespec="minutes")
    return job.schedule_display


def job_row(job: Job) -> dict[str, Any]:
    """One table row for the view (js/src/types/jobs.ts ``JobRow``): no prompt and no error text."""
    latest = job.latest_execution or {}
    return {
        "id": job.id,
        "name": job.name,
        "schedule": job.schedule_display,
        "schedule_text": _editable_schedule(job),
        "schedule_kind": job.schedule.kind,
        "description": schedule_description(job),
        "state": job.state or ("scheduled" if job.enabled else "paused"),
        "enabled": job.enabled,
        "next_run_at": _iso(job.next_run_at),
        "last_run_at": _iso(job.last_run_at),
        "last_status": job.last_status,
        "has_error": bool(job.last_error),
        "has_delivery_error": bool(job.last_delivery_error),
        "repeat_times": job.repeat.times,
        "repeat_completed": job.repeat.completed,
        "repeat_text": repeat_text(job),
        "deliver": job.deliver,
        "skills": list(job.skills),
        "running": latest.get("status") in ("claimed", "running"),
    }


def preset_dicts() -> list[dict[str, Any]]:
    """The form's presets: ``[{"key", "label", "fields"}]``."""
    return [{"key": p.key, "label": p.label, "fields": list(p.fields)} for p in schedules.PRESETS]


def timezone_label() -> str:
    """The kernel's time zone, which the next-run previews are computed in."""
    now = datetime.now().astimezone()
    return now.strftime("%Z") or now.strftime("%z")
