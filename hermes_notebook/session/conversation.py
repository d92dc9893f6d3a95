"""``Conversation``: the one owner of every session operation, below every face.

The facade (``hermes.ask``, ``hermes.undo()`` ...), the Chat widget and ``%hermes`` are thin adapters over one
``Conversation``: each operation is written here once (which session it acts on, which server feature it
needs, what "not offered" means for it, whether it waits for the session's running turn) and the faces only
take input and show results. A conversation owns its clients (or is given a connection), its
:class:`~.book.SessionBook` (which session a name means), its :class:`~.queue.TurnQueue` (one turn at a time
per session, for every face) and the one :class:`~.runner.TurnRunner`.

Every method is a coroutine for the package loop (:mod:`hermes_notebook.runtime`). ``session`` arguments are
what the book resolves: a name or stored id of this conversation's, a :func:`~.book.resume`, or None for the
current session. Adding a session feature: its wire function in ``client/``, one method here, and a few lines
in each face that offers it (docs/architecture.md, "Adding a session feature").
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, cast

from ..client.dashboard.commands import CommandOutcome, commands_catalog, parse_command, run_command
from ..client.dashboard.files import attach_files, prepare_files, prompt_with_files
from ..client.dashboard.profiles import Profile, list_profiles
from ..client.dashboard.session_info import (
    check_model_name,
    context_breakdown,
    model_options,
    session_usage,
    set_model,
)
from ..client.dashboard.steering import SteerOutcome, steer_turn
from ..errors import HermesNotFoundError, HermesNotOfferedError, HermesUsageError
from ..settings import Settings
from ..turns import Message, MessageDict, fold_history
from ..turns.checkpoints import FileChange
from .book import SessionBook
from .clients import Clients, Connect
from .control import TurnControl
from .files import (
    CheckpointRef,
    Checkpoints,
    FileRewind,
    RestoreResult,
    TurnChanges,
    Undone,
)
from .mcp_servers import McpServers
from .media import read_media_images
from .queue import TurnQueue
from .readings import UsageReading, model_rows
from .rewinding import Rewinding
from .runner import TurnRunner
from .subagents import SubagentControls, Subagents
from .turns import TurnOutcome, TurnRequest, TurnSink

if TYPE_CHECKING:
    from ..client import ListenerItem
    from ..client.api import ApiClient
    from ..client.dashboard import DashboardConnection, SessionRef, Turn
    from ..client.dashboard.media import MediaImage

__all__ = ["Conversation", "OpenedSession"]


@dataclass(frozen=True)
class OpenedSession:
    """A session a face opened: its stored id, title and history (message dicts)."""

    session_id: str
    title: str | None
    messages: list[MessageDict]


def _dicts(messages: Sequence[Message | Mapping[str, Any]]) -> list[MessageDict]:
    return [m.to_dict() if isinstance(m, Message) else dict(m) for m in messages]  # type: ignore[misc]


class Conversation:
    """Everything a connection does with Hermes sessions (see the module docstring).

    ``Conversation(settings)`` opens its clients on first use and closes them in :meth:`close`. ``dashboard=``
    gives it a connected ``DashboardConnection`` to use (the caller's to close) or a coroutine function
    returning one; ``api=`` a coroutine function returning an ``ApiClient``.
    """

    def __init__(
        self,
        settings: Settings | None = None,
        *,
        dashboard: DashboardConnection | Connect | None = None,
        api: Callable[[], Awaitable[ApiClient]] | None = None,
    ) -> None:
        self.settings = settings
        self.book = SessionBook()
        self.queue = TurnQueue()
        self.clients = Clients(settings, dashboard, api)
        self.runner = TurnRunner(self.book, self.queue, dashboard=self.dashboard, api=self.api)
        #: The usage each session's last turn reported (the API Server keeps no session totals).
        self.last_usage: dict[str, Mapping[str, Any] | None] = {}
        #: File checkpoints: when each turn run here started (its checkpoint is the first one after), undo
        # with files.
        self.files = FileRewind(self)
        #: Steering and stopping a running turn's subagents (which of the two this Hermes offers).
        self.subagents = Subagents(self)
        #: The profile's MCP servers (the kernel's tool server registers itself here).
        self.mcp = McpServers(self.dashboard)
        #: Undo, regenerate/edit and branch, each waiting for the session's running turn.
        self.rewinding = Rewinding(self)

    # --- clients (:class:`~.clients.Clients` owns them) ---

    @property
    def has_dashboard(self) -> bool:
        """Whether this conversation can reach a Dashboard (a token, or a connection given to it)."""
        return self.clients.has_dashboard

    async def dashboard(self) -> DashboardConnection:
        """The Dashboard connection, connected (opened here on first use unless one was given)."""
        return await self.clients.dashboard()

    async def api(self) -> ApiClient:
        """The API Server client (created here on first use unless a factory was given)."""
        return await self.clients.api()

    async def check(self, via: str) -> None:
        """Raise the server's error now if ``via`` ("dashboard" or "api") is unusable."""
        if via == "dashboard":
            await self.dashboard()
        else:
            await (await self.api()).models()  # needs the key: a wrong one fails here

    async def close(self) -> None:
        """Close the clients this conversation opened (a given connection stays open: it is the caller's)."""
        await self.clients.close()

    def _needs_dashboard(self, message: str) -> None:
        if not self.has_dashboard:
            raise HermesUsageError(message)

    async def _ref(
        self, session: str | None, *, start: bool = False
    ) -> tuple[DashboardConnection, SessionRef]:
        """The Dashboard session ``session`` names; with ``start``, one is started now if there is none
        yet."""
        conn = await self.dashboard()
        key = self.book.key(session)
        if key is not None:
            return conn, await self.book.known_dashboard_ref(conn, key)
        if not start:
            raise HermesUsageError("there is no session yet: ask something first, or name a session")
        return conn, await self.book.dashboard_ref(conn, session)

    # --- turns ---

    @property
    def current(self) -> str | None:
        """The session consecutive asks continue (its stored id), None before the first."""
        return self.book.current

    async def run(
        self, request: TurnRequest, sink: TurnSink, control: TurnControl | None = None
    ) -> TurnOutcome:
        """Run one turn after the session's earlier ones (from any face); its records go to ``sink``."""
        started = datetime.now(timezone.utc)
        outcome = await self.runner.run(request, sink, control or TurnControl())
        if outcome.session_id is not None:
            self.last_usage[outcome.session_id] = outcome.message.get("usage")
            self.files.ran(outcome.session_id, started)
        return outcome

    def running_turns(self) -> list[Turn]:
        """The Dashboard turns this conversation runs now, from any face (a kernel tool call is answered only
        for one of them)."""
        return self.runner.running_turns()

    def busy(self, session: str) -> bool:
        """True while a turn runs on (or waits for) the stored session ``session``, from any face."""
        return self.queue.busy(session)

    async def respond(self, session: str | None, request_id: str, value: str) -> None:
        """Answer a pending approval, clarify or code request of the session's running turn."""
        conn, ref = await self._ref(session)
        await conn.respond(ref, request_id, value)

    async def answer_secret(self, kind: str, request_id: str, value: str) -> None:
        """Send a sudo password or secret value once (``sudo.respond`` / ``secret.respond``); it is kept
        nowhere."""
        method, field = ("sudo.respond", "password") if kind == "sudo" else ("secret.respond", "value")
        conn = await self.dashboard()
        await conn.request(method, {"request_id": request_id, field: value})

    async def attach(self, session: str | None, text: str, files: Sequence[tuple[str, bytes]]) -> str:
        """Stage text files and PDFs for the session's next prompt; returns ``text`` naming them
        (``@file:``)."""
        documents = prepare_files(files)  # checked before anything is sent
        conn, ref = await self._ref(session)
        return prompt_with_files(text, await attach_files(conn.request, ref.live_id, documents))

    async def image(self, path: str) -> MediaImage:
        """The image file at ``path`` on the Hermes host (a part's ``media`` reference), read through the
        Dashboard here in the kernel (a view never loads it from a server URL): sniffed PNG/JPEG/GIF/WebP,
        bounded."""
        self._needs_dashboard("images Hermes made are read through the Dashboard (a dashboard token)")
        return await (await self.dashboard()).media(path)

    # --- sessions and history ---

    async def open(self, session: str | None) -> OpenedSession:
        """Open a session for a view (not made current): a new one for None, else as for an ask; with its
        history."""
        conn = await self.dashboard()
        ref = await self.book.chat_ref(conn, session)
        messages = [] if session is None else await self.history(ref.stored_id)
        title = getattr(ref, "title", None)
        return OpenedSession(ref.stored_id, title if isinstance(title, str) and title else None, messages)

    async def history(self, session: str | None = None, *, images: bool = False) -> list[MessageDict]:
        """A session's transcript as message dicts (Dashboard history, or API Server rows folded like live
        turns); ``images``: the ``media`` images Hermes made read in (:mod:`.media`), so an export can embed
        them."""
        messages = await self._history(session)
        return [cast("MessageDict", m) for m in await self.with_images(messages)] if images else messages

    async def with_images(self, messages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        """``messages`` with the ``media`` images they name read in through :meth:`image` (:mod:`.media`), so
        an export (``history(images=True)``, the chat's Export) embeds them."""
        return [await read_media_images(message, self.image) for message in messages]

    async def _history(self, session: str | None) -> list[MessageDict]:
        key = self.book.key(session)
        if key is None:
            return []
        if self.has_dashboard:
            return _dicts(await (await self.dashboard()).history(key))
        api = await self.api()
        try:
            rows = [dict(m.raw) for m in await api.session_messages(key)]
        except HermesNotFoundError:
            rows = []
        return _dicts(fold_history(rows))

    async def sessions(self, limit: int | None = None) -> list[dict[str, Any]]:
        """Stored sessions, most recently active first (the server's rows)."""
        if self.has_dashboard:
            conn = await self.dashboard()
            rows = await (conn.sessions() if limit is None else conn.sessions(limit))
            return list(rows)[:limit]
        api = await self.api()
        return [dict(s.raw) for s in await api.sessions(limit=min(limit or 200, 200))]

    async def listen(self, session: str, callback: Callable[[ListenerItem], None]) -> Callable[[], None]:
        """Call ``callback`` with the connection's events for the stored session ``session`` (any thread: the
        connection's banner and turns started elsewhere); returns ``off()``."""
        return (await self.dashboard()).listen(session, callback)

    async def on_change(self, callback: Callable[[str], None]) -> Callable[[], None]:
        """A newer Dashboard's ``*.changed`` broadcasts ("sessions", "cron"); returns ``off()``."""
        return (await self.dashboard()).on_change(callback)

    async def compress(self, session: str | None = None, focus_topic: str | None = None) -> dict[str, Any]:
        """Compress the session's context now (``session.compress``); returns the server's counts."""
        self._needs_dashboard(
            "compress() needs the Dashboard (a dashboard token): the API Server cannot compress"
        )
        if self.book.key(session) is None:
            raise HermesUsageError(
                "there is no session to compress yet: ask something first, or name a session"
            )
        conn, ref = await self._ref(session)
        return await conn.compress(ref, focus_topic)

    # --- model and usage ---

    async def models(self, session: str | None = None) -> list[dict[str, Any]]:
        """The models Hermes offers (``model``, ``provider``, ``current``), for the session when there is
        one."""
        if self.has_dashboard:
            conn = await self.dashboard()
            key = self.book.key(session)
            ref = await self.book.known_dashboard_ref(conn, key) if key is not None else None
            return model_rows(await model_options(conn, ref))
        api = await self.api()
        if await api.run_model_choice():
            return model_rows(await api.model_options())
        # 0.19.0: the advertised name and model_routes aliases are all a run can name
        return [{"model": m.id, "provider": m.owned_by or "", "current": False} for m in await api.models()]

    async def model(self, session: str | None = None) -> str:
        """The session's model as Hermes reports it; "" when this Hermes does not say (not offered)."""
        conn, ref = await self._ref(session)
        try:
            return str((await model_options(conn, ref)).get("model") or "")
        except HermesNotOfferedError:
            return ""

    async def set_model(
        self, name: str, session: str | None = None, *, confirm: bool = False
    ) -> dict[str, Any]:
        """Switch the session's model (``config.set``; started now if there is none yet); Hermes' answer."""
        check_model_name(name)
        self._needs_dashboard(
            "set_model() needs the Dashboard (a dashboard token); with via='api' pass "
            "ask(..., model=NAME) for each run"
        )
        conn, ref = await self._ref(session, start=True)
        return await set_model(conn, ref, name, confirm=confirm)

    async def context_window(self, session: str | None = None) -> Mapping[str, Any] | None:
        """The session's context window by category (``session.context_breakdown``); None when not offered."""
        conn, ref = await self._ref(session)
        try:
            return await context_breakdown(conn, ref)
        except HermesNotOfferedError:
            return None

    async def usage(self, session: str | None = None) -> UsageReading:
        """Tokens, cache, cost and context window of the session, with notes on what this server does not
        offer."""
        key = self.book.key(session)
        if key is None:
            raise HermesUsageError("there is no session yet: ask something first, or name a session")
        last = self.last_usage.get(key)
        if not self.has_dashboard:
            return UsageReading(
                key,
                last,
                notes=(
                    "the API Server reports usage per run only: this is the last reply's (no session "
                    "totals, no context breakdown)",
                ),
            )
        conn, ref = await self._ref(key)
        notes: list[str] = []
        try:
            usage: Mapping[str, Any] | None = await session_usage(conn, ref)
        except HermesNotOfferedError as exc:
            usage = last
            notes.append(f"{exc}; showing the last reply's usage")
        try:
            breakdown: Mapping[str, Any] | None = await context_breakdown(conn, ref)
        except HermesNotOfferedError as exc:
            breakdown = None
            notes.append(str(exc))
        return UsageReading(key, usage, breakdown, tuple(notes))

    # --- Hermes' own commands ---

    async def commands(self, session: str | None = None) -> list[dict[str, str]]:
        """Hermes' slash commands (``name``, ``description``, ``category``)."""
        conn = await self.dashboard()
        key = self.book.key(session)
        return await commands_catalog(conn, await self.book.known_dashboard_ref(conn, key) if key else None)

    async def command(self, line: str, session: str | None = None) -> CommandOutcome:
        """Run ``/name args`` on the session (started now if there is none yet): its output or a directive."""
        name, arg = parse_command(line)
        self._needs_dashboard(
            "Hermes commands need the Dashboard (a dashboard token); the API Server has none"
        )
        conn, ref = await self._ref(session, start=True)
        return await run_command(conn, ref, f"{name} {arg}".strip())

    # --- profiles ---

    @property
    def profile(self) -> str | None:
        """The Hermes profile this conversation's sessions, runs and jobs belong to (None: the server's
        own)."""
        return None if self.settings is None else self.settings.profile

    async def profiles(self) -> list[Profile]:
        """The profiles this Hermes serves (``profiles.list``; 0.19.0: not offered, in one line)."""
        self._needs_dashboard(
            "listing profiles needs the Dashboard (a dashboard token): the API Server lists none"
        )
        return await list_profiles(await self.dashboard())

    # --- files and steering (the state and rules are :class:`~.files.FileRewind`'s) ---

    async def target(
        self, session: str | None, what: str, *, why: str = ""
    ) -> tuple[DashboardConnection, SessionRef, str]:
        """The Dashboard connection, live ref and stored id of an existing session, for an operation on it
        (``why``: what the refusal without a Dashboard adds)."""
        self._needs_dashboard(f"{what} needs the Dashboard (a dashboard token){why}")
        key = self.book.key(session)
        if key is None:
            raise HermesUsageError(
                f"there is no session yet for {what}: ask something first, or name a session"
            )
        conn, ref = await self._ref(key)
        return conn, ref, key

    async def checkpoints(self, session: str | None = None) -> Checkpoints:
        """The checkpoints of the session's folder, newest first (``rollback.list``)."""
        return await self.files.checkpoints(session)

    async def changes(self, session: str | None = None, *, checkpoint: CheckpointRef = None) -> TurnChanges:
        """The files the session's last turn here changed (or changed since ``checkpoint``), a diff per
        file."""
        return await self.files.changes(session, checkpoint)

    async def restore(
        self, session: str | None = None, *, checkpoint: CheckpointRef, file: str | None = None
    ) -> RestoreResult:
        """Put one file (or, without ``file``, the folder and the session's last turn) back to
        ``checkpoint``."""
        return await self.files.restore(session, checkpoint, file)

    async def steer(self, session: str | None, text: str) -> SteerOutcome:
        """Send ``text`` into the session's running turn (``session.steer``, or for an API Server run
        ``POST /v1/runs/{id}/steer``); it is marked where it went in."""
        key = self.book.key(session)
        run = None if key is None else self.runner.api_run(key)
        if run is not None:
            return await run.steer(text)
        if not self.has_dashboard:
            raise HermesUsageError(
                "there is no running turn to steer in this session: send the text as a prompt"
            )
        conn, ref, _ = await self.target(session, "steering a running turn")
        return await steer_turn(conn, ref, text)

    async def subagent_controls(self, session: str | None = None) -> SubagentControls:
        """Which subagent controls this Hermes offers: ``{"steer": bool, "stop": bool}``."""
        return await self.subagents.offered(session)

    async def steer_subagent(self, session: str | None, subagent_id: str, text: str) -> SteerOutcome:
        """Send ``text`` to one running subagent of the session (``subagent.steer``; 0.19.0: not offered)."""
        return await self.subagents.steer(session, subagent_id, text)

    async def stop_subagent(self, session: str | None, subagent_id: str) -> bool:
        """Stop one subagent of the session (``subagent.interrupt``); False when it had already finished."""
        return await self.subagents.stop(session, subagent_id)

    # --- rewinding: undo, regenerate/edit, branch (:class:`~.rewinding.Rewinding` does them) ---

    async def rewindable(self, what: str) -> None:
        """Raise :class:`HermesNotOfferedError` if this Hermes cannot rewind a stored session (0.19.0)."""
        await self.rewinding.rewindable(what)

    async def undo(self, session: str | None = None, *, files: bool = False) -> Undone:
        """Drop the session's last exchange (with ``files``, the files its checkpoint holds go back too)."""
        return await self.rewinding.undo(session, files=files)

    async def resend(
        self,
        session: str | None = None,
        text: str | None = None,
        *,
        messages: Sequence[MessageDict] | None = None,
    ) -> str:
        """Undo the last exchange to send ``text`` (an edit), or for None its prompt again (a regenerate)."""
        return await self.rewinding.resend(session, text, messages=messages)

    async def branch(
        self,
        session: str | None = None,
        *,
        at: str | int | None = None,
        messages: Sequence[MessageDict] | None = None,
        name: str | None = None,
        follow: bool = True,
        files: bool = False,
    ) -> str:
        """Copy the session into a new one without the exchanges after ``at``; the copy's stored id."""
        return await self.rewinding.branch(
            session, at=at, messages=messages, name=name, follow=follow, files=files
        )

    async def branch_files(
        self, session: str | None = None, *, at: str | int, messages: Sequence[MessageDict] | None = None
    ) -> list[FileChange]:
        """The files a branch with files at ``at`` would put back (nothing changes)."""
        return await self.rewinding.branch_files(session, at=at, messages=messages)
