"""``Jobs``: manage Hermes cron jobs from a notebook cell by clicking.

Where things run: every request happens in the kernel on the package loop (:mod:`hermes_notebook.runtime`)
through a :class:`JobsClient`; the browser view only sends small custom messages (``refresh``,
``check_schedule``, ``save``, ``action``) and renders the ``jobs`` traitlet. So the API key never reaches the
browser, the widget state or the saved notebook. A click schedules a coroutine and returns at once: the
kernel's shell thread never blocks on Hermes.

Validation: a schedule typed in the form is checked here with :mod:`hermes_notebook.schedules` (exactly what
Hermes 0.19.0 accepts) before anything is sent; the answer carries the message and an example, or the plain
description and the next three run times. Server-side refusals come back inline too.

Synced state is saved with the notebook, so the rows hold no prompt and no error text: the edit form asks for
a job's prompt (``get_prompt``), and the view asks for the last errors (``job_errors``; also sent after each
refresh). Notices and the static table go through the secret scrubber with the API key.

Saved notebooks: ``_ipython_display_`` shows the widget and a second output, a static HTML table
(:func:`hermes_notebook.cron.display.jobs_table_html`) under a ``display_id`` that follows every refresh; the
live view hides it (js/src/twin.ts), viewers without widget JS (nbviewer, GitHub, nbconvert) show it.

Messages, typed in :mod:`.messages` and checked against ``js/src/types.ts``: commands (``refresh``,
``job_errors``) and questions with a request id, each answered once (:mod:`.replies`): ``check_schedule`` ->
``schedule_check``, ``save`` -> ``save_result``, ``action`` -> ``action_result``, ``get_prompt`` ->
``prompt``, and the run list's ``runs`` and ``transcript`` (:mod:`.job_runs`). ``job_errors`` also follows
every refresh.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import time
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from datetime import datetime
from typing import Any, Protocol

import traitlets

from .. import runtime
from ..client.jobs import Job, JobsClient
from ..cron import schedules
from ..cron.display import jobs_table_html, repeat_text, schedule_description
from ..errors import HermesAuthError, HermesConnectionError, HermesError, HermesUsageError
from ..inert import redact_url, terminal_safe
from ..jobs.api import JobsAPI
from ..runtime import blocking, on_loop
from ..scrub import scrub, scrub_value
from ..settings import Settings
from . import inbound
from .base import Bundle, LeanWidget
from .job_runs import FinishedRun, RunsHandler
from .replies import answer
from .static_twin import StaticTwin
from .subshells import Routing, follow_frontend_subshells

__all__ = ["STATIC_CLASS", "HasSettings", "Jobs"]

log = logging.getLogger(__name__)

#: Class of the element wrapping the static table; the live view hides its output (js/src/twin.ts).
STATIC_CLASS = "hn-jobs-static-wrap"

#: Default seconds between automatic refreshes.
DEFAULT_AUTO_REFRESH = 30.0

_RUN_NOTE = "It will start on the scheduler's next tick (within about a minute)."


class HasSettings(Protocol):
    """What the jobs widget takes from the ``hermes_notebook.connect()`` object: its settings."""

    settings: Settings


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
    """One table row for the view: JSON-ready, only what the table and the edit form show.

    No prompt and no error text: rows are synced state, saved with the notebook. The edit form fetches the
    prompt with a ``get_prompt`` message, and the view the errors with ``job_errors`` (replies, never state).
    """
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


def _preset_dicts() -> list[dict[str, Any]]:
    return [{"key": p.key, "label": p.label, "fields": list(p.fields)} for p in schedules.PRESETS]


def _tz_label() -> str:
    now = datetime.now().astimezone()
    return now.strftime("%Z") or now.strftime("%z")


class Jobs(StaticTwin, LeanWidget):
    """A live table of Hermes cron jobs with actions, a create/edit form and auto-refresh.

    ``Jobs(source=None, *, include_disabled=False, auto_refresh=30.0)``: ``source`` is a :class:`JobsClient`
    (kept open: it is the caller's), :class:`Settings`, the ``hermes_notebook.connect()`` facade (its
    settings are used), or ``None`` (``Settings.resolve()``: arguments, then ``HERMES_API_URL/KEY``).
    """

    _esm = Bundle("jobs.js")
    _css = Bundle("jobs.css")
    live_text = "Hermes cron jobs (live widget; a static table follows)"

    #: Table rows (see :func:`job_row`), in the server's order.
    jobs = traitlets.List(traitlets.Dict()).tag(sync=True)
    #: Also list paused and finished jobs (the server hides ``enabled: false`` ones by default).
    include_disabled = traitlets.Bool(False).tag(sync=True)
    #: Seconds between automatic refreshes; 0 turns it off.
    auto_refresh = traitlets.Float(DEFAULT_AUTO_REFRESH).tag(sync=True)
    #: When the last successful refresh finished (epoch milliseconds), for "updated N s ago".
    updated_at = traitlets.Float(None, allow_none=True).tag(sync=True)
    #: True while a refresh is under way.
    loading = traitlets.Bool(False).tag(sync=True)
    #: ``{"status": "connecting" | "connected" | "error", "message": str | None, "url": str}``.
    connection = traitlets.Dict({"status": "connecting", "message": None, "url": ""}).tag(sync=True)
    #: A one-line notice: ``{"kind": "info" | "error" | "run", "text": str}`` or empty ("run": a job finished
    # a run).
    notice = traitlets.Dict({}).tag(sync=True)
    #: Form presets: ``[{"key", "label", "fields"}]`` (the view builds the same expressions as
    # cron/presets.py).
    presets = traitlets.List(traitlets.Dict()).tag(sync=True)
    #: The time zone the next-run previews are computed in.
    timezone = traitlets.Unicode("").tag(sync=True)

    def __init__(
        self,
        source: JobsClient | Settings | HasSettings | None = None,
        *,
        include_disabled: bool = False,
        auto_refresh: float = DEFAULT_AUTO_REFRESH,
        refresh: bool = True,
        **kwargs: Any,
    ) -> None:
        super().__init__(
            include_disabled=include_disabled,
            auto_refresh=auto_refresh,
            presets=_preset_dicts(),
            timezone=_tz_label(),
            **kwargs,
        )
        self._client, self._owns_client = self._make_client(source)
        self._helpers = JobsAPI(self._client)
        self.connection = {
            "status": "connecting",
            "message": None,
            "url": redact_url(self._client.settings.api_url),
        }
        self._closed = False
        self._init_static_twin("hn-jobs-static")
        self._refresh_task: asyncio.Task[None] | None = None
        self._generation = 0
        self._unfollow: list[Callable[[], None]] = []  # off() of each change feed followed
        self._change_refresh: concurrent.futures.Future[None] | None = None
        self._actions: dict[str, Callable[[dict[str, Any]], Coroutine[Any, Any, None]]] = {
            "refresh": self._on_refresh,
            "check_schedule": self._on_check_schedule,
            "save": self._on_save,
            "action": self._on_action,
            "get_prompt": self._on_get_prompt,
            "job_errors": self._on_job_errors,
        }
        self._secrets = (self._client.settings.api_key, self._client.settings.dashboard_token)
        self._runs = RunsHandler(self._client.settings, self._reply)  # run list + read-only transcripts
        self._actions.update(runs=self._runs.on_runs, transcript=self._runs.on_transcript)
        #: Futures of handled browser messages (tests wait on them).
        self.pending: list[concurrent.futures.Future[None]] = []
        self.on_msg(self._dispatch)
        #: The view's messages run on the front end's subshell while a cell runs (widgets/subshells.py): every
        #: handler and observer here only checks and schedules onto the package loop, from whatever thread.
        self.comm_routing: Routing = follow_frontend_subshells(self)
        self.observe(self._restart_auto_refresh, names=["auto_refresh"])
        self.observe(lambda _c: self.submit(self.refresh_async()), names=["include_disabled"])
        if refresh:
            self.submit(self.refresh_async())
        self._restart_auto_refresh()

    @staticmethod
    def _make_client(source: JobsClient | Settings | HasSettings | None) -> tuple[JobsClient, bool]:
        if isinstance(source, JobsClient):
            return source, False
        settings = Settings.resolve() if source is None else getattr(source, "settings", source)
        if isinstance(settings, Settings):
            return JobsClient(settings), True
        raise HermesUsageError(
            "Jobs() takes a JobsClient, Settings, the hermes_notebook.connect() object or nothing, not "
            f"{type(source).__name__}"
        )

    # --- kernel-side API ------------------------------------------------------------------------------

    def submit(self, coro: Coroutine[Any, Any, None]) -> concurrent.futures.Future[None]:
        """Run a coroutine on the package loop without blocking the caller (tests wait on ``pending``)."""
        future = runtime.submit(coro)
        self.pending = [f for f in self.pending if not f.done()] + [future]
        return future

    def wait_idle(self, timeout: float = 30.0) -> None:
        """Block until every handled browser message and refresh so far has finished (for tests/scripts)."""
        deadline = time.monotonic() + timeout
        while True:
            open_ = [f for f in self.pending if not f.done()]
            if not open_:
                return
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError(f"the jobs widget was still busy after {timeout} s")
            concurrent.futures.wait(open_, timeout=remaining)

    @on_loop
    async def refresh_async(self) -> None:
        """Reload the jobs and update the table, the connection indicator and the static table."""
        if self._closed:
            return
        self._generation += 1
        generation = self._generation
        self.loading = True
        try:
            jobs = await self._client.list(include_disabled=self.include_disabled)
        except HermesError as exc:
            if generation == self._generation:
                self.connection = {
                    "status": "error",
                    "message": _connection_message(exc),
                    "url": redact_url(self._client.settings.api_url),
                }
            return
        finally:
            self.loading = False
        if generation != self._generation:  # a newer refresh (e.g. the toggle) superseded this one
            return
        self._last_jobs = jobs
        before, self.jobs = self.jobs, [job_row(job) for job in jobs]
        finished = await self._runs.finished(before, self.jobs)  # duration from the run; followers told
        if finished:
            self.notice = {
                "kind": "run",
                "text": finished,
            }  # the view also shows it as a notebook notification
        self.connection = {
            "status": "connected",
            "message": None,
            "url": redact_url(self._client.settings.api_url),
        }
        self.updated_at = time.time() * 1000
        self._send_errors()
        if not self._closed:
            self.update_static()

    refresh = blocking(refresh_async)

    def _send_errors(self) -> None:
        """The last errors of the listed jobs, as a reply (never synced: the saved rows only flag them)."""
        errors = {
            job.id: {"last_error": job.last_error, "last_delivery_error": job.last_delivery_error}
            for job in getattr(self, "_last_jobs", [])
            if job.last_error or job.last_delivery_error
        }
        self._reply({"type": "job_errors", "errors": scrub_value(errors, self._secrets)})

    @traitlets.validate("notice")
    def _scrub_notice(self, proposal: Any) -> Any:
        return scrub_value(proposal["value"], getattr(self, "_secrets", ()))

    def close(self) -> None:
        """Stop auto-refresh, close the client if this widget opened it, and close the widget."""
        if not self._closed:
            self._closed = True
            task = self._refresh_task
            if task is not None:
                runtime.call_soon(task.cancel)
            for off in self._unfollow:
                off()
            if self._owns_client:
                runtime.submit(self._client.aclose())
            runtime.submit(self._runs.aclose())
        super().close()

    def follow(self, on_change: Callable[[Callable[[str], Any]], Callable[[], None]]) -> None:
        """Refresh as soon as a change feed says the jobs changed, not only at the next timed refresh.

        ``on_change`` is a Dashboard connection's ``on_change``: a newer Dashboard broadcasts ``cron.changed``
        (0.19.0 never does; the timed refresh stays on either way). Broadcasts during a refresh are folded
        into one more refresh.
        """
        self._unfollow.append(on_change(self._on_change))

    async def follow_feed(
        self, on_change: Callable[[Callable[[str], Any]], Awaitable[Callable[[], None]]]
    ) -> None:
        """:meth:`follow` a feed opened on the package loop (``Conversation.on_change``); else the timer
        alone."""
        try:
            self._unfollow.append(await on_change(self._on_change))
        except HermesError as exc:
            log.info("jobs widget: no Dashboard change feed (%s); refreshing on a timer only", exc)

    def on_run_finished(self, callback: Callable[[FinishedRun], Any]) -> Callable[[], None]:
        """Call ``callback(run)`` (job name, status, duration) for each run a refresh finds finished;
        ``off()``."""
        return self._runs.on_finished(callback)

    def _on_change(self, kind: str) -> None:
        if kind != "cron" or self._closed:
            return
        running = self._change_refresh
        if running is None or running.done():
            self._change_refresh = runtime.submit(self.refresh_async())

    # --- auto refresh ---------------------------------------------------------------------------------

    def _restart_auto_refresh(self, _change: Any = None) -> None:
        def restart() -> None:
            if self._refresh_task is not None:
                self._refresh_task.cancel()
                self._refresh_task = None
            if self.auto_refresh > 0 and not self._closed:
                self._refresh_task = asyncio.get_running_loop().create_task(self._auto_loop())

        runtime.call_soon(restart)

    async def _auto_loop(self) -> None:
        while not self._closed:
            await asyncio.sleep(max(1.0, self.auto_refresh))
            try:
                await self.refresh_async()
            except Exception:  # keep ticking; the indicator already shows connection problems
                log.debug("auto-refresh failed", exc_info=True)

    # --- browser messages -----------------------------------------------------------------------------

    def _dispatch(self, _widget: object, content: object, _buffers: object) -> None:
        self.handle_message(content)

    def handle_message(self, content: object) -> concurrent.futures.Future[None] | None:
        """Handle one browser message (also the entry point for kernel-side tests); returns its future."""
        try:
            message = inbound.validate(content, inbound.JOBS_MESSAGES)
        except inbound.Refused as exc:
            log.warning("refused a message from the jobs view: %s", exc)
            self.notice = {"kind": "error", "text": f"Refused a message from the view: {exc}."}
            return None
        return self.submit(self._guard(self._actions[message["type"]], message))

    async def _guard(
        self, handler: Callable[[dict[str, Any]], Coroutine[Any, Any, None]], content: dict[str, Any]
    ) -> None:
        try:
            await handler(content)
        except Exception as exc:  # a click must never raise into the comm handler: show it instead
            log.exception("jobs widget: handling %r failed", content.get("type"))
            self.notice = {"kind": "error", "text": f"{content.get('type')} failed: {exc}"}

    def _reply(self, content: dict[str, Any]) -> None:
        if self.comm is None:
            return
        try:
            self.send(content)
        except Exception:  # a view can go away at any time
            log.debug("could not send to the jobs view", exc_info=True)

    async def _on_refresh(self, _content: dict[str, Any]) -> None:
        await self.refresh_async()

    async def _on_check_schedule(self, content: dict[str, Any]) -> None:
        result = schedules.check(content.get("schedule", ""))
        self._reply(answer(content, {"type": "schedule_check", **result.to_dict()}))

    async def _on_save(self, content: dict[str, Any]) -> None:
        job_id = content.get("id") or None
        given = content.get("fields")
        raw: Mapping[str, Any] = given if isinstance(given, Mapping) else {}
        if job_id and not any(row["id"] == job_id for row in self.jobs):
            self._reply(
                answer(
                    content,
                    {
                        "type": "save_result",
                        "ok": False,
                        "field": None,
                        "message": "no such job in this list; refresh and try again",
                        "job": None,
                    },
                )
            )
            return
        fields = _form_fields(raw, editing=bool(job_id))
        try:
            if job_id:
                job = await self._helpers.update_async(str(job_id), **fields)
            else:
                job = await self._helpers.create_async(**fields)
        except HermesError as exc:
            self._reply(
                answer(
                    content,
                    {
                        "type": "save_result",
                        "ok": False,
                        "field": _field_of(exc),
                        "message": str(exc),
                        "job": None,
                    },
                )
            )
            return
        verb = "Updated" if job_id else "Created"
        self.notice = {"kind": "info", "text": f"{verb} job {job.name!r} ({schedule_description(job)})."}
        self._reply(
            answer(
                content,
                {"type": "save_result", "ok": True, "field": None, "message": "", "job": job_row(job)},
            )
        )
        await self.refresh_async()

    async def _on_get_prompt(self, content: dict[str, Any]) -> None:
        """The whole prompt of a listed job, for the edit form (sent as a reply, never synced)."""
        job = next((j for j in getattr(self, "_last_jobs", []) if j.id == content["id"]), None)
        self._reply(
            answer(
                content,
                {
                    "type": "prompt",
                    "id": content["id"],
                    "ok": job is not None,
                    "prompt": job.prompt if job is not None else None,
                },
            )
        )

    async def _on_job_errors(self, _content: dict[str, Any]) -> None:
        self._send_errors()

    async def _on_action(self, content: dict[str, Any]) -> None:
        action, job_id = str(content.get("action")), str(content.get("id") or "")
        calls = {
            "pause": self._client.pause,
            "resume": self._client.resume,
            "run": self._client.run,
            "delete": self._client.delete,
        }

        def result(ok: bool, message: str) -> None:
            self._reply(
                answer(
                    content,
                    {"type": "action_result", "action": action, "id": job_id, "ok": ok, "message": message},
                )
            )

        name = next((row["name"] for row in self.jobs if row["id"] == job_id), None)
        if action not in calls or name is None:  # only jobs this view lists can be acted on
            result(
                False,
                f"unknown action {action!r}"
                if action not in calls
                else "no such job in this list; refresh and try again",
            )
            return
        try:
            await calls[action](job_id)
        except HermesError as exc:
            message = f"Could not {action} {name!r}: {exc}"
            self.notice = {"kind": "error", "text": message}
            result(False, message)
            await self.refresh_async()
            return
        message = {
            "pause": f"Paused {name!r}.",
            "resume": f"Resumed {name!r}.",
            "run": f"{name!r} is due now. {_RUN_NOTE}",
            "delete": f"Deleted {name!r}.",
        }[action]
        self.notice = {"kind": "info", "text": message}
        result(True, message)
        await self.refresh_async()

    # --- display: live widget + static table ----------------------------------------------------------

    def static_bundle(self) -> dict[str, str]:
        """What a saved notebook keeps for viewers without widget JS: a table of the jobs last seen."""
        jobs = getattr(self, "_last_jobs", [])
        html_table = jobs_table_html(jobs)
        text = (
            "\n".join(
                f"{row['name']}  [{row['schedule']}]  {row['state']}  next {row['next_run_at']}"
                for row in self.jobs
            )
            or "(no jobs)"
        )
        return {  # saved with the notebook: no key or token, whatever a job's error quotes
            "text/html": scrub(f'<div class="{STATIC_CLASS}">{html_table}</div>', self._secrets),
            "text/plain": scrub(f"Hermes cron jobs\n{terminal_safe(text)}", self._secrets),
        }


def _form_fields(raw: Mapping[str, Any], *, editing: bool) -> dict[str, Any]:
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


#: The form's fields; an error whose ``param`` is one of them is shown next to it.
FORM_FIELDS = ("name", "schedule", "prompt", "repeat", "skills", "deliver")


def _field_of(exc: HermesError) -> str | None:
    """Which form field an error belongs to: its ``param`` (set where the value was checked or refused)."""
    param = getattr(exc, "param", None)
    return param if param in FORM_FIELDS else None


def _connection_message(exc: HermesError) -> str:
    if isinstance(exc, HermesAuthError):
        return "Hermes refused the API key (check HERMES_API_KEY)."
    if isinstance(exc, HermesConnectionError):
        return f"Cannot reach the Hermes API Server: {exc}"
    return str(exc)
