"""The jobs view's "Reproducibility check" form: ``reproduce`` (a notebook path and a schedule) creates the
scheduled check through the widget's :class:`~hermes_notebook.jobs.api.JobsAPI`
(:meth:`~hermes_notebook.jobs.api.JobsAPI.reproduce_async`, exactly what ``hermes.jobs.reproduce`` does), so
the job's prompt is always the one the package writes, never one typed in the browser.

Answered once with a ``save_result`` (the shape of the job form's answer): the job's row, or the field the
error belongs to (``notebook`` or ``schedule``). A relative path is the kernel's: Jupyter starts a kernel in
its notebook's folder, so a bare file name names a notebook beside this one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..cron.display import schedule_description
from ..errors import HermesError
from ..jobs.api import JobsAPI
from .job_answers import JobsTable
from .job_rows import job_row
from .replies import answer

__all__ = ["ReproduceAnswers"]


class ReproduceAnswers:
    """Answers the view's ``reproduce`` question (a coroutine on the package loop)."""

    def __init__(self, table: JobsTable, jobs: JobsAPI) -> None:
        self._table = table
        self._jobs = jobs

    async def on_reproduce(self, content: dict[str, Any]) -> None:
        """Create the scheduled check of ``content["notebook"]`` on ``content["schedule"]``."""

        def result(ok: bool, field: str | None, message: str, job: dict[str, Any] | None = None) -> None:
            reply = {"type": "save_result", "ok": ok, "field": field, "message": message, "job": job}
            self._table.reply(answer(content, reply))

        notebook = str(content.get("notebook", "")).strip()
        if not notebook.endswith(".ipynb"):
            result(False, "notebook", "Name a notebook file (a path ending in .ipynb).")
            return
        path = Path(notebook).expanduser()
        if not path.is_file():  # named as typed: the kernel's folder is no news to a user
            where = "" if path.is_absolute() else " beside this notebook"
            result(False, "notebook", f"There is no notebook {notebook}{where}.")
            return
        try:
            job = await self._jobs.reproduce_async(notebook, str(content.get("schedule", "")))
        except HermesError as exc:
            param = getattr(exc, "param", None)
            result(False, param if param in ("notebook", "schedule") else None, str(exc))
            return
        self._table.tell("info", f"Created {job.name!r} ({schedule_description(job)}).")
        result(True, None, "", job_row(job))
        await self._table.refresh_async()
