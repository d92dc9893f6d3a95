"""The notebook facade: ``hermes_notebook.connect()`` -> :class:`Hermes`, whose ``ask`` returns a :class:`Reply`.

Where things run: every network call runs on the package loop (:mod:`hermes_notebook.runtime`). A turn is a
:class:`TurnHandle` driven there; notebook code either blocks on it (``ask``, ``%hermes``) or keeps it
(``%hermes -b``). While a blocking call waits on a kernel's main thread it pumps widget messages
(:mod:`hermes_notebook.notebook.comm_pump`), so the approval, clarify, sudo/secret and stop buttons of the live view
work mid-turn and Run All still waits for the answer.

Who answers an interaction (approval, clarify, sudo, secret), first match wins:

1. a policy: ``approve=`` / ``clarify=`` (a choice string, or a callable given the request dict);
2. the live view's buttons (in a kernel), or a text prompt (``input()``/``getpass``) in terminal IPython, or
   in a kernel whose internals the pump cannot use;
3. nobody: the server denies an approval after its timeout (``approvals.timeout``), and the reply says so in
   :attr:`Reply.notes`.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import sys
import threading
import time
import uuid
import warnings
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, overload

from .. import runtime
from ..errors import HermesError, HermesNotFoundError, HermesRPCError, HermesUsageError
from ..render import transcript_bundle
from ..runtime import on_package_loop
from ..settings import Settings
from ..turns import TurnFolder
from . import context as _context
from . import live as _live
from .comm_pump import CommPump, CommPumpWarning
from .context import PromptPreview
from .live import (
    VIAS,
    Policy,
    Reply,
    TurnHandle,
    Via,
    _check_policy,
    _Options,
    _presenter_for,
    _WidgetPresenter,
)

if TYPE_CHECKING:
    from ..client.api import ApiClient
    from ..client.dashboard import DashboardConnection, SessionRef
    from ..client.jobs import JobsClient
    from ..jobs.api import JobsAPI
    from ..widgets.chat import Chat

__all__ = ["Hermes", "Reply", "TurnHandle", "connect"]

log = logging.getLogger(__name__)


# --- the facade -------------------------------------------------------------------------------------------


class Hermes:
    """Hermes from notebook code: ``ask`` a prompt, open a ``chat``, manage ``jobs``, list ``sessions``.

    Blocking methods are safe in a Jupyter cell (they wait on the package loop's thread); ``ask_async`` is
    the awaitable twin. Consecutive asks continue one session unless ``new=True`` or ``session=`` says
    otherwise.
    """

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        #: "dashboard" when a Dashboard token is configured, else "api".
        self.default_via: str = "dashboard" if settings.dashboard_token else "api"
        #: Seconds after which a blocking ask interrupts the turn (None: no limit).
        self.timeout: float | None = None
        self._api: ApiClient | None = None
        self._jobs_client: JobsClient | None = None
        self._dashboard: DashboardConnection | None = None
        self._refs: dict[str, SessionRef] = {}
        self._aliases: dict[str, str] = {}
        self._current: str | None = None
        self._turn_locks: dict[str, asyncio.Lock] = {}
        self._resolve_lock: asyncio.Lock | None = None
        self._jobs: JobsAPI | None = None
        self._closed = False
        #: Replies seen live, per session id (their approvals and usage are not in the stored history).
        self._replies: dict[str, list[Reply]] = {}
        #: The last turn started (``%hermes stop`` stops it).
        self.last_turn: TurnHandle | None = None

    def __repr__(self) -> str:
        dashboard = self.settings.dashboard_url if self.settings.dashboard_token else "not configured"
        return (f"<Hermes api={self.settings.api_url} dashboard={dashboard} via={self.default_via} "
                f"session={self._current or 'none yet'}>")

    @property
    def session_id(self) -> str | None:
        """The session consecutive asks continue (its stored id), None before the first ask."""
        return self._current

    # --- asking ---

    @overload
    def ask(
        self, prompt: str, session: str | None = None, via: Via | None = None, approve: Policy = None,
        clarify: Policy = None, new: bool = False, instructions: str | None = None, model: str | None = None,
        images: Any = None, *, preview: Literal[True],
    ) -> PromptPreview: ...

    @overload
    def ask(
        self, prompt: str, session: str | None = None, via: Via | None = None, approve: Policy = None,
        clarify: Policy = None, new: bool = False, instructions: str | None = None, model: str | None = None,
        images: Any = None, preview: Literal[False] = False,
    ) -> Reply: ...

    def ask(
        self,
        prompt: str,
        session: str | None = None,
        via: Via | None = None,
        approve: Policy = None,
        clarify: Policy = None,
        new: bool = False,
        instructions: str | None = None,
        model: str | None = None,
        images: Any = None,
        preview: bool = False,
    ) -> Reply | PromptPreview:
        """Send a prompt and wait for the whole turn; returns the :class:`Reply`.

        In a notebook the turn streams into a live view whose buttons answer approvals and questions while
        this call waits; ``approve=``/``clarify=`` answer them unattended ("once", "deny", a choice, or a
        callable given the request). ``via="api"`` uses the API Server's runs (no clarify there).
        ``{name}``/``{expr}`` in the prompt are filled with summaries of the caller's values (``{{`` is a
        literal brace); ``preview=True`` returns what would be sent and sends nothing.
        """
        prepared = _context.prepare_ask(prompt, images)
        if preview:
            return prepared
        options = self._options(prepared.text, session, via, approve, clarify, new, instructions, model,
                                _context.merge_images(prepared, images))
        return self._run_blocking(options, timeout=self.timeout)

    @overload
    async def ask_async(
        self, prompt: str, session: str | None = None, via: Via | None = None, approve: Policy = None,
        clarify: Policy = None, new: bool = False, instructions: str | None = None, model: str | None = None,
        images: Any = None, *, preview: Literal[True],
    ) -> PromptPreview: ...

    @overload
    async def ask_async(
        self, prompt: str, session: str | None = None, via: Via | None = None, approve: Policy = None,
        clarify: Policy = None, new: bool = False, instructions: str | None = None, model: str | None = None,
        images: Any = None, preview: Literal[False] = False,
    ) -> Reply: ...

    async def ask_async(
        self,
        prompt: str,
        session: str | None = None,
        via: Via | None = None,
        approve: Policy = None,
        clarify: Policy = None,
        new: bool = False,
        instructions: str | None = None,
        model: str | None = None,
        images: Any = None,
        preview: bool = False,
    ) -> Reply | PromptPreview:
        """``await`` twin of :meth:`ask`. Buttons work while it waits only where the kernel handles widget
        messages during an ``await`` (ipykernel >= 7.4); use policies elsewhere."""
        prepared = _context.prepare_ask(prompt, images)
        if preview:
            return prepared
        options = self._options(prepared.text, session, via, approve, clarify, new, instructions, model,
                                _context.merge_images(prepared, images))
        handle = TurnHandle(self, options)
        presenter = _presenter_for(handle, blocking=False)
        handle._buttons = presenter.buttons
        handle._start()
        try:
            reply = await handle
        except asyncio.CancelledError:
            handle.stop()
            raise
        presenter.finish(reply)
        return reply

    def start(self, prompt: str, **kwargs: Any) -> TurnHandle:
        """Start a turn and return its :class:`TurnHandle` at once (``%hermes -b``); same options as ``ask``."""
        options = self._options(prompt, **kwargs)
        handle = TurnHandle(self, options)
        presenter = _presenter_for(handle, blocking=False)
        handle._buttons = presenter.buttons
        self.last_turn = handle._start()
        future = handle._future
        assert future is not None
        if isinstance(presenter, _WidgetPresenter):
            def finish(done: concurrent.futures.Future[Reply]) -> None:
                if not done.cancelled() and done.exception() is None:
                    with contextlib.suppress(Exception):
                        presenter.finish(done.result())

            future.add_done_callback(finish)
        return handle

    def _run_blocking(self, options: _Options, *, timeout: float | None = None, show: bool = True) -> Reply:
        if runtime.in_loop_thread():
            raise HermesUsageError("ask() was called on the hermes-notebook loop; use ask_async() there")
        handle = TurnHandle(self, options)
        presenter = _presenter_for(handle, blocking=True, show=show)
        pump: CommPump | None = None
        on_main = threading.current_thread() is threading.main_thread()
        if _live.environment() == "kernel" and on_main:
            pump = CommPump(warn=False)
            if not pump.available:
                _warn_every_time(
                    f"the buttons may not respond while this cell waits ({pump.reason}); "
                    "answer in the text prompt instead",
                    CommPumpWarning,
                    stacklevel=3,
                )
                handle._text_prompts = _live._stdin_allowed()
        elif on_main:
            handle._text_prompts = _live._stdin_allowed()
        handle._buttons = presenter.buttons
        self.last_turn = handle._start()
        try:
            reply = _live._wait_blocking(handle, timeout=timeout, presenter=presenter, pump=pump)
        except BaseException:
            partial = handle.reply  # interrupted or timed out: leave what there is as the static result
            if partial is not None:
                with contextlib.suppress(Exception):
                    presenter.finish(partial)
            raise
        finally:
            if pump is not None:
                pump.close()
        presenter.finish(reply)
        return reply

    def _options(
        self,
        prompt: str,
        session: str | None = None,
        via: Via | None = None,
        approve: Policy = None,
        clarify: Policy = None,
        new: bool = False,
        instructions: str | None = None,
        model: str | None = None,
        images: Any = None,
    ) -> _Options:
        if self._closed:
            raise HermesUsageError("this Hermes connection was closed; call hermes_notebook.connect() again")
        if not isinstance(prompt, str) or not prompt.strip():
            raise HermesUsageError("the prompt is empty")
        path: str = via if via is not None else ("api" if instructions is not None else self.default_via)
        if path not in VIAS:
            raise HermesUsageError(f"via must be 'dashboard' or 'api', not {path!r}")
        _check_policy("approve", approve)
        _check_policy("clarify", clarify)
        if path == "api":
            if clarify is not None:
                raise HermesUsageError(
                    "clarify is not available with via='api': the API Server's runs have no clarify questions "
                    "(use via='dashboard')"
                )
            if images:
                raise HermesUsageError("images need via='dashboard' (API Server runs take text only)")
        else:
            if not self.settings.dashboard_token:
                raise HermesUsageError(
                    "no Dashboard token: set HERMES_DASHBOARD_TOKEN (or pass dashboard_token= to connect()), "
                    "or use via='api'"
                )
            if instructions is not None:
                raise HermesUsageError("instructions need via='api' (the Dashboard has no per-turn instructions)")
        if session is not None and (not isinstance(session, str) or not session.strip()):
            raise HermesUsageError("session must be a non-empty name or id")
        return _Options(prompt, session, path, approve, clarify, bool(new), instructions, model, images)

    # --- the drivers (package loop) ---

    async def _drive(self, handle: TurnHandle) -> Reply:
        options = handle._options
        if options.via == "dashboard":
            message = await self._drive_dashboard(handle, options)
        else:
            message = await self._drive_api(handle, options)
        notes = list(handle.notes)
        for part in message.get("parts") or []:
            inter = part.get("interaction") or {}
            if inter.get("status") == "expired":
                what = inter.get("command") or inter.get("question") or inter.get("kind")
                notes.append(
                    f"nobody answered the {inter.get('kind')} request ({what}); the server denied it after its "
                    "timeout. Pass approve=/clarify= (or --approve in %hermes) for unattended runs."
                    if inter.get("kind") == "approval" else
                    f"nobody answered the {inter.get('kind')} request ({what}) before the server's timeout."
                )
        if message.get("status") == "interrupted" or message.get("status") == "cancelled":
            notes.append("the turn was interrupted")
        reply = Reply(message, session_id=handle.session_id, prompt=options.prompt, via=options.via, notes=notes)
        self._replies.setdefault(handle.session_id or "", []).append(reply)  # export() keeps what history drops
        return reply

    async def _run_interactions(
        self, handle: TurnHandle, changes: list[dict[str, Any]], seen: set[str],
        respond: Callable[[dict[str, Any], str], Awaitable[None]], tasks: set[asyncio.Task[None]],
    ) -> None:
        for change in changes:
            op = change.get("op")
            inter = None
            if op == "part":
                inter = change["part"].get("interaction")
            elif op == "patch":
                inter = change["fields"].get("interaction")
            if not inter or inter.get("status") != "pending" or inter.get("request_id") in seen:
                continue
            seen.add(inter["request_id"])

            async def answer(request: dict[str, Any] = inter) -> None:
                value = await handle._obtain(request)
                if value is None:
                    return
                try:
                    await respond(request, value)
                except HermesError as exc:
                    handle.notes.append(f"could not answer the {request.get('kind')} request: {exc}")

            task = asyncio.ensure_future(answer())
            tasks.add(task)
            task.add_done_callback(tasks.discard)

    async def _drive_dashboard(self, handle: TurnHandle, options: _Options) -> dict[str, Any]:
        conn = await self._dashboard_conn()
        ref = await self._dashboard_ref(conn, options)
        handle.session_id = ref.stored_id
        tasks: set[asyncio.Task[None]] = set()
        seen: set[str] = set()
        stop_task = asyncio.ensure_future(handle._watch_stop())

        async def respond(request: dict[str, Any], value: str) -> None:
            await conn.respond(ref, request["request_id"], value)

        async with self._turn_lock(ref.stored_id):
            try:
                turn = await conn.submit(ref, options.prompt, images=options.images or None)
                handle._interrupt = lambda: conn.interrupt(ref)
                if handle._stop_requested:
                    await handle._do_interrupt()
                try:
                    async for change in turn:
                        handle._push([change])
                        await self._run_interactions(handle, [change], seen, respond, tasks)
                except HermesError as exc:  # the connection dropped under the turn: keep what we have
                    handle.notes.append(f"the connection to the Dashboard dropped: {exc}")
                message = turn.message.to_dict()
            except asyncio.CancelledError:
                if handle._interrupt is not None and not handle._interrupted:
                    asyncio.ensure_future(handle._do_interrupt())
                raise
            finally:
                stop_task.cancel()
                for task in list(tasks):
                    task.cancel()
        handle.session_id = ref.stored_id  # auto-compression may have rotated it
        self._current = ref.stored_id
        return message

    async def _drive_api(self, handle: TurnHandle, options: _Options) -> dict[str, Any]:
        api = await self._api_client()
        session_id = await self._api_session(options)
        handle.session_id = session_id
        tasks: set[asyncio.Task[None]] = set()
        seen: set[str] = set()
        folder = TurnFolder(uuid.uuid4().hex[:12])
        stop_task = asyncio.ensure_future(handle._watch_stop())
        async with self._turn_lock(session_id):
            try:
                history = await self._api_history(api, session_id)
                run = await api.start_run(
                    options.prompt, session_id=session_id, instructions=options.instructions,
                    conversation_history=history or None, model=options.model,
                )

                async def stop_run() -> None:
                    with contextlib.suppress(HermesNotFoundError):  # it ended already
                        await api.stop_run(run.id)

                async def respond(request: dict[str, Any], value: str) -> None:
                    await api.approve_run(run.id, value)
                    handle._push(folder.answer(request["request_id"], value))

                handle._interrupt = stop_run
                if handle._stop_requested:
                    await handle._do_interrupt()
                handle._push(folder.begin())
                stream = api.run_events(run.id)
                try:
                    async for event in stream:
                        if event.type == "stream.lost":
                            handle.notes.append("the event stream was lost; the result came from the run's status")
                            continue
                        changes = folder.apply(event.to_event())
                        handle._push(changes)
                        await self._run_interactions(handle, changes, seen, respond, tasks)
                finally:
                    await stream.aclose()
                if not folder.done:
                    handle._push(folder.finish("error", "the run ended without a result"))
            except asyncio.CancelledError:
                if handle._interrupt is not None and not handle._interrupted:
                    asyncio.ensure_future(handle._do_interrupt())
                raise
            finally:
                stop_task.cancel()
                for task in list(tasks):
                    task.cancel()
        self._current = session_id
        return folder.message.to_dict()

    def _turn_lock(self, key: str) -> asyncio.Lock:
        # One turn at a time per session: a second prompt to a busy Dashboard session would interrupt the
        # running turn (busy_input_mode "interrupt"), so later asks wait for earlier ones instead.
        lock = self._turn_locks.get(key)
        if lock is None:
            lock = self._turn_locks[key] = asyncio.Lock()
        return lock

    def _resolve(self) -> asyncio.Lock:
        if self._resolve_lock is None:
            self._resolve_lock = asyncio.Lock()
        return self._resolve_lock

    async def _dashboard_ref(self, conn: DashboardConnection, options: _Options) -> SessionRef:
        async with self._resolve():
            name = options.session
            params = {"model": options.model} if options.model else {}
            if options.new or (name is None and self._current is None):
                ref = await conn.create_session(**params)
                if name is not None:
                    await conn.set_title(ref, name)
                    self._aliases[name] = ref.stored_id
            else:
                if options.model:
                    raise HermesUsageError(
                        "model= applies when a Dashboard session starts: add new=True (--new), or use via='api'"
                    )
                key = self._aliases.get(name, name) if name is not None else self._current
                assert key is not None
                ref = self._refs.get(key)  # type: ignore[assignment]
                if ref is None:
                    try:
                        ref = await conn.resume(key)
                    except HermesRPCError as exc:
                        if name is None or exc.code != 4007:  # 4007: no such session
                            raise
                        ref = await conn.create_session()
                        await conn.set_title(ref, name)
                        self._aliases[name] = ref.stored_id
            self._refs[ref.stored_id] = ref
            self._current = ref.stored_id
            return ref

    async def _api_session(self, options: _Options) -> str:
        async with self._resolve():
            name = options.session
            if options.new or (name is None and self._current is None):
                session_id = f"nb_{time.strftime('%Y%m%d_%H%M%S')}_{uuid.uuid4().hex[:6]}"
                if name is not None:
                    self._aliases[name] = session_id
            elif name is not None:
                session_id = self._aliases.get(name, name)
            else:
                assert self._current is not None
                session_id = self._current
            self._current = session_id
            return session_id

    async def _api_history(self, api: ApiClient, session_id: str) -> list[dict[str, str]]:
        # Runs do not load history by session id (api-server-protocol.md §3), so continuity is carried over
        # explicitly from the stored transcript (the same state.db the Dashboard writes).
        try:
            rows = await api.session_messages(session_id)
        except HermesNotFoundError:
            return []
        history = []
        for row in rows:
            if row.role in ("user", "assistant") and isinstance(row.content, str) and row.content.strip():
                history.append({"role": row.role, "content": row.content})
        return history

    # --- clients (package loop) ---

    async def _api_client(self) -> ApiClient:
        if self._api is None:
            from ..client.api import ApiClient

            self._api = ApiClient(self.settings)
        return self._api

    async def _jobs_api_client(self) -> JobsClient:
        if self._jobs_client is None:
            from ..client.jobs import JobsClient

            self._jobs_client = JobsClient(self.settings)
        return self._jobs_client

    async def _dashboard_conn(self) -> DashboardConnection:
        if not self.settings.dashboard_token:
            raise HermesUsageError("no Dashboard token: set HERMES_DASHBOARD_TOKEN or pass dashboard_token=")
        if self._dashboard is None:
            from ..client.dashboard import DashboardConnection

            self._dashboard = DashboardConnection(self.settings)
        if not self._dashboard.connected:
            await self._dashboard.connect()
        return self._dashboard

    # --- the rest of the surface ---

    def chat(self, session: str | None = None) -> Chat:
        """A live chat widget on a Dashboard session (a new one unless ``session`` names one)."""
        from ..widgets.chat import Chat

        conn = runtime.run_sync(self._dashboard_conn())
        key = self._aliases.get(session, session) if session is not None else None
        return Chat(conn, session=key)

    @property
    def jobs(self) -> JobsAPI:
        """Cron jobs: ``list()``, ``get(id)``, ``create(...)``, ``update``, ``pause``, ``resume``, ``run``,
        ``delete``; each has an ``*_async`` twin."""
        if self._jobs is None:
            from ..jobs.api import JobsAPI

            self._jobs = JobsAPI(self._jobs_api_client, self._api_client)
        return self._jobs

    def jobs_widget(self) -> Any:
        """The cron-jobs widget (``hn.Jobs``)."""
        try:
            from ..widgets.jobs import Jobs
        except ImportError as exc:
            raise HermesUsageError("the jobs widget is not available in this version of hermes-notebook") from exc
        return Jobs(self)

    def sessions(self, limit: int = 50) -> _Table:
        """Stored sessions, most recently active first (``id``, ``title``, ``preview``, ...)."""
        return runtime.run_sync(self._sessions(limit))

    async def sessions_async(self, limit: int = 50) -> _Table:
        """``await`` twin of :meth:`sessions`."""
        return await on_package_loop(self._sessions(limit))

    async def _sessions(self, limit: int) -> _Table:
        if self.settings.dashboard_token:
            conn = await self._dashboard_conn()
            rows = (await conn.sessions(limit))[:limit]
        else:
            api = await self._api_client()
            rows = [dict(s.raw) for s in await api.sessions(limit=min(limit, 200))]
        keep = ("id", "title", "preview", "message_count", "source", "started_at")
        return _Table([{k: row.get(k) for k in keep} for row in rows], columns=keep, current=self._current)

    def history(self, session: str | None = None) -> Transcript:
        """A session's transcript as message dicts (the current session by default)."""
        return runtime.run_sync(self._history(session))

    async def history_async(self, session: str | None = None) -> Transcript:
        """``await`` twin of :meth:`history`."""
        return await on_package_loop(self._history(session))

    async def _history(self, session: str | None) -> Transcript:
        key = self._aliases.get(session, session) if session is not None else self._current
        if key is None:
            return Transcript([])
        if self.settings.dashboard_token:
            conn = await self._dashboard_conn()
            return Transcript([m.to_dict() for m in await conn.history(key)])
        from ..turns import fold_history

        api = await self._api_client()
        try:
            rows = [dict(m.raw) for m in await api.session_messages(key)]
        except HermesNotFoundError:
            rows = []
        return Transcript([m.to_dict() for m in fold_history(rows)])

    def export(self, session: Any = None, path: str | Path = "hermes-conversation.md", **options: Any) -> Path:
        """Write a conversation (session id or name, None: the current one; a Reply; replies or message dicts) to
        ``path`` as Markdown, HTML or ``.ipynb`` by suffix (``format=``, ``title=``); it holds no secret."""
        from .export import conversation

        key = self._aliases.get(session, session) if isinstance(session, str) else self._current
        stored = self.history(session) if session is None or isinstance(session, str) else None
        return conversation(session, stored, self._replies.get(key or "", []), path,
                            secrets=(self.settings.api_key, self.settings.dashboard_token), **options)

    def status(self) -> Status:
        """Both servers: reachable or not, versions, capabilities, and this connection's state."""
        return runtime.run_sync(self._status())

    async def status_async(self) -> Status:
        """``await`` twin of :meth:`status`."""
        return await on_package_loop(self._status())

    async def _status(self) -> Status:
        info: dict[str, Any] = {"via": self.default_via, "session": self._current}
        api = await self._api_client()
        try:
            health = await api.health()
            info["api"] = {"url": self.settings.api_url, "ok": health.ok, "version": health.version}
            try:
                caps = await api.capabilities()
                info["api"]["features"] = sorted(k for k, v in caps.features.items() if v)
            except HermesError as exc:
                info["api"]["error"] = str(exc)
        except HermesError as exc:
            info["api"] = {"url": self.settings.api_url, "ok": False, "error": str(exc)}
        if self.settings.dashboard_token:
            try:
                conn = await self._dashboard_conn()
                info["dashboard"] = {"url": self.settings.dashboard_url, "ok": True, "connected": conn.connected}
                with contextlib.suppress(Exception):
                    info["dashboard"]["version"] = await _dashboard_version(self.settings)
            except HermesError as exc:
                info["dashboard"] = {"url": self.settings.dashboard_url, "ok": False, "error": str(exc)}
        else:
            info["dashboard"] = {"url": self.settings.dashboard_url, "ok": False,
                                 "error": "no token configured (HERMES_DASHBOARD_TOKEN)"}
        return Status(info)

    def check(self) -> Hermes:
        """Raise the server's error now if the configured default path is unusable (``connect(check=True)``)."""
        runtime.run_sync(self._check())
        return self

    async def _check(self) -> None:
        if self.default_via == "dashboard":
            await self._dashboard_conn()
        else:
            api = await self._api_client()
            await api.models()  # needs the key: a wrong one fails here

    def close(self) -> None:
        """Close the connections (later calls fail)."""
        if self._closed:
            return
        self._closed = True
        with contextlib.suppress(Exception):
            runtime.run_sync(self._aclose(), timeout=10)

    async def _aclose(self) -> None:
        for closer in (
            self._dashboard.close if self._dashboard else None,
            self._api.aclose if self._api else None,
            self._jobs_client.aclose if self._jobs_client else None,
        ):
            if closer is not None:
                with contextlib.suppress(Exception):
                    await closer()


