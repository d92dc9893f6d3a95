"""``DashboardConnection``: JSON-RPC 2.0 over the Dashboard's ``/api/ws``, REST history, and reconnects.

It offers the connection API of docs/architecture.md (``client/dashboard/``) on top of what
hermes-agent 0.19.0 actually does (docs/protocol/dashboard.md, cited as §n):

- A turn is opened for its session *before* ``prompt.submit`` is sent, as its events may beat the reply; how
  events find their turn is the core's (``core.py``).
- A dropped socket fails every waiting request and open turn with ``HermesGatewayClosedError``; listened
  sessions are resumed by stored id after a backoff (§5: the live id may change) and their listeners told.

Newer Dashboards are told apart by feature detection, never by version: each socket sends
``client.capabilities`` (0.19.0 answers -32601); prompts then arrive as server requests (``prompts.py``), and
drops are caught up from the server's replay ring (``routing.py``).

This module is the public API only; it delegates. Frames are handled, and the protocol state kept, by the
sans-I/O :class:`~.core.DashboardCore`; the socket and its read loop are the :class:`~.channel.Channel`'s, the
waits and resumes after a drop the :class:`~.reconnect.Reconnector`'s, and a :class:`Turn` is a handle on the
core's :class:`~.turn_state.TurnState`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any

from ...errors import HermesError, HermesGatewayClosedError, HermesRPCError, HermesUsageError
from ...inert import redact_url
from ...settings import Secret, Settings
from ...turns import Message, TransformOutput
from .attachments import MAX_IMAGE_BYTES, ImageInput, attach_params, prepare_images
from .backoff import Backoff
from .callbacks import Callbacks, OnChange, OnError
from .channel import Channel
from .compaction import compress_session
from .core import DashboardCore, Features
from .early_stop import follow_up
from .files import FileInput, attach_files, prepare_files, prompt_with_files
from .history import fetch_history
from .media import MediaImage, fetch_media
from .profiles import check_profile, with_profile
from .reconnect import Reconnector
from .routing import SessionState
from .session import Listener, ListenerItem, SessionRef
from .settling import until_let_go
from .turn import Turn
from .ws import resolve_settings

__all__ = ["MAX_IMAGE_BYTES", "Backoff", "DashboardConnection", "ListenerItem", "SessionRef", "Turn"]


class DashboardConnection:
    """An async connection to the Hermes Dashboard (``/api/ws`` JSON-RPC plus REST history).

    Args:
        url_or_settings: the Dashboard URL (``http://127.0.0.1:9119``), a :class:`Settings`, a zero-argument
            callable returning Settings, or ``None`` for ``Settings.resolve()``. URL and token are read again
            before every connection attempt, so a restarted Dashboard with a new token is picked up from the
            environment or the callable.
        token: the Dashboard session token (else from the settings / ``HERMES_DASHBOARD_TOKEN``).
        reconnect: a :class:`Backoff` (``True`` means the default one); ``False`` turns automatic reconnects
            off (listeners are still told ``disconnected``; call :meth:`connect` to reconnect).
        on_error: ``on_error(kind, error)`` for internal faults: ``"frame"`` (a frame that does not parse or
            fit), ``"listener"`` (a callback raised), ``"listen"`` (resuming a listened session failed; it is
            retried). Without it they are logged.
        transform_output: the turn model's ``transform_output`` hook, for every turn of this connection.
        sleep: the coroutine used to wait between reconnect attempts (tests pass a fake clock).
    """

    def __init__(
        self,
        url_or_settings: str | Settings | Callable[[], Settings] | None = None,
        token: str | Secret | None = None,
        *,
        # Reconnects
        reconnect: Backoff | bool = True,
        # Hooks
        on_error: OnError | None = None,
        transform_output: TransformOutput | None = None,
        # Escape hatches for tests
        sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
    ) -> None:
        self._source = url_or_settings
        self._token = token if token is None or isinstance(token, Secret) else Secret(token)
        self._transform_output = transform_output
        self._core = DashboardCore(transform_output)  # sessions, turns, pending ids, server requests, seqs
        self._callbacks = Callbacks(on_error)  # listeners, on_change, on_error, and the tasks they start
        self._channel = Channel(self._core, self._callbacks, self._resolve_settings(), self._dropped)
        self._profile_checked: str | None = None  # the profile profiles.list confirmed for this connection
        self._reconnector = Reconnector(
            Backoff() if reconnect is True else (reconnect or None),
            self._core,
            self._channel,
            self._callbacks,
            open=self._open,
            resume=self.resume,
            sleep=sleep,
        )

    def _resolve_settings(self) -> Settings:
        return resolve_settings(self._source, self._token)

    @property
    def url(self) -> str:
        """The WebSocket endpoint, without the token."""
        return self._channel.url

    @property
    def connected(self) -> bool:
        """True while a socket is open."""
        return self._channel.connected

    @property
    def closed(self) -> bool:
        """True after :meth:`close`."""
        return self._channel.closed

    def __repr__(self) -> str:
        state = "closed" if self.closed else "connected" if self.connected else "disconnected"
        return f"<DashboardConnection {redact_url(self.url)} {state} sessions={len(self._core.sessions)}>"

    async def __aenter__(self) -> DashboardConnection:
        await self.connect()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    # --- connecting ------------------------------------------------------------------------------------

    async def connect(self) -> None:
        """Open the socket (if not open) and resume every listened session."""
        self._channel.check_open()
        await self._open()
        await self._reconnector.bring_back()

    async def _ensure_connected(self) -> None:
        self._channel.check_open()
        if self._channel.connected:
            return
        if self._channel.ever_opened and self._reconnector.backoff is None:
            raise HermesGatewayClosedError(
                f"the Dashboard connection to {self.url} is closed and reconnect=False; call connect() again"
            )
        await self._open()
        self._reconnector.wake()  # a reconnect loop waiting out its backoff can resubscribe right away

    async def _open(self) -> None:
        await self._channel.open(self._resolve_settings)
        profile = self.profile
        if profile is not None and profile != self._profile_checked:
            # Before anything of the caller's is sent: a name the server does not serve is a clear error here,
            # never a session in the wrong profile (client/dashboard/profiles.py).
            await check_profile(self, profile)
            self._profile_checked = profile

    @property
    def profile(self) -> str | None:
        """The Hermes profile this connection's sessions, lists and MCP servers belong to
        (``Settings.profile``)."""
        return self._channel.settings.profile

    def _dropped(self, detail: str) -> None:
        self._reconnector.dropped(detail)

    @property
    def server_requests(self) -> bool:
        """True when the server behind this socket sends prompts as server requests (newer Dashboards)."""
        return self._core.server_requests

    @property
    def replay_epoch(self) -> str | None:
        """The server process's replay scope (newer Dashboards; None on 0.19.0 or before
        ``gateway.ready``)."""
        return self._core.replay_epoch

    @property
    def features(self) -> Features:
        """What the server behind the current socket was seen to do (server requests, replay, clarify
        locks)."""
        return self._core.features

    def on_change(self, callback: OnChange) -> Callable[[], None]:
        """Call ``callback(kind)`` on a newer Dashboard's refetch broadcasts (``sessions``, ``cron``...).

        Returns ``off()``. 0.19.0 never sends them; callers keep their own refresh paths too.
        """
        return self._callbacks.on_change(callback)

    # --- requests --------------------------------------------------------------------------------------

    async def request(self, method: str, params: Mapping[str, Any] | None = None) -> Any:
        """Call any JSON-RPC method and return its ``result`` (a :class:`SessionRef` value becomes its live
        id).

        Answers to blocking prompts sent this way (``sudo.respond``, ``secret.respond``, ``clarify.respond``)
        also mark the matching interaction answered, as :meth:`respond` does.
        """
        await self._ensure_connected()
        params = {k: (v.live_id if isinstance(v, SessionRef) else v) for k, v in (params or {}).items()}
        params = with_profile(method, params, self.profile)
        answer = self._core.prompts.plan_request(method, params)
        if answer is None:
            return await self._channel.call(method, params)
        return await self._channel.answer(answer)

    # --- sessions --------------------------------------------------------------------------------------

    async def create_session(self, **params: Any) -> SessionRef:
        """``session.create`` (§3.1): a new session; ``params`` are passed on (``cwd``, ``title``,
        ``model``...).

        The stored id has no DB row until the first prompt, so :meth:`history` is empty until then.
        """
        await self._ensure_connected()
        result = await self._channel.call(
            "session.create", with_profile("session.create", params, self.profile)
        )
        ref = SessionRef(str(result["session_id"]), str(result["stored_session_id"]), params.get("title"))
        self._core.bind(ref).started_here()
        self._channel.flush()
        return ref

    async def resume(self, stored_id: str | SessionRef) -> SessionRef:
        """``session.resume`` (§3.1) by stored id or title; returns this connection's ref for it, updated.

        The live id may differ from before (a new one after an orphan reap or a Dashboard restart, §5). If the
        session is still running a turn, its remaining events go to listeners as an unsolicited turn.
        """
        key = stored_id.stored_id if isinstance(stored_id, SessionRef) else stored_id
        await self._ensure_connected()
        params = with_profile("session.resume", {"session_id": key}, self.profile)
        result = await self._channel.call("session.resume", params)
        ref, session, catch_up = self._core.resumed(key, result)
        since: Any = None
        failure: HermesError | None = None
        if catch_up:  # a newer server replays what the session missed (docs/protocol/dashboard-newer.md §4)
            try:
                since = await self._channel.call(
                    "session.events.since", {"session_id": ref.live_id, "last_seen": session.last_seq}
                )
            except HermesError as exc:
                failure = exc
        self._core.catch_up(session, result, catch_up, since, failure)
        self._channel.flush()
        return ref

    async def _live(self, ref: SessionRef) -> SessionState:
        """The routing state of ``ref`` on the current socket, resuming it first if the socket is newer."""
        await self._ensure_connected()
        session = self._core.live(ref)
        if session is None:
            await self.resume(ref)
            session = self._core.by_live[ref.live_id]
        return session

    async def sessions(self, limit: int = 200) -> list[dict[str, Any]]:
        """Stored sessions, most recently active first (``session.list``, §3.1)."""
        await self._ensure_connected()
        result = await self._channel.call(
            "session.list", with_profile("session.list", {"limit": limit}, self.profile)
        )
        return list(result.get("sessions") or [])

    async def set_title(self, ref: SessionRef, title: str) -> str:
        """Set a session's title (``session.title``); returns the title the server stored."""
        session = await self._live(ref)
        result = await self._channel.call(
            "session.title", {"session_id": session.ref.live_id, "title": title}
        )
        ref.title = str(result.get("title") or title)
        return ref.title

    async def delete_session(self, stored_id: str | SessionRef) -> None:
        """Delete a stored session (``session.delete``); one open on this connection is closed first.

        The server refuses to delete a session that is live in its process (4023, §3.1).
        """
        key = stored_id.stored_id if isinstance(stored_id, SessionRef) else stored_id
        await self._ensure_connected()
        live_id = self._core.forget_session(key)
        if live_id is not None:
            await self._channel.call("session.close", {"session_id": live_id})
        await self._channel.call(
            "session.delete", with_profile("session.delete", {"session_id": key}, self.profile)
        )

    # --- turns -----------------------------------------------------------------------------------------

    async def submit(
        self,
        ref: SessionRef | str,
        text: str,
        images: Iterable[ImageInput] | None = None,
        *,
        turn_id: str | None = None,
        files: Iterable[FileInput] | None = None,
    ) -> Turn:
        """Send a prompt and return its :class:`Turn` once the server accepted it (status streaming/queued).

        Right after a turn ended, Hermes still holds the session for its post-turn work and would take the
        prompt as busy: it is sent once Hermes let go (at most :data:`.settling.SETTLE_TIMEOUT`), or at once
        as one that runs after where the server takes that (:mod:`.settling`).

        ``turn_id`` names the turn (its messages are ``user:<id>`` and ``assistant:<id>``); a view that showed
        the user message before sending passes its id so both messages of the turn share it. Default: a new
        id.

        ``images``: ``(mime_type, bytes)`` pairs with an ``image/*`` type, or paths of image files; anything
        else raises :class:`HermesUnsupportedAttachmentError` before anything is sent. Images are queued with
        ``image.attach_bytes`` and consumed by this prompt (§3.1: prompt.submit has no images parameter).
        ``files``: paths or ``(name, bytes)`` pairs of text files and PDFs, staged first (:mod:`.files`); the
        prompt as sent (and as the user message shows it) then names them.
        """
        if not isinstance(text, str):
            raise HermesUsageError(f"the prompt must be a string, not {type(text).__name__}")
        if turn_id is not None and (not isinstance(turn_id, str) or not turn_id.strip()):
            raise HermesUsageError(f"turn_id must be a non-empty string, not {turn_id!r}")
        attachments, documents = prepare_images(images), prepare_files(files)
        self._channel.check_open()
        if not isinstance(ref, SessionRef):
            ref = await self.resume(ref)
        await until_let_go(self._core, self.listen, ref)  # Hermes' post-turn window takes a prompt as busy
        for attempt in (1, 2):
            session = await self._live(ref)
            for mime, data in attachments:
                await self._channel.call("image.attach_bytes", attach_params(ref.live_id, mime, data))
            sent = prompt_with_files(text, await attach_files(self.request, ref.live_id, documents))
            params = self._core.submit_params(session, sent)
            state = self._core.open_turn(session, sent, turn_id)
            try:
                result = await self._channel.call("prompt.submit", params)
            except HermesRPCError as exc:
                session.drop(state)
                if exc.code == 4001 and attempt == 1:  # the live id expired (§2.1): resume and retry once
                    self._core.expire(session)
                    continue
                raise
            session.accept(state, result.get("status") if isinstance(result, Mapping) else None)
            return Turn(state, self)
        raise AssertionError("unreachable")  # pragma: no cover

    async def compress(self, ref: SessionRef, focus_topic: str | None = None) -> dict[str, Any]:
        """Compress the session's context now (``session.compress``); its next turn opens with a marker."""
        return await compress_session(self._channel, await self._live(ref), focus_topic)

    async def interrupt(self, ref: SessionRef) -> None:
        """Stop the session's running turn (``session.interrupt``, §3.1).

        The running turn ends ``interrupted`` when its ``message.complete`` arrives; the server also drops the
        queued prompt, denies pending approvals and answers pending clarify/sudo/secret with ``""``, so queued
        turns of this session end ``cancelled`` here.
        """
        session = await self._live(ref)
        await self._channel.call("session.interrupt", {"session_id": ref.live_id})
        for state in session.interrupted():  # the server may drop it silently, or lose the stop
            self._callbacks.spawn(follow_up(self._channel, session, state))

    def running_turns(self) -> list[Turn]:
        """Handles on the turns submitted here that have not ended (a kernel tool finds the turn that called
        it)."""
        return [Turn(state, self) for state in self._core.running_turns()]

    async def respond(self, ref: SessionRef, request_id: str, response: str) -> None:
        """Answer a pending interaction of the session's open turns (approval, clarify, sudo, secret).

        Approvals have no id on the wire: ``approval.respond`` resolves the session's *oldest* pending one
        (§3.1, §8.6), so they must be answered in order. The interaction becomes ``answered`` (sudo/secret
        responses are recorded redacted).
        """
        session = await self._live(ref)
        found = session.find_interaction(request_id)
        if found is not None and found[0].kind in (
            "code",
            "run",
        ):  # our own question (a kernel tool): settled here
            inter, state = found
            if response not in inter.choices:
                raise HermesUsageError(f"{response!r} is not one of the offered choices {inter.choices}")
            if state is None or not state.answer_asked(request_id, response):
                raise HermesUsageError(f"{request_id!r} is no longer waiting for an answer")
            return
        await self._channel.answer(self._core.prompts.plan(session, request_id, response))

    # --- listeners -------------------------------------------------------------------------------------

    def listen(self, stored_id: str | SessionRef, callback: Listener) -> Callable[[], None]:
        """Receive every event of a session, plus connection changes; returns ``off()`` to stop.

        The session is resumed on this connection if it is not already (events go only to the socket that
        resumed it last, §5 "Event routing"), and again after every reconnect.
        """
        self._channel.check_open()
        key = stored_id.stored_id if isinstance(stored_id, SessionRef) else stored_id
        core, channel = self._core, self._channel
        core.set_listeners(key, [*core.listeners.get(key, []), callback])
        if channel.connected and not core.is_bound(key):
            self._callbacks.spawn(self._reconnector.bring_back())
        elif not channel.connected and channel.ever_opened and self._reconnector.backoff is not None:
            self._reconnector.start()

        def off() -> None:
            core.set_listeners(key, [c for c in core.listeners.get(key, []) if c is not callback])

        return off

    # --- history ---------------------------------------------------------------------------------------

    async def history(self, stored_id: str | SessionRef, *, limit: int | None = None) -> list[Message]:
        """The session's transcript as messages (REST ``GET /api/sessions/{id}/messages``, §6).

        Rows are folded by the same turn model as live events, so part ids match the live ones. A 404 (unknown
        id, or a session never prompted) is an empty history. Only the compression tip segment is returned.
        """
        key = stored_id.stored_id if isinstance(stored_id, SessionRef) else stored_id
        self._channel.check_open()
        return await fetch_history(self._resolve_settings(), key, limit, self._transform_output)

    async def media(self, path: str) -> MediaImage:
        """An image file Hermes made on its host (a ``media`` reference's path), sniffed and bounded (§13)."""
        return await fetch_media(self._resolve_settings(), path)

    # --- closing ---------------------------------------------------------------------------------------

    def held(self, stored_id: str | SessionRef) -> bool:
        """True while Hermes still holds the session after a turn's ``message.complete`` (its ``session.info``
        has not said ``running: false`` since); False when it let go, or this server never says."""
        return self._core.held(stored_id.stored_id if isinstance(stored_id, SessionRef) else stored_id)

    def open_turns(self, stored_id: str | SessionRef) -> int:
        """How many submitted turns of the session are open on this connection (not ended yet)."""
        key = stored_id.stored_id if isinstance(stored_id, SessionRef) else stored_id
        session = self._core.sessions.get(key)
        return len(session.turns) if session is not None else 0

    async def close(self) -> None:
        """End every open turn (``cancelled``), fail waiting requests, close the socket; later calls fail."""
        if self.closed:
            return
        self._reconnector.stop()
        self._callbacks.cancel()
        self._core.close()
        await self._channel.close()
