"""The notebook facade: ``hermes_notebook.connect()`` -> :class:`Hermes`, whose ``ask`` returns a
:class:`Reply`.

``Hermes`` is a face over one :class:`~hermes_notebook.session.Conversation`, which owns every session
operation (the Chat widget and ``%hermes`` use the same one): it takes keyword options and shows results. Each
operation is ``name_async`` (on the package loop whichever loop awaits it,
:func:`~hermes_notebook.runtime.on_loop`), and ``name = blocking(name_async)``. Only asks differ: a blocking
ask waits on the cell's own thread so the live view's buttons keep working (:mod:`.wait`), so
``ask``/``ask_async`` (and ``regenerate``, ``edit_last``, ``command``, which may ask) share
:meth:`Hermes._turn`; tests/test_conventions.py checks every pair's signatures. Who answers an interaction (a
policy, the live view's buttons, a text prompt, else the server's timeout): :mod:`.interactions`.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, overload

from .. import reproducibility
from ..errors import HermesUsageError
from ..export import DEFAULT_PATH, conversation
from ..kernel.grants import Modes
from ..kernel.share import KERNEL, KernelShare
from ..runtime import blocking, caller_first, on_loop
from ..session import Conversation, SteerOutcome, resume
from ..settings import Settings
from . import context as _context
from . import session_views as views
from .asking import AskOptions, turn_options
from .context import PromptPreview
from .handle import TurnHandle
from .interactions import Policy
from .mapping import map_awaited, map_blocking, plan_map
from .results import KEPT_REPLIES, Reply, Status, Table, Transcript
from .session_results import CommandResult, SessionUsage, command_result, models_table, usage_of
from .status import facade_repr, facade_status
from .wait import run_awaited, run_blocking, run_detached

if TYPE_CHECKING:
    from typing_extensions import Unpack  # typing's own from Python 3.11 (PEP 692); annotations only here

    from ..jobs.api import JobsAPI
    from ..widgets.chat import Chat
    from ..widgets.jobs import Jobs

__all__ = ["Hermes", "Reply", "TurnHandle", "resume"]


class Hermes:
    """Hermes from notebook code: ``ask`` a prompt, open a ``chat``, manage ``jobs``, list ``sessions`` and
    ``profiles``; a session's models, usage, commands, rewinding (``undo``, ``branch``, ``rollback``,
    ``changes``...), ``steer`` and ``history``. Every method has an ``*_async`` twin; options are keywords.

    Blocking methods are safe in a Jupyter cell (they wait on the package loop's thread). Consecutive asks
    continue one session unless ``new=True`` or ``session=`` says otherwise. ``session="NAME"`` names a
    session of this connection (its id, or a name: a new session on first use, titled NAME on the Dashboard),
    never someone's stored one; ``session=hn.resume(id_or_title)`` joins a stored session, e.g. one
    ``sessions()`` lists. The same holds for ``chat``, ``history``, ``export`` and the session operations.
    """

    #: Defaults for asks and ``map`` (an ask's own options win): ``show=False`` makes no view, so approvals
    #: and questions need policies. ``last_map``: what the last ``map`` returned (also when interrupted).
    show: bool = True
    approve: Policy = None
    clarify: Policy = None
    last_map: Any = None

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        #: "dashboard" when a Dashboard token is configured, else "api".
        self.default_via: str = "dashboard" if settings.dashboard_token else "api"
        #: Seconds after which a blocking ask interrupts the turn (None: no limit).
        self.timeout: float | None = None
        #: The one owner of this connection's sessions and turns (the chats it opens share it).
        self.conversation = Conversation(settings)
        self._jobs: JobsAPI | None = None
        self._secrets = (settings.api_key, settings.dashboard_token)  # what every output of ours scrubs
        self._closed = False
        #: The newest replies seen live, for export() (their stored copies lack approvals and usage).
        self._replies: deque[Reply] = deque(maxlen=KEPT_REPLIES)
        #: The last turn started (``%hermes stop`` stops it).
        self.last_turn: TurnHandle | None = None

    def __repr__(self) -> str:
        return facade_repr(self)

    @property
    def session_id(self) -> str | None:
        """The session consecutive asks continue (its stored id), None before the first ask."""
        return self.conversation.current

    # --- asking ---

    @overload
    def ask(
        self, prompt: str | PromptPreview, *, preview: Literal[True], **options: Unpack[AskOptions]
    ) -> PromptPreview: ...
    @overload
    def ask(
        self, prompt: str | PromptPreview, *, preview: Literal[False] = ..., **options: Unpack[AskOptions]
    ) -> Reply: ...

    def ask(
        self,
        prompt: str | PromptPreview,
        *,
        session: str | None = None,
        via: str | None = None,
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
        show: bool | None = None,
    ) -> Reply | PromptPreview:
        """Send a prompt and wait for the whole turn; returns the :class:`Reply`.

        The turn streams into a live view whose buttons answer approvals and questions while this call waits;
        ``approve=``/``clarify=`` answer them unattended ("once", "deny", a choice, or a callable given the
        request). ``via="api"``: the API Server's runs (no clarify). After ``timeout`` s the turn is
        interrupted (``HermesTimeoutError``). The prompt is sent as written; ``context=True`` (or ``hn.fill``)
        fills ``{name}``, ``{obj.attr}``, ``{d['k']}`` with scrubbed summaries of your values.
        ``preview=True`` sends nothing and returns what would be sent. ``files=``: text files and PDFs (paths
        or ``(name, bytes)``) for the model. ``show=False``: no view; then policies must answer."""
        # prepare_ask reads our caller's frame, so it is called here, not in _turn
        prepared = _context.prepare_ask(prompt, context=context, secrets=self._secrets)
        turn = self._turn(
            prepared,
            preview,
            session=session,
            via=via,
            approve=approve,
            clarify=clarify,
            new=new,
            instructions=instructions,
            model=model,
            images=images,
            files=files,
            show=show,
        )
        if isinstance(turn, PromptPreview):
            return turn
        self.last_turn = turn
        return run_blocking(turn, timeout=self.timeout if timeout is None else timeout)

    @overload
    async def ask_async(
        self, prompt: str | PromptPreview, *, preview: Literal[True], **options: Unpack[AskOptions]
    ) -> PromptPreview: ...
    @overload
    async def ask_async(
        self, prompt: str | PromptPreview, *, preview: Literal[False] = ..., **options: Unpack[AskOptions]
    ) -> Reply: ...

    async def ask_async(
        self,
        prompt: str | PromptPreview,
        *,
        session: str | None = None,
        via: str | None = None,
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
        show: bool | None = None,
    ) -> Reply | PromptPreview:
        """``await`` twin of :meth:`ask`. Buttons work while it waits only where the kernel handles widget
        messages during an ``await`` (ipykernel >= 7.4); use policies elsewhere."""
        # prepare_ask reads our caller's frame, so it is called here, not in _turn
        prepared = _context.prepare_ask(prompt, context=context, secrets=self._secrets)
        turn = self._turn(
            prepared,
            preview,
            session=session,
            via=via,
            approve=approve,
            clarify=clarify,
            new=new,
            instructions=instructions,
            model=model,
            images=images,
            files=files,
            show=show,
        )
        if isinstance(turn, PromptPreview):
            return turn
        return await run_awaited(turn, timeout=self.timeout if timeout is None else timeout)

    def start(self, prompt: str | PromptPreview, *, context: bool = False, **options: Any) -> TurnHandle:
        """Start a turn and return its :class:`TurnHandle` at once (``%hermes -b``); same options as ``ask``
        (the prompt is sent as written unless ``context=True`` or ``hn.fill``)."""
        handle = self._turn(
            _context.prepare_ask(prompt, context=context, secrets=self._secrets), False, **options
        )
        assert isinstance(handle, TurnHandle)
        run_detached(handle)
        self.last_turn = handle
        return handle

    def map(self, prompts: Any, *, concurrency: int = 4, resume: Any = None, **options: Any) -> Any:
        """Ask each of ``prompts`` (a list; a Series gives a DataFrame), ``concurrency`` at a time, each in a
        new session, under one progress bar with Stop: the replies in input order, a failure as a
        ``MapFailure`` in its place (``resume=`` runs only those). Options: ``via``, ``approve``, ``clarify``
        (both needed: no card shows), ``instructions``, ``model``, ``timeout`` (per prompt), ``show``."""
        plan = plan_map(self, prompts, self._turn, concurrency=concurrency, resume=resume, **options)
        return map_blocking(plan)

    async def map_async(
        self, prompts: Any, *, concurrency: int = 4, resume: Any = None, **options: Any
    ) -> Any:
        """``await`` twin of :meth:`map`."""
        plan = plan_map(self, prompts, self._turn, concurrency=concurrency, resume=resume, **options)
        return await map_awaited(plan)

    def _turn(self, prepared: PromptPreview, preview: bool, **options: Any) -> TurnHandle | PromptPreview:
        """The prompt as it will be sent (the preview), or its turn, checked and ready to start."""
        if preview:
            return prepared
        if self._closed:
            raise HermesUsageError("this Hermes connection was closed; call hermes_notebook.connect() again")
        options["images"] = _context.merge_images(prepared, options.get("images"))
        options |= {n: getattr(self, n) for n in ("show", "approve", "clarify") if options.get(n) is None}
        checked = turn_options(
            self.settings, self.default_via, prepared.text, filled=len(prepared.values), **options
        )
        return TurnHandle(checked, self.conversation, on_reply=self._replies.append)

    # --- a session's model, usage, Hermes' own commands, rewinding, files and steering ---

    @on_loop
    async def models_async(self) -> Table:
        """The models Hermes offers (``model``, ``provider``, ``current``), for the current session when there
        is one."""
        return models_table(await self.conversation.models())

    models = blocking(models_async)

    @on_loop
    async def set_model_async(
        self, name: str, *, session: str | None = None, confirm: bool = False
    ) -> dict[str, Any]:
        """Switch a Dashboard session's model (the current one; started now if none) for later turns, as
        ``/model``
        does: Hermes' answer (``value``, ``warning``, ``scope``). An expensive model needs
        ``confirm=True``."""
        return await self.conversation.set_model(name, session, confirm=confirm)

    set_model = blocking(set_model_async)

    @on_loop
    async def usage_async(self, session: str | None = None) -> SessionUsage:
        """Tokens, prompt cache, cost and the context window of a session (the current one by default)."""
        return usage_of(await self.conversation.usage(session))

    usage = blocking(usage_async)

    def command(self, line: str, *, session: str | None = None) -> CommandResult | Reply:
        """Run a Hermes slash command (``"/help"``, ``"/model"`` ...) on a Dashboard session: its output as a
        :class:`CommandResult` (inert), or, for one that asks to send a prompt (a skill, ``/plan``), that
        turn's Reply."""
        outcome = self._command(line, session=session)
        return self.ask(outcome, session=session) if isinstance(outcome, str) else outcome

    async def command_async(self, line: str, *, session: str | None = None) -> CommandResult | Reply:
        """``await`` twin of :meth:`command`."""
        outcome = await self._command_async(line, session=session)
        return await self.ask_async(outcome, session=session) if isinstance(outcome, str) else outcome

    @on_loop
    async def _command_async(self, line: str, *, session: str | None = None) -> CommandResult | str:
        return command_result(await self.conversation.command(line, session), self._secrets)

    _command = blocking(_command_async)

    @on_loop
    async def undo_async(self, session: str | None = None, *, files: bool = False) -> int:
        """Drop the session's last exchange (your last prompt and Hermes' reply) from the model's context and
        the stored transcript: how many stored rows went (0: nothing to undo). ``files=True`` also puts back
        the files that turn changed, where Hermes checkpointed them (named in the result's ``.files``)."""
        return await self.conversation.undo(session, files=files)

    undo = blocking(undo_async)

    @on_loop
    async def branch_async(
        self, session: str | None = None, *, at: Any = None, name: str | None = None, files: bool = False
    ) -> str:
        """Copy the session into a new one and continue there: the new session's stored id (now current).
        ``at``: a message (id or dict from :meth:`history`) after which exchanges are left out, or ``-N``: the
        last N (None: all kept). ``name``: its title. ``files``: the files changed since go back too (the
        result's ``.files``)."""
        return await self.conversation.branch(session, at=views.message_id(at), name=name, files=files)

    branch = blocking(branch_async)

    def regenerate(self, session: str | None = None, **ask_options: Any) -> Reply:
        """Undo the last exchange and send its prompt again: a new reply to the same question (``ask``
        options)."""
        return self.ask(self._resend(session, None), session=session, via="dashboard", **ask_options)

    async def regenerate_async(self, session: str | None = None, **ask_options: Any) -> Reply:
        """``await`` twin of :meth:`regenerate`."""
        text = await self._resend_async(session, None)
        return await self.ask_async(text, session=session, via="dashboard", **ask_options)

    def edit_last(self, text: str, *, session: str | None = None, **ask_options: Any) -> Reply:
        """Replace your last prompt with ``text``: the last exchange is undone and ``text`` sent in its
        place."""
        return self.ask(self._resend(session, text), session=session, via="dashboard", **ask_options)

    async def edit_last_async(self, text: str, *, session: str | None = None, **ask_options: Any) -> Reply:
        """``await`` twin of :meth:`edit_last`."""
        sent = await self._resend_async(session, text)
        return await self.ask_async(sent, session=session, via="dashboard", **ask_options)

    @on_loop
    async def _resend_async(self, session: str | None, text: str | None) -> str:
        return await self.conversation.resend(session, text)

    _resend = blocking(_resend_async)

    @on_loop
    async def compress_async(
        self, session: str | None = None, *, focus_topic: str | None = None
    ) -> dict[str, Any]:
        """Compress a Dashboard session's context now (the current one by default): Hermes summarizes earlier
        messages (the next reply opens with a marker); the server's counts (``before_messages``,
        ``after_tokens``...)."""
        return await self.conversation.compress(session, focus_topic)

    compress = blocking(compress_async)

    @on_loop
    async def rollback_async(
        self, session: str | None = None, *, checkpoint: Any = None, file: str | None = None
    ) -> Table | views.Restored:
        """The session's file checkpoints (a Table, newest first); with ``checkpoint`` (its number, hash or
        row), put ``file`` back as it was then, or without ``file`` the whole folder and the session's last
        turn."""
        return await views.rollback(self.conversation, session, checkpoint=checkpoint, file=file)

    rollback = blocking(rollback_async)

    @on_loop
    async def changes_async(self, session: str | None = None, *, checkpoint: Any = None) -> views.Changes:
        """The files the session's last turn changed (or changed since ``checkpoint``), with a diff per
        file."""
        return views.Changes(await self.conversation.changes(session, checkpoint=checkpoint))

    changes = blocking(changes_async)

    @on_loop
    async def steer_async(self, text: str, *, session: str | None = None) -> SteerOutcome:
        """Guide the session's running turn: Hermes adds ``text`` to its next tool result (``status``:
        "queued")."""
        return await self.conversation.steer(session, text)

    steer = blocking(steer_async)

    # --- sessions and history ---

    @on_loop
    async def sessions_async(self, *, limit: int = 50) -> Table:
        """Stored sessions, most recently active first (``id``, ``title``, ``preview``, ...)."""
        return views.sessions_table(await self.conversation.sessions(limit), self.conversation.current)

    sessions = blocking(sessions_async)

    @on_loop
    async def history_async(self, session: str | None = None, *, images: bool = False) -> Transcript:
        """A session's transcript as message dicts: the current session by default, this connection's session
        called ``session``, or a stored one with ``hn.resume(id)``; ``images``: with the bytes of images
        Hermes made."""
        return Transcript(await self.conversation.history(session, images=images))

    history = blocking(history_async)

    def export(self, session: Any = None, path: str | Path = DEFAULT_PATH, **options: Any) -> Path:
        """Write a conversation (a session as for :meth:`history`; a Reply; replies or message dicts) to
        ``path`` as Markdown, HTML or ``.ipynb`` by suffix (``format=``, ``title=``), with no secret;
        ``overwrite=True`` replaces."""
        key = self.conversation.book.key(session if isinstance(session, str) else None)
        stored = (
            self.history(session, images=bool(options.get("images")))
            if isinstance(session, str | None)
            else None
        )
        replies = [r for r in self._replies if (r.session_id or None) == key]
        return conversation(session, stored, replies, path, secrets=self._secrets, **options)

    @on_loop
    async def profiles_async(self) -> Table:
        """The profiles this Hermes serves (``name``, ``default``, ``model``...); ``connect(profile=NAME)``
        picks one."""
        return views.profiles_table(await self.conversation.profiles(), self.settings.profile)

    profiles = blocking(profiles_async)

    # --- widgets, jobs, the kernel's tools ---

    def chat(self, session: str | None = None) -> Chat:
        """A live chat widget on a Dashboard session (a new one, or ``session`` as for :meth:`ask`) over this
        connection's conversation (its prompts and your asks take turns) until its picker switches profile."""
        return views.open_chat(self, session, secrets=self._secrets)

    @property
    def jobs(self) -> JobsAPI:
        """Cron jobs: ``list``, ``get``, ``create``, ``update``, ``pause``, ``resume``, ``run``, ``delete`` (+
        ``*_async``)."""
        if self._jobs is None:
            from ..jobs.api import JobsAPI

            self._jobs = JobsAPI(self.settings, self.conversation.api)
        return self._jobs

    def jobs_widget(self) -> Jobs:
        """The jobs widget (``hn.Jobs``) over ``jobs``; a newer Dashboard's ``cron.changed`` refreshes it."""
        return views.open_jobs(self)

    def _attach_kernel(self, **modes: Any) -> None:  # share_kernel's first step, on the caller's thread
        if self._closed:
            raise HermesUsageError("this Hermes connection was closed; call hermes_notebook.connect() again")
        if not self.settings.dashboard_token:
            raise HermesUsageError("kernel tools need the Dashboard: set HERMES_DASHBOARD_TOKEN")
        Modes.of(**modes)  # a wrong mode is named before anything is attached
        KERNEL.attach()

    @caller_first(_attach_kernel)
    @on_loop
    async def share_kernel_async(
        self,
        *,
        read: bool | str = False,
        run: str = "ask",
        edit: str = "propose",
        run_limit: float | None = None,
    ) -> KernelShare:
        """Let Hermes use this kernel through tools in this connection's Dashboard turns, with the modes
        :class:`~hermes_notebook.kernel.grants.Modes` explains (a new call replaces them whole). Results are
        scrubbed like exports. Needs ``pip install 'hermes-notebook[tools]'``; undone by :meth:`close`."""
        modes = Modes.of(read, edit, run, run_limit)
        share = await KERNEL.share(
            self.conversation, modes, dashboard_url=self.settings.dashboard_url, secrets=self._secrets
        )
        if not share.registered:
            print(share.instructions())
        return share

    share_kernel = blocking(share_kernel_async)

    # --- status, checks and lifecycle ---
    reproduce = staticmethod(reproducibility.reproduce)  # a saved notebook run again and compared: no server
    reproduce_async = staticmethod(reproducibility.reproduce_async)

    @on_loop
    async def status_async(self) -> Status:
        """Both servers: reachable or not, versions, capabilities, and this connection's state."""
        return await facade_status(self)

    status = blocking(status_async)

    @on_loop
    async def check_async(self) -> Hermes:
        """Raise the server's error now if the configured default path is unusable
        (``connect(check=True)``)."""
        await self.conversation.check(self.default_via)
        return self

    check = blocking(check_async)

    def close(self) -> None:
        """Close the connections (later calls fail)."""
        if self._closed:
            return
        self._closed = True
        with contextlib.suppress(Exception):
            self._close_clients()

    @on_loop
    async def _close_clients_async(self) -> None:
        with contextlib.suppress(Exception):  # the kernel's tools go first, while the connection is open
            await KERNEL.unshare(self.conversation)
        closing = [self.conversation.close(), *([self._jobs.aclose()] if self._jobs else [])]
        await asyncio.wait_for(asyncio.gather(*closing, return_exceptions=True), 10.0)  # never hang a cell

    _close_clients = blocking(_close_clients_async)