async def _dashboard_version(settings: Settings) -> str | None:
    import httpx

    async with httpx.AsyncClient(trust_env=False, timeout=settings.connect_timeout) as http:
        data = (await http.get(f"{settings.dashboard_url}/api/status")).json()
    return data.get("version") if isinstance(data, dict) else None


def _warn_every_time(message: str, category: type[Warning], stacklevel: int) -> None:
    """``warnings.warn`` without the once-per-location memory of the default filter.

    Every ``%hermes`` warns from the same line, so ``warnings.warn`` would tell only the first cell why its buttons
    do not respond. Filters still apply (``ignore``, ``once``, ``error``); only the per-location registry is fresh.
    """
    frame = sys._getframe(stacklevel)
    warnings.warn_explicit(
        message, category, frame.f_code.co_filename, frame.f_lineno,
        module=frame.f_globals.get("__name__"), registry={}, module_globals=frame.f_globals,
    )


# --- small result types with notebook reprs ------------------------------------------------------------------


class _Table(list):  # type: ignore[type-arg]
    """A list of row dicts that shows as a table."""

    def __init__(
        self, rows: list[dict[str, Any]], *, columns: Sequence[str], current: str | None = None,
        empty: str = "no sessions yet",
    ) -> None:
        super().__init__(rows)
        self.columns = tuple(columns)
        self.current = current
        self.empty = empty

    def _cell(self, value: Any) -> str:
        text = "" if value is None else str(value)
        return text if len(text) <= 60 else text[:57] + "..."

    def _repr_markdown_(self) -> str:
        if not self:
            return f"_{self.empty}_"
        head = "| " + " | ".join(self.columns) + " |\n|" + "---|" * len(self.columns) + "\n"
        rows = []
        for row in self:
            cells = [self._cell(row.get(c)).replace("|", "\\|").replace("\n", " ") for c in self.columns]
            if row.get("id") == self.current:
                cells[0] = f"**{cells[0]}** (current)"
            rows.append("| " + " | ".join(cells) + " |")
        return head + "\n".join(rows)

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(str(self))

    def __str__(self) -> str:
        if not self:
            return f"({self.empty})"
        lines = []
        for row in self:
            mark = "*" if row.get("id") == self.current else " "
            rest = "  ".join(self._cell(row.get(c)) for c in self.columns[1:] if row.get(c) not in (None, ""))
            lines.append(f"{mark} {row.get(self.columns[0])}  {rest}")
        return "\n".join(lines)


