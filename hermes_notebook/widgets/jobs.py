"""``Jobs``: manage Hermes cron jobs from a notebook cell by clicking.

Where things run: every request happens in the kernel on the package loop (:mod:`hermes_notebook.runtime`)
through a :class:`~hermes_notebook.jobs.api.JobsAPI` (``hermes.jobs``, or one opened from settings), the same
object notebook code scripts jobs with; the browser view only sends small custom messages and renders the
``jobs`` traitlet. So the API key never reaches the browser, the widget state or the saved notebook. A click
schedules a coroutine and returns at once: the kernel's shell thread never blocks on Hermes.

Messages, on the chat's idiom (typed in :mod:`.messages`, checked against ``js/src/types/jobs.ts``): the
command ``refresh``, and questions with a request id, each answered once (:mod:`.replies`): ``job_errors``
(here), ``check_schedule``, ``save``, ``action`` and ``get_prompt`` (:mod:`.job_answers`), ``reproduce`` (a
scheduled reproducibility check, :mod:`.job_reproduce`), and the run list's ``runs`` and ``transcript``
(:mod:`.job_runs`). Synced state is saved with the notebook, so the rows (:mod:`.job_rows`) hold no prompt and
no error text; ``job_errors`` is also pushed, without a request, after
every refresh. Notices and the static table go through the secret scrubber with the API key.

Saved notebooks: ``_ipython_display_`` shows the widget and a second output, a static HTML table
(:func:`hermes_notebook.cron.display.jobs_table_html`) under a ``display_id`` that follows every refresh; the
live view hides it (js/src/twin.ts), viewers without widget JS (nbviewer, GitHub, nbconvert) show it.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import time
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, Protocol

import traitlets

from .. import runtime
from ..cron.display import jobs_table_html
from ..errors import HermesAuthError, HermesConnectionError, HermesError, HermesUsageError
from ..inert import redact_url, terminal_safe
from ..jobs import Job
from ..jobs.api import JobsAPI
from ..runtime import blocking, on_loop
from ..scrub import scrub, scrub_value
from ..settings import Settings
from ..shell.subshells import Routing, follow_frontend_subshells
from . import inbound
from .base import Bundle, LeanWidget
from .job_answers import JobAnswers
from .job_reproduce import ReproduceAnswers
from .job_rows import job_row, preset_dicts, timezone_label
from .job_runs import FinishedRun, RunsHandler
from .replies import answer, refusal
from .static_twin import StaticTwin

__all__ = ["STATIC_CLASS", "HasSettings", "Jobs"]

log = logging.getLogger(__name__)

#: Class of the element wrapping the static table; the live view hides its output (js/src/twin.ts).
STATIC_CLASS = "hn-jobs-static-wrap"

#: Default seconds between automatic refreshes.
DEFAULT_AUTO_REFRESH = 30.0


class HasSettings(Protocol):
    """What the jobs widget takes from the ``hermes_notebook.connect()`` object: its settings."""

    settings: Settings


class Jobs(StaticTwin, LeanWidget):
    """A live table of Hermes cron jobs with actions, a create/edit form and auto-refresh.

    ``Jobs(source=None, *, include_disabled=False, auto_refresh=30.0)``: ``source`` is a
    :class:`~hermes_notebook.jobs.api.JobsAPI` (``hermes.jobs``: kept open, it is the caller's),
    :class:`Settings`, the ``hermes_notebook.connect()`` facade (its settings are used), or ``None``
    (``Settings.resolve()``: arguments, then ``HERMES_API_URL/KEY``).
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
        source: JobsAPI | Settings | HasSettings | None = None,
        *,
        include_disabled: bool = False,
        auto_refresh: float = DEFAULT_AUTO_REFRESH,
        refresh: bool = True,
        **kwargs: Any,
    ) -> None:
        super().__init__(
            include_disabled=include_disabled,
            auto_refresh=auto_refresh,
            presets=preset_dicts(),
            timezone=timezone_label(),
            **kwargs,
        )
        self._jobs, self._owns_jobs = self._jobs_of(source)
        settings = self._jobs.settings
        assert settings is not None  # _jobs_of refuses a JobsAPI without settings
        self._url = redact_url(settings.api_url)
        self.connection = {"status": "connecting", "message": None, "url": self._url}
        self._closed = False
        self._init_static_twin("hn-jobs-static")
        self._refresh_task: asyncio.Task[None] | None = None
        self._generation = 0
        self._last_jobs: list[Job] = []
        self._unfollow: list[Callable[[], None]] = []  # off() of each change feed followed
        self._change_refresh: concurrent.futures.Future[None] | None = None
        self._secrets = (settings.api_key, settings.dashboard_token)
        answers = JobAnswers(self, self._jobs)  # the form's and the rows' questions (job_answers.py)
        self._runs = RunsHandler(self._jobs, self.reply, self._secrets)  # run list + read-only transcripts
        self._handlers: dict[str, Callable[[dict[str, Any]], Coroutine[Any, Any, None]]] = {
            "refresh": lambda _content: self.refresh_async(),
            "job_errors": self._on_job_errors,
            "check_schedule": answers.on_check_schedule,
            "save": answers.on_save,
            "action": answers.on_action,
            "get_prompt": answers.on_get_prompt,
            "reproduce": ReproduceAnswers(self, self._jobs).on_reproduce,  # a scheduled reproducibility check
            "runs": self._runs.on_runs,
            "transcript": self._runs.on_transcript,
        }
        #: Futures of handled browser messages (tests wait on them).
        self.pending: list[concurrent.futures.Future[None]] = []
        self.on_msg(self._dispatch)
        #: The view's messages run on the front end's subshell while a cell runs (shell/subshells.py): every
        #: handler and observer here only checks and schedules onto the package loop, from whatever thread.
        self.comm_routing: Routing = follow_frontend_subshells(self)
        self.observe(self._restart_auto_refresh, names=["auto_refresh"])
        self.observe(lambda _c: self.submit(self.refresh_async()), names=["include_disabled"])
        if refresh:
            self.submit(self.refresh_async())
        self._restart_auto_refresh()

    @staticmethod
    def _jobs_of(source: JobsAPI | Settings | HasSettings | None) -> tuple[JobsAPI, bool]:
        """The JobsAPI to work through, and whether this widget opened it (and so closes it)."""
        if isinstance(source, JobsAPI):
            if source.settings is None:
                raise HermesUsageError(
                    "Jobs() needs a JobsAPI that knows its settings (hermes.jobs has them)"
                )
            return source, False
        settings = Settings.resolve() if source is None else getattr(source, "settings", source)
        if isinstance(settings, Settings):
            return JobsAPI(settings), True
        raise HermesUsageError(
            "Jobs() takes hermes.jobs (a JobsAPI), Settings, the hermes_notebook.connect() object or "
            f"nothing, not {type(source).__name__}"
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
            jobs = await self._jobs.list_async(include_disabled=self.include_disabled)
        except HermesError as exc:
            if generation == self._generation:
                self.connection = {"status": "error", "message": _connection_message(exc), "url": self._url}
            return
        finally:
            self.loading = False
        if generation != self._generation:  # a newer refresh (e.g. the toggle) superseded this one
            return
        self._last_jobs = list(jobs)
        before, self.jobs = self.jobs, [job_row(job) for job in jobs]
        finished = await self._runs.finished(before, self.jobs)  # duration from the run; followers told
        if finished:  # the view also shows it as a notebook notification
            self.tell("run", finished)
        self.connection = {"status": "connected", "message": None, "url": self._url}
        self.updated_at = time.time() * 1000
        self._send_errors(None)
        if not self._closed:
            self.update_static()

    refresh = blocking(refresh_async)

    def _send_errors(self, question: dict[str, Any] | None) -> None:
        """The last errors of the listed jobs: the answer to ``question``, or pushed to every view (never
        synced: the saved rows only flag them)."""
        errors = {
            job.id: {"last_error": job.last_error, "last_delivery_error": job.last_delivery_error}
            for job in self._last_jobs
            if job.last_error or job.last_delivery_error
        }
        self.reply(answer(question, {"type": "job_errors", "errors": scrub_value(errors, self._secrets)}))

    async def _on_job_errors(self, question: dict[str, Any]) -> None:
        self._send_errors(question)

    @traitlets.validate("notice")
    def _scrub_notice(self, proposal: Any) -> Any:
        return scrub_value(proposal["value"], getattr(self, "_secrets", ()))

    def close(self) -> None:
        """Stop auto-refresh, close the jobs API if this widget opened it, and close the widget."""
        if not self._closed:
            self._closed = True
            task = self._refresh_task
            if task is not None:
                runtime.call_soon(task.cancel)
            for off in self._unfollow:
                off()
            if self._owns_jobs:
                runtime.submit(self._jobs.aclose())
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
        return self.submit(self._guard(self._handlers[message["type"]], message))

    async def _guard(
        self, handler: Callable[[dict[str, Any]], Coroutine[Any, Any, None]], content: dict[str, Any]
    ) -> None:
        try:
            await handler(content)
        except Exception as exc:  # a click must never raise into the comm handler: show it instead
            log.exception("jobs widget: handling %r failed", content.get("type"))
            self.tell("error", f"{content.get('type')} failed: {exc}")
            if "request" in content:  # a question is answered once, here with why not (js/src/invoke.ts)
                self.reply(refusal(content, scrub(f"{exc}", self._secrets)))

    # --- what the answers use (job_answers.JobsTable) ---------------------------------------------------

    def listed_name(self, job_id: str) -> str | None:
        """The name of the listed job with this id (None: this view does not list it)."""
        return next((row["name"] for row in self.jobs if row["id"] == job_id), None)

    def tell(self, kind: str, text: str) -> None:
        """Show a one-line notice: ``info``, ``error``, or ``run`` (a job finished a run)."""
        self.notice = {"kind": kind, "text": text}

    def reply(self, content: dict[str, Any]) -> None:
        """Send a message to every view (dropped when none is there)."""
        if self.comm is None:
            return
        try:
            self.send(content)
        except Exception:  # a view can go away at any time
            log.debug("could not send to the jobs view", exc_info=True)

    # --- display: live widget + static table ----------------------------------------------------------

    def static_bundle(self) -> dict[str, str]:
        """What a saved notebook keeps for viewers without widget JS: a table of the jobs last seen."""
        html_table = jobs_table_html(self._last_jobs)
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


def _connection_message(exc: HermesError) -> str:
    if isinstance(exc, HermesAuthError):
        return "Hermes refused the API key (check HERMES_API_KEY)."
    if isinstance(exc, HermesConnectionError):
        return f"Cannot reach the Hermes API Server: {exc}"
    return str(exc)
