"""The notebook facade: ``hermes_notebook.connect()`` -> :class:`Hermes`, whose ``ask`` returns a :class:`Reply`.

Where things run: every network call runs on the package loop (:mod:`hermes_notebook.runtime`). A turn is a
:class:`TurnHandle` driven there by the turn runner (:mod:`.runner`); notebook code either blocks on it (``ask``,
``%hermes``: :mod:`.wait`) or keeps it (``%hermes -b``).

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
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, overload

from .. import runtime
from ..errors import HermesError, HermesNotFoundError, HermesTimeoutError, HermesUsageError
from ..inert import redact_url
from ..runtime import on_package_loop
from ..settings import Settings
from ..turns import fold_history
from . import context as _context
from .context import PromptPreview
from .export import DEFAULT_PATH, conversation
from .handle import VIAS, TurnHandle, TurnOptions, Via
from .interactions import Policy, check_policy
from .presenters import WidgetPresenter, presenter_for
from .results import Reply, Status, Table, Transcript
from .rewind import Rewinding
from .runner import TurnRunner
from .session_tools import SessionTools
from .sessions import Resume, SessionBook, resume
from .status import gather_status
from .wait import run_blocking

if TYPE_CHECKING:
    from ..client.api import ApiClient
    from ..client.dashboard import DashboardConnection
    from ..client.jobs import JobsClient
    from ..jobs.api import JobsAPI
    from ..kernel.share import KernelShare
    from ..widgets.chat import Chat

__all__ = ["Hermes", "Reply", "TurnHandle", "connect", "resume"]

log = logging.getLogger(__name__)


class Hermes(SessionTools, Rewinding):
    """Hermes from notebook code: ``ask`` a prompt, open a ``chat``, manage ``jobs``, list ``sessions``; ``models``,
    ``set_model``, ``usage`` and Hermes' own ``command``s come from :class:`~.session_tools.SessionTools`, ``undo``,
    ``branch``, ``regenerate`` and ``edit_last`` from :class:`~.rewind.Rewinding`.

    Blocking methods are safe in a Jupyter cell (they wait on the package loop's thread); ``ask_async`` is
    the awaitable twin. Consecutive asks continue one session unless ``new=True`` or ``session=`` says
    otherwise. ``session="NAME"`` names a session of this connection (its id, or a name: a new session on first
    use, titled NAME on the Dashboard), never someone's stored one; ``session=hn.resume(id_or_title)`` joins a
    stored session, e.g. one ``sessions()`` lists. The same holds for ``chat``, ``history``, ``export``.
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
        self._book = SessionBook()
        self._runner = TurnRunner(self._book, dashboard=self._dashboard_conn, api=self._api_client,
                                  secrets=(self.settings.api_key, self.settings.dashboard_token))
        self._jobs: JobsAPI | None = None
        self._closed = False
        #: The last turn started (``%hermes stop`` stops it).
        self.last_turn: TurnHandle | None = None

    def __repr__(self) -> str:
        dashboard = redact_url(self.settings.dashboard_url) if self.settings.dashboard_token else "not configured"
        return (f"<Hermes api={redact_url(self.settings.api_url)} dashboard={dashboard} via={self.default_via} "
                f"session={self._book.current or 'none yet'}>")

    @property
    def session_id(self) -> str | None:
        """The session consecutive asks continue (its stored id), None before the first ask."""
        return self._book.current

    # --- asking ---

    @overload
    def ask(
        self, prompt: str | PromptPreview, session: str | None = None, via: Via | None = None,
        approve: Policy = None, clarify: Policy = None, new: bool = False, instructions: str | None = None,
        model: str | None = None, images: Any = None, timeout: float | None = None, *, preview: Literal[True], context: bool = False,
        files: Any = None,
    ) -> PromptPreview: ...

    @overload
    def ask(
        self, prompt: str | PromptPreview, session: str | None = None, via: Via | None = None,
        approve: Policy = None, clarify: Policy = None, new: bool = False, instructions: str | None = None,
        model: str | None = None, images: Any = None, timeout: float | None = None, preview: Literal[False] = False, context: bool = False,
        files: Any = None,
    ) -> Reply: ...

    def ask(
        self,
        prompt: str | PromptPreview,
        session: str | None = None,
        via: Via | None = None,
        approve: Policy = None,
        clarify: Policy = None,
        new: bool = False,
        instructions: str | None = None,
        model: str | None = None,
        images: Any = None,
        timeout: float | None = None,
        preview: bool = False,
        context: bool = False,
        files: Any = None,
    ) -> Reply | PromptPreview:
        """Send a prompt and wait for the whole turn; returns the :class:`Reply`.

        In a notebook the turn streams into a live view whose buttons answer approvals and questions while
        this call waits; ``approve=``/``clarify=`` answer them unattended ("once", "deny", a choice, or a
        callable given the request). ``via="api"`` uses the API Server's runs (no clarify there). After
        ``timeout`` seconds (default :attr:`timeout`) the turn is interrupted and ``HermesTimeoutError`` raised.
        The prompt is sent as written, braces and all. ``context=True`` (or ``hn.fill(prompt)``) fills
        ``{name}``, ``{obj.attr}``, ``{d['k']}`` with scrubbed summaries of the caller's values (``{{`` is a
        literal brace); only for text you wrote. ``preview=True`` returns what would be sent and sends nothing;
        a :class:`PromptPreview` given as the prompt is sent as it is (its text and images). ``files=``: text
        files and PDFs (paths or ``(name, bytes)``) the Dashboard stages for the model to read.
        """
        prepared = _context.prepare_ask(prompt, context=context, secrets=self._secrets())
        if preview:
            return prepared
        options = self._options(prepared.text, session, via, approve, clarify, new, instructions, model,
                                _context.merge_images(prepared, images), filled=len(prepared.values), files=files)
        handle = self.last_turn = TurnHandle(options, self._runner.run)
        return run_blocking(handle, timeout=self.timeout if timeout is None else timeout)

    @overload
    async def ask_async(
        self, prompt: str | PromptPreview, session: str | None = None, via: Via | None = None,
        approve: Policy = None, clarify: Policy = None, new: bool = False, instructions: str | None = None,
        model: str | None = None, images: Any = None, timeout: float | None = None, *, preview: Literal[True], context: bool = False,
        files: Any = None,
    ) -> PromptPreview: ...

    @overload
    async def ask_async(
        self, prompt: str | PromptPreview, session: str | None = None, via: Via | None = None,
        approve: Policy = None, clarify: Policy = None, new: bool = False, instructions: str | None = None,
        model: str | None = None, images: Any = None, timeout: float | None = None, preview: Literal[False] = False, context: bool = False,
        files: Any = None,
    ) -> Reply: ...

    async def ask_async(
        self,
        prompt: str | PromptPreview,
        session: str | None = None,
        via: Via | None = None,
        approve: Policy = None,
        clarify: Policy = None,
        new: bool = False,
        instructions: str | None = None,
        model: str | None = None,
        images: Any = None,
        timeout: float | None = None,
        preview: bool = False,
        context: bool = False,
        files: Any = None,
    ) -> Reply | PromptPreview:
        """``await`` twin of :meth:`ask`. Buttons work while it waits only where the kernel handles widget
        messages during an ``await`` (ipykernel >= 7.4); use policies elsewhere."""
        prepared = _context.prepare_ask(prompt, context=context, secrets=self._secrets())
        if preview:
            return prepared
        options = self._options(prepared.text, session, via, approve, clarify, new, instructions, model,
                                _context.merge_images(prepared, images), filled=len(prepared.values), files=files)
        handle = TurnHandle(options, self._runner.run)
        presenter = presenter_for(handle, blocking=False)
        handle.buttons = presenter.buttons
        handle.start()
        limit = self.timeout if timeout is None else timeout
        try:
            reply = await asyncio.wait_for(runtime.wrap_future(handle.future), limit or None)
        except asyncio.TimeoutError:
            handle.stop()
            raise HermesTimeoutError(f"the turn did not finish within {limit:g} s; it was interrupted") from None
        except asyncio.CancelledError:
            handle.stop()
            raise
        presenter.finish(reply)
        return reply

    def start(self, prompt: str | PromptPreview, *, context: bool = False, **kwargs: Any) -> TurnHandle:
        """Start a turn and return its :class:`TurnHandle` at once (``%hermes -b``); same options as ``ask``
        (the prompt is sent as written unless ``context=True`` or ``hn.fill``)."""
        prepared = _context.prepare_ask(prompt, context=context, secrets=self._secrets())
        kwargs["images"] = _context.merge_images(prepared, kwargs.get("images"))
        options = self._options(prepared.text, filled=len(prepared.values), **kwargs)
        handle = TurnHandle(options, self._runner.run)
        presenter = presenter_for(handle, blocking=False)
        handle.buttons = presenter.buttons
        self.last_turn = handle.start()
        if isinstance(presenter, WidgetPresenter):
            def finish(done: concurrent.futures.Future[Reply]) -> None:
                if not done.cancelled() and done.exception() is None:
                    with contextlib.suppress(Exception):
                        presenter.finish(done.result())

            handle.future.add_done_callback(finish)
        return handle

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
        filled: int = 0,
        files: Any = None,
    ) -> TurnOptions:
        if self._closed:
            raise HermesUsageError("this Hermes connection was closed; call hermes_notebook.connect() again")
        if not isinstance(prompt, str) or not prompt.strip():
            raise HermesUsageError("the prompt is empty")
        path: str = via if via is not None else ("api" if instructions is not None else self.default_via)
        if path not in VIAS:
            raise HermesUsageError(f"via must be 'dashboard' or 'api', not {path!r}")
        check_policy("approve", approve)
        check_policy("clarify", clarify)
        if path == "api":
            if clarify is not None:
                raise HermesUsageError(
                    "clarify is not available with via='api': the API Server's runs have no clarify questions "
                    "(use via='dashboard')"
                )
            if images or files:
                raise HermesUsageError("images and files need via='dashboard' (API Server runs take text only)")
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
        if new and isinstance(session, Resume):
            raise HermesUsageError("new=True starts a session and hn.resume() joins a stored one: pass one of them")
        return TurnOptions(prompt, session, path, approve, clarify, bool(new), instructions, model, images, filled,
                           files=files, secrets=self._secrets())

    def _secrets(self) -> tuple[object, ...]:
        """What :func:`~hermes_notebook.scrub.scrub` removes from filled prompts: this connection's key and token."""
        return (self.settings.api_key, self.settings.dashboard_token)

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
        """A live chat widget on a Dashboard session: a new one, or the session ``session`` names as for
        :meth:`ask` (this connection's, started and titled on first use; ``hn.resume(id_or_title)`` a stored one)."""
        from ..kernel.share import KERNEL
        from ..widgets.chat import Chat
        from ..widgets.chat_kernel import follow_kernel_modes

        conn = runtime.run_sync(self._dashboard_conn())
        ref = None if session is None else runtime.run_sync(self._book.chat_ref(conn, session))
        chat = Chat(conn, session=ref, secrets=(self.settings.api_key, self.settings.dashboard_token))
        follow_kernel_modes(chat, KERNEL, conn)  # the header shows what Hermes may do in this kernel
        return chat

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
        widget = Jobs(self)
        if self.settings.dashboard_token:
            runtime.submit(self._follow_job_changes(widget))
        return widget

    async def _follow_job_changes(self, widget: Any) -> None:
        """A newer Dashboard broadcasts ``cron.changed``: the jobs widget refreshes on it (else it keeps polling)."""
        try:
            conn = await self._dashboard_conn()
        except HermesError as exc:
            log.info("jobs widget: no Dashboard change feed (%s); refreshing on a timer only", exc)
            return
        widget.follow(conn.on_change)

    def share_kernel(self, read: bool | str = False, run: str = "ask", edit: str = "propose",
                     run_limit: float = 120.0) -> KernelShare:
        """Let Hermes use this kernel through tools during this connection's Dashboard turns (chat and asks).

        The permission modes (kernel/grants.py): ``read=True`` (or ``"on"``) turns on ``list_variables``,
        ``describe``, ``read_cells``, ``read_output`` and ``list_cells`` (off by default); ``run`` is ``"ask"`` (a
        Run card with the whole code each time), ``"allow"`` (no card for this session, until revoked:
        ``share.grants.revoke()``, the chat header, or a new policy) or ``"never"``; ``edit`` is ``"propose"``
        (cell changes wait on the cell for Keep/Discard) or ``"off"``; ``run_limit``: seconds an approved run may
        take, waiting for a busy cell included, before it is stopped. A new call replaces the policy whole.
        Results are scrubbed like exports. Needs ``pip install 'hermes-notebook[tools]'``; undone by :meth:`close`."""
        from ..kernel.share import KERNEL

        if self._closed:
            raise HermesUsageError("this Hermes connection was closed; call hermes_notebook.connect() again")
        if not self.settings.dashboard_token:
            raise HermesUsageError("kernel tools need the Dashboard: set HERMES_DASHBOARD_TOKEN")
        share = KERNEL.share(self, self._dashboard_conn, dashboard_url=self.settings.dashboard_url, read=read, edit=edit,
                             run=run, run_limit=run_limit, secrets=(self.settings.api_key, self.settings.dashboard_token))
        if not share.registered:
            print(share.instructions())
        return share

    def sessions(self, limit: int = 50) -> Table:
        """Stored sessions, most recently active first (``id``, ``title``, ``preview``, ...)."""
        return runtime.run_sync(self._sessions(limit))

    async def sessions_async(self, limit: int = 50) -> Table:
        """``await`` twin of :meth:`sessions`."""
        return await on_package_loop(self._sessions(limit))

    async def _sessions(self, limit: int) -> Table:
        if self.settings.dashboard_token:
            conn = await self._dashboard_conn()
            rows = (await conn.sessions(limit))[:limit]
        else:
            api = await self._api_client()
            rows = [dict(s.raw) for s in await api.sessions(limit=min(limit, 200))]
        keep = ("id", "title", "preview", "message_count", "source", "started_at")
        return Table([{k: row.get(k) for k in keep} for row in rows], columns=keep, current=self._book.current)

    def history(self, session: str | None = None) -> Transcript:
        """A session's transcript as message dicts: the current session by default, this connection's session
        called ``session``, or a stored one with ``hn.resume(id)``."""
        return runtime.run_sync(self._history(session))

    async def history_async(self, session: str | None = None) -> Transcript:
        """``await`` twin of :meth:`history`."""
        return await on_package_loop(self._history(session))

    async def _history(self, session: str | None) -> Transcript:
        key = self._book.key(session)
        if key is None:
            return Transcript([])
        if self.settings.dashboard_token:
            conn = await self._dashboard_conn()
            return Transcript([m.to_dict() for m in await conn.history(key)])
        api = await self._api_client()
        try:
            rows = [dict(m.raw) for m in await api.session_messages(key)]
        except HermesNotFoundError:
            rows = []
        return Transcript([m.to_dict() for m in fold_history(rows)])

    def compress(self, session: str | None = None, focus_topic: str | None = None) -> dict[str, Any]:
        """Compress a Dashboard session's context now (the current session by default): Hermes summarizes earlier
        messages, and the session's next reply opens with a marker saying so. Returns the server's counts
        (``before_messages``, ``after_messages``, ``before_tokens``, ``after_tokens``, ``summary``, ``usage``)."""
        return runtime.run_sync(self._compress(session, focus_topic))

    async def _compress(self, session: str | None, focus_topic: str | None) -> dict[str, Any]:
        if not self.settings.dashboard_token:
            raise HermesUsageError("compress() needs the Dashboard (a dashboard token): the API Server cannot compress")
        key = self._book.key(session)
        if key is None:
            raise HermesUsageError("there is no session to compress yet: ask something first, or name a session")
        conn = await self._dashboard_conn()
        return await conn.compress(await self._book.known_dashboard_ref(conn, key), focus_topic)

    def export(self, session: Any = None, path: str | Path = DEFAULT_PATH, **options: Any) -> Path:
        """Write a conversation (a session as for :meth:`history`, None: the current one; a Reply; replies or message dicts) to
        ``path`` as Markdown, HTML or ``.ipynb`` by suffix (``format=``, ``title=``); it holds no secret. An existing
        file is replaced only with ``overwrite=True``; a symbolic link never is written through."""
        key = self._book.key(session if isinstance(session, str) else None)
        stored = self.history(session) if session is None or isinstance(session, str) else None
        return conversation(session, stored, self._runner.replies.get(key or "", []), path,
                            secrets=(self.settings.api_key, self.settings.dashboard_token), **options)

    def status(self) -> Status:
        """Both servers: reachable or not, versions, capabilities, and this connection's state."""
        return runtime.run_sync(self._status())

    async def status_async(self) -> Status:
        """``await`` twin of :meth:`status`."""
        return await on_package_loop(self._status())

    async def _status(self) -> Status:
        from ..kernel.share import KERNEL

        status = await gather_status(self.settings, self.default_via, self._book.current, self._api_client,
                                     self._dashboard_conn)
        share = KERNEL.share_of(self)
        status["kernel"] = None if share is None else str(share).split("\n", 1)[0]
        return status

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
        from ..kernel.share import KERNEL  # unregisters the kernel tools first, while the connection is open

        KERNEL.unshare(self, self.settings.dashboard_url)
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


# --- entry point --------------------------------------------------------------------------------------------


def connect(settings: Settings | None = None, *, check: bool = False, **kwargs: Any) -> Hermes:
    """Return a :class:`Hermes` for the configured servers.

    Settings come from ``settings``, else keyword arguments (``api_url``, ``api_key``, ``dashboard_url``,
    ``dashboard_token``, timeouts), then ``HERMES_*`` environment variables, then loopback defaults. Nothing
    is contacted until first use unless ``check=True``. A key or token an HTTP header cannot carry (e.g. the
    newline ``open("key").read()`` keeps) raises :class:`HermesUsageError` here, naming the setting, not its value.
    """
    if settings is None:
        settings = Settings.resolve(**kwargs)
    elif kwargs:
        settings = settings.with_(**kwargs)
    hermes = Hermes(settings)
    return hermes.check() if check else hermes