class Transcript(list):  # type: ignore[type-arg]
    """Message dicts that display as a static transcript."""

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        return transcript_bundle(self)


class Status(dict):  # type: ignore[type-arg]
    """``Hermes.status()``: a dict that reads well in a notebook."""

    def lines(self) -> list[str]:
        """One line per server, then the connection state."""
        out = []
        for name in ("api", "dashboard"):
            info = self.get(name) or {}
            state = "ok" if info.get("ok") else f"unavailable ({info.get('error', 'unknown')})"
            version = f", Hermes {info['version']}" if info.get("version") else ""
            extra = ""
            if name == "dashboard" and info.get("ok"):
                extra = ", connected" if info.get("connected") else ", not connected"
            label = "API Server" if name == "api" else "Dashboard"
            out.append(f"{label}: {info.get('url')} {state}{version}{extra}")
            if info.get("features"):
                out.append(f"  features: {', '.join(info['features'])}")
        out.append(f"default path: {self.get('via')}; current session: {self.get('session') or 'none yet'}")
        return out

    def __str__(self) -> str:
        return "\n".join(self.lines())

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(str(self))

    def _repr_markdown_(self) -> str:
        return "\n".join(f"- {line}" for line in self.lines())


# --- entry point --------------------------------------------------------------------------------------------


def connect(settings: Settings | None = None, *, check: bool = False, **kwargs: Any) -> Hermes:
    """Return a :class:`Hermes` for the configured servers.

    Settings come from ``settings``, else keyword arguments (``api_url``, ``api_key``, ``dashboard_url``,
    ``dashboard_token``, timeouts), then ``HERMES_*`` environment variables, then loopback defaults. Nothing
    is contacted until first use unless ``check=True``.
    """
    if settings is None:
        settings = Settings.resolve(**kwargs)
    elif kwargs:
        settings = settings.with_(**kwargs)
    hermes = Hermes(settings)
    return hermes.check() if check else hermes
