"""The jobs widget's run list and read-only run transcripts, and the "a run finished" notice.

Why separate from :mod:`hermes_notebook.widgets.jobs`: the table of jobs manages jobs; this answers "what did
the job actually do?". It handles two browser messages and answers each with one kernel message; the
transcript goes as turn-model message dicts, which the view renders read-only with the chat's renderers. What
a run printed is untrusted and may quote a key: every answer goes through the secret scrubber with the API key
and Dashboard token first.

Browser -> kernel, questions with a request id (:mod:`.replies`): ``runs`` (a job's id) and ``transcript`` (a
run's id); the answers ``runs_result`` and ``transcript_result`` (typed in :mod:`.messages`).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import HermesError
from ..jobs.api import JobsAPI
from ..jobs.runs import RUN_ID
from ..scrub import scrub_value
from .replies import answer

__all__ = ["FinishedRun", "RunsHandler", "finished_runs", "finished_runs_notice"]

log = logging.getLogger(__name__)

#: Runs listed per job in the widget.
RUNS_SHOWN = 10


@dataclass(frozen=True)
class FinishedRun:
    """A job run a refresh found finished: which job, how it ended, how long it took (None: not known)."""

    job_id: str
    name: str
    status: str
    duration: float | None = None
    run_id: str | None = None

    def describe(self) -> str:
        """``'nightly' finished a run (ok, 2.4 s)``."""
        took = f", {self.duration:.1f} s" if self.duration is not None else ""
        return f"{self.name!r} finished a run ({self.status}{took})"


def finished_runs(
    before: Sequence[Mapping[str, Any]], after: Sequence[Mapping[str, Any]]
) -> list[FinishedRun]:
    """The jobs whose ``last_run_at`` moved between two refreshes (a new job's first listing is no run)."""
    seen = {row.get("id"): row.get("last_run_at") for row in before}
    return [
        FinishedRun(str(row.get("id")), str(row.get("name")), str(row.get("last_status") or "unknown"))
        for row in after
        if row.get("id") in seen and row.get("last_run_at") and row.get("last_run_at") != seen[row.get("id")]
    ]


class RunsHandler:
    """Answers the jobs view's ``runs`` and ``transcript`` questions (on the package loop), through the
    widget's :class:`~hermes_notebook.jobs.api.JobsAPI`; tells who follows finished runs."""

    def __init__(
        self, jobs: JobsAPI, reply: Callable[[dict[str, Any]], None], secrets: Sequence[object]
    ) -> None:
        self._jobs = jobs
        self._reply = lambda content: reply(scrub_value(content, secrets))  # "request" ids pass unchanged
        self._followers: list[Callable[[FinishedRun], Any]] = []

    def on_finished(self, callback: Callable[[FinishedRun], Any]) -> Callable[[], None]:
        """Call ``callback(run)`` for each finished run :meth:`finished` finds; returns ``off()``."""
        self._followers.append(callback)
        return lambda: self._followers.remove(callback) if callback in self._followers else None

    async def finished(
        self, before: Sequence[Mapping[str, Any]], after: Sequence[Mapping[str, Any]]
    ) -> str | None:
        """The "a run finished" notice for two refreshes, each run's duration read from its stored session;
        followers are told first (a failing follower is logged, never raised into the refresh)."""
        done = []
        for run in finished_runs(before, after):
            with contextlib.suppress(HermesError):  # no duration is no reason to stay silent about the run
                newest = await self._jobs.runs_async(run.job_id, limit=1)
                if newest:
                    run = FinishedRun(run.job_id, run.name, run.status, newest[0].duration, newest[0].id)
            done.append(run)
            for follower in list(self._followers):
                try:
                    follower(run)
                except Exception:
                    log.exception("a follower of finished job runs failed")
        return _notice(done)

    async def on_runs(self, content: dict[str, Any]) -> None:
        job_id = str(content.get("id") or "")

        def result(ok: bool, runs: list[dict[str, Any]], message: str) -> None:
            self._reply(
                answer(
                    content, {"type": "runs_result", "id": job_id, "ok": ok, "runs": runs, "message": message}
                )
            )

        try:
            runs = await self._jobs.runs_async(job_id, limit=RUNS_SHOWN)
        except HermesError as exc:
            result(False, [], f"Could not list the runs: {exc}")
            return
        result(True, runs.to_dicts(), "")

    async def on_transcript(self, content: dict[str, Any]) -> None:
        run_id = str(content.get("run_id") or "")

        def result(ok: bool, messages: list[dict[str, Any]], message: str) -> None:
            self._reply(
                answer(
                    content,
                    {
                        "type": "transcript_result",
                        "run_id": run_id,
                        "ok": ok,
                        "messages": messages,
                        "message": message,
                    },
                )
            )

        if not RUN_ID.match(run_id):
            result(False, [], f"{run_id!r} is not a cron run")
            return
        try:
            messages = await self._jobs.transcript_async(run_id)
        except HermesError as exc:
            result(False, [], f"Could not open the run: {exc}")
            return
        result(True, [dict(m) for m in messages], "")


def finished_runs_notice(
    before: Sequence[Mapping[str, Any]], after: Sequence[Mapping[str, Any]]
) -> str | None:
    """ "Job X finished a run (ok)" when a refresh shows a newer ``last_run_at`` than the one before it."""
    return _notice(finished_runs(before, after))


def _notice(runs: Sequence[FinishedRun]) -> str | None:
    return "; ".join(run.describe() for run in runs) + ". Open Runs to see what it did." if runs else None
