"""The jobs view's questions about jobs, answered on the package loop through the widget's
:class:`~hermes_notebook.jobs.api.JobsAPI`: ``check_schedule``, ``save``, ``action`` (pause, resume, run,
delete) and ``get_prompt``.

Each is a question with a request id, answered once with the message :mod:`.messages` names for it (through
:func:`.replies.answer`); a failure Hermes reports is the answer's ``ok: false`` and its message, never an
exception into the comm. Only jobs the view lists can be edited or acted on: any other id is refused before
Hermes is asked. A schedule is checked here with :mod:`hermes_notebook.cron.schedules` (exactly what Hermes
0.19.0 accepts) before anything is sent; the form's fields are checked by the JobsAPI, and an error names the
field it belongs to (its ``param``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from ..cron import schedules
from ..cron.display import schedule_description
from ..errors import HermesError
from ..jobs.api import JobsAPI
from .job_rows import job_row
from .replies import answer

__all__ = ["FORM_FIELDS", "JobAnswers", "JobsTable", "field_of", "form_fields"]

#: The form's fields; an error whose ``param`` is one of them is shown next to it.
FORM_FIELDS = ("name", "schedule", "prompt", "repeat", "skills", "deliver")

_RUN_NOTE = "It will start on the scheduler's next tick (within about a minute)."
_UNLISTED = "no such job in this list; refresh and try again"


class JobsTable(Protocol):
    """What the answers need of the widget: its rows, its notice line, a refresh, and the way to its views."""

    def listed_name(self, job_id: str) -> str | None:
        """The name of the listed job with this id (None: the view does not list it)."""
        ...

    def tell(self, kind: str, text: str) -> None:
        """Show a one-line notice (``info``, ``error``)."""
        ...

    async def refresh_async(self) -> None:
        """Reload the jobs."""
        ...

    def reply(self, content: dict[str, Any]) -> None:
        """Send a message to the views."""
        ...


class JobAnswers:
    """Answers the questions of a jobs view (each ``on_<type>`` a coroutine on the package loop)."""

    def __init__(self, table: JobsTable, jobs: JobsAPI) -> None:
        self._table = table
        self._jobs = jobs

    async def on_check_schedule(self, content: dict[str, Any]) -> None:
        result = schedules.check(content.get("schedule", ""))
        self._table.reply(answer(content, {"type": "schedule_check", **result.to_dict()}))

    async def on_save(self, content: dict[str, Any]) -> None:
        """Create a job, or update a listed one, from the form's fields."""
        job_id = content.get("id") or None

        def result(ok: bool, field: str | None, message: str, job: dict[str, Any] | None = None) -> None:
            reply = {"type": "save_result", "ok": ok, "field": field, "message": message, "job": job}
            self._table.reply(answer(content, reply))

        if job_id and self._table.listed_name(str(job_id)) is None:
            result(False, None, _UNLISTED)
            return
        given = content.get("fields")
        fields = form_fields(given if isinstance(given, Mapping) else {}, editing=bool(job_id))
        try:
            if job_id:
                job = await self._jobs.update_async(str(job_id), **fields)
            else:
                job = await self._jobs.create_async(**fields)
        except HermesError as exc:
            result(False, field_of(exc), str(exc))
            return
        verb = "Updated" if job_id else "Created"
        self._table.tell("info", f"{verb} job {job.name!r} ({schedule_description(job)}).")
        result(True, None, "", job_row(job))
        await self._table.refresh_async()

    async def on_get_prompt(self, content: dict[str, Any]) -> None:
        """A listed job's whole prompt, for the edit form (an answer, never synced), read from Hermes now: the
        list may be a refresh behind (a save answered before its refresh ended), and the form must show what
        the job holds."""
        job_id = str(content["id"])
        prompt: str | None = None
        if self._table.listed_name(job_id) is not None:
            try:
                prompt = (await self._jobs.get_async(job_id)).prompt
            except HermesError:
                prompt = None  # the form says the prompt could not be loaded; saving keeps the job's own
        reply = {"type": "prompt", "id": job_id, "ok": prompt is not None, "prompt": prompt}
        self._table.reply(answer(content, reply))

    async def on_action(self, content: dict[str, Any]) -> None:
        """Pause, resume, run or delete a listed job; the notice and the answer say how it went."""
        action, job_id = str(content.get("action")), str(content.get("id") or "")
        calls = {
            "pause": self._jobs.pause_async,
            "resume": self._jobs.resume_async,
            "run": self._jobs.run_async,
            "delete": self._jobs.delete_async,
        }

        def result(ok: bool, message: str) -> None:
            reply = {"type": "action_result", "action": action, "id": job_id, "ok": ok, "message": message}
            self._table.reply(answer(content, reply))

        name = self._table.listed_name(job_id)
        if action not in calls or name is None:  # only jobs this view lists can be acted on
            result(False, f"unknown action {action!r}" if action not in calls else _UNLISTED)
            return
        try:
            await calls[action](job_id)
        except HermesError as exc:
            message = f"Could not {action} {name!r}: {exc}"
            self._table.tell("error", message)
            result(False, message)
            await self._table.refresh_async()
            return
        message = {
            "pause": f"Paused {name!r}.",
            "resume": f"Resumed {name!r}.",
            "run": f"{name!r} is due now. {_RUN_NOTE}",
            "delete": f"Deleted {name!r}.",
        }[action]
        self._table.tell("info", message)
        result(True, message)
        await self._table.refresh_async()


def form_fields(raw: Mapping[str, Any], *, editing: bool) -> dict[str, Any]:
    """Form values -> job fields. Blank optional fields are left out; on edit a blank repeat means forever."""
    fields: dict[str, Any] = {
        "name": raw.get("name") if isinstance(raw.get("name"), str) else "",
        "schedule": raw.get("schedule") if isinstance(raw.get("schedule"), str) else "",
    }
    if isinstance(raw.get("prompt"), str):
        fields["prompt"] = raw["prompt"]
    if isinstance(raw.get("deliver"), str) and raw["deliver"].strip():
        fields["deliver"] = raw["deliver"]
    skills = raw.get("skills")
    if isinstance(skills, str):
        skills = skills.split(",")
    if isinstance(skills, list) and (editing or any(str(s).strip() for s in skills)):
        fields["skills"] = [str(s).strip() for s in skills if str(s).strip()]
    repeat = raw.get("repeat")
    if repeat in (None, ""):
        if editing and "repeat" in raw:
            fields["repeat"] = None
    else:
        try:
            fields["repeat"] = int(str(repeat).strip())
        except ValueError:
            fields["repeat"] = repeat  # validate_job says what is wrong
    return fields


def field_of(exc: HermesError) -> str | None:
    """Which form field an error belongs to: its ``param`` (set where the value was checked or refused)."""
    param = getattr(exc, "param", None)
    return param if param in FORM_FIELDS else None
