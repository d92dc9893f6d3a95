"""``DashboardConnection``: JSON-RPC 2.0 over the Dashboard's ``/api/ws``, REST history, and reconnects.

It offers the connection API of docs/architecture.md (``client/dashboard/``) on top of what
hermes-agent 0.19.0 actually does (docs/protocol/dashboard.md, cited as §n):

- A turn is opened for its session *before* ``prompt.submit`` is sent, as its events may beat the reply; how
  events find their turn is the core's (``core.py``).
- A dropped socket fails every waiting request and open turn with ``HermesGatewayClosedError``; listened
  sessions are resumed by stored id after a backoff (§5: the live id may change) and their listeners told.

Newer Dashboards are told apart by feature detection, never by version: each socket sends ``client.capabilities``
(0.19.0 answers -32601); prompts then arrive as server requests (``prompts.py``), and drops are caught up from the
server's replay ring (``replay.py``).

This module is the asyncio shell: sockets, awaiting replies, reconnects, callbacks. Frames are handled, and the
routing state kept, by the sans-I/O :class:`~.core.DashboardCore`; after each frame the shell sends what the core
queued, resolves replies and calls listeners. Everything on the per-frame path is O(1), creates no task and
formats no log line.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any

from websockets.asyncio.client import ClientConnection
from websockets.exceptions import ConnectionClosed

from ...errors import (
    HermesClosedError,
    HermesGatewayClosedError,
    HermesRPCError,
    HermesTimeoutError,
    HermesUsageError,
)
from ...inert import redact_url
from ...settings import Secret, Settings
from ...turns import Message, TransformOutput
from . import compaction, early_stop, prompts, reconnect, replay
from .attachments import MAX_IMAGE_BYTES, ImageInput, attach_params, prepare_images
from .backoff import Backoff
from .callbacks import Callbacks, OnChange, OnError
from .core import DashboardCore
from .history import fetch_history
from .session import Listener, ListenerItem, SessionRef, _Session
from .turn import Turn
from .ws import dial, resolve_settings

__all__ = ["MAX_IMAGE_BYTES", "Backoff", "DashboardConnection", "ListenerItem", "SessionRef", "Turn"]

logger = logging.getLogger(__name__)


# --- the connection --------------------------------------------------------------------------------------


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
        self._reconnect: Backoff | None = Backoff() if reconnect is True else (reconnect or None)
        self._transform_output = transform_output
        self._sleep = sleep
        self._settings: Settings = self._resolve_settings()
        self._ws: ClientConnection | None = None
        self._reader: asyncio.Task[None] | None = None
        self._core = DashboardCore(transform_output)  # sessions, turns, pending ids, server requests, seqs
        self._told_disconnected: set[str] = set()
        self._ever_connected = False
        self._closed = False
        self._connect_lock: asyncio.Lock | None = None
        self._reconnect_task: asyncio.Task[None] | None = None
        self._wake: asyncio.Event | None = None
        self._callbacks = Callbacks(on_error)  # listeners, on_change, on_error, and the tasks they start
        self._dropped_at = 0.0
        self._drop_text = ""

    # --- settings --------------------------------------------------------------------------------------

    def _resolve_settings(self) -> Settings:
        return resolve_settings(self._source, self._token)

    @property
    def url(self) -> str:
        """The WebSocket endpoint, without the token."""
        return self._settings.dashboard_ws_url

    @property
    def connected(self) -> bool:
        """True while a socket is open."""
        return self._ws is not None

    @property
    def closed(self) -> bool:
        """True after :meth:`close`."""
        return self._closed

    def __repr__(self) -> str:
        state = "closed" if self._closed else "connected" if self._ws is not None else "disconnected"
        return f"<DashboardConnection {redact_url(self.url)} {state} sessions={len(self._core.sessions)}>"

    async def __aenter__(self) -> DashboardConnection:
        await self.connect()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    # --- connecting ------------------------------------------------------------------------------------

    async def connect(self) -> None:
        """Open the socket (if not open) and resume every listened session."""
        self._check_open()
        await self._open()
        await reconnect.bring_back(self)

    async def _ensure_connected(self) -> None:
        self._check_open()
        if self._ws is not None:
            return
        if self._ever_connected and self._reconnect is None:
            raise HermesGatewayClosedError(
                f"the Dashboard connection to {self.url} is closed and reconnect=False; call connect() again"
            )
        await self._open()
        if self._wake is not None:
            self._wake.set()  # a reconnect loop waiting out its backoff can resubscribe right away

    async def _open(self) -> None:
        if self._connect_lock is None:
            self._connect_lock = asyncio.Lock()
        async with self._connect_lock:
            if self._ws is not None:
                return
            self._check_open()
            self._settings = settings = self._resolve_settings()
            ws = await dial(settings)
            if self._closed:
                await ws.close()
                raise HermesClosedError("the Dashboard connection was closed while connecting")
            self._ws = ws
            self._core.new_socket()
            self._ever_connected = True
            self._reader = asyncio.ensure_future(self._read_loop(ws))
            try:
                await prompts.handshake(self)
            except BaseException:
                await ws.close()  # a socket we could not set up is not left half-open
                raise

    @property
    def server_requests(self) -> bool:
        """True when the server behind this socket sends prompts as server requests (newer Dashboards)."""
        return self._core.server_requests

    @property
    def replay_epoch(self) -> str | None:
        """The server process's replay scope (newer Dashboards; None on 0.19.0 or before ``gateway.ready``)."""
        return self._core.replay_epoch

    def on_change(self, callback: OnChange) -> Callable[[], None]:
        """Call ``callback(kind)`` on a newer Dashboard's refetch broadcasts (``sessions``, ``cron``...).

        Returns ``off()``. 0.19.0 never sends them; callers keep their own refresh paths too.
        """
        return self._callbacks.on_change(callback)

    # --- the read loop (hot path) ----------------------------------------------------------------------

    async def _read_loop(self, ws: ClientConnection) -> None:
        core = self._core
        receive, flush = core.receive, self._flush
        cause: BaseException | None = None
        try:
            async for raw in ws:
                receive(raw)
                if core.output_waiting:
                    flush()
        except ConnectionClosed as exc:
            cause = exc
        except Exception as exc:  # noqa: BLE001 - any failure of the socket is a drop, reported below
            cause = exc
        finally:
            reconnect.on_drop(self, ws, cause)

    def _flush(self) -> None:
        """Act on what the core queued: frames to send, replies, listener items, broadcasts, faults."""
        core = self._core
        for frame in core.data_to_send():
            self._send_soon(frame)
        for future, result, error in core.replies_received():
            if not future.done():
                if error is not None:
                    future.set_exception(error)
                else:
                    future.set_result(result)
        callbacks = self._callbacks
        for listeners, item in core.items_received():
            callbacks.deliver(listeners, item)
        for kind in core.changes_received():
            callbacks.changed(kind)
        for fault in core.faults_received():
            callbacks.report("frame", fault)

    def _send_soon(self, frame: str) -> None:
        """Send a frame from the read loop (which cannot await); a closed socket just drops it."""
        ws = self._ws
        if ws is not None:
            self._callbacks.spawn(_send_quietly(ws, frame))

    # --- requests --------------------------------------------------------------------------------------

    async def request(self, method: str, params: Mapping[str, Any] | None = None) -> Any:
        """Call any JSON-RPC method and return its ``result`` (a :class:`SessionRef` value becomes its live id).

        Answers to blocking prompts sent this way (``sudo.respond``, ``secret.respond``, ``clarify.respond``)
        also mark the matching interaction answered, as :meth:`respond` does.
        """
        await self._ensure_connected()
        params = {k: (v.live_id if isinstance(v, SessionRef) else v) for k, v in (params or {}).items()}
        return await prompts.request(self, method, params)

    async def _call(
        self, method: str, params: Mapping[str, Any], on_sent: Callable[[], None] | None = None
    ) -> Any:
        ws = self._ws
        if ws is None:
            raise HermesGatewayClosedError(f"{method} was not sent: the Dashboard connection is closed")
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        request_id, frame = self._core.request(method, params, future)
        try:
            await ws.send(frame)
        except BaseException as exc:
            self._core.forget_request(request_id)
            # The read loop may already have failed this future on the same drop: retrieve it, or asyncio logs
            # "Future exception was never retrieved" for a future nobody will ever await.
            if future.done():
                if not future.cancelled():
                    future.exception()
            else:
                future.cancel()
            if isinstance(exc, ConnectionClosed):
                raise HermesGatewayClosedError(f"{method} was not sent: the Dashboard connection closed") from None
            raise
        if on_sent is not None:
            on_sent()
        try:
            return await asyncio.wait_for(future, self._settings.request_timeout)
        except (TimeoutError, asyncio.TimeoutError):
            raise HermesTimeoutError(
                f"{method} got no reply within {self._settings.request_timeout:g} s"
            ) from None
        finally:
            self._core.forget_request(request_id)

    # --- sessions --------------------------------------------------------------------------------------

    async def create_session(self, **params: Any) -> SessionRef:
        """``session.create`` (§3.1): a new session; ``params`` are passed on (``cwd``, ``title``, ``model``...).

        The stored id has no DB row until the first prompt, so :meth:`history` is empty until then.
        """
        await self._ensure_connected()
        result = await self._call("session.create", params)
        ref = SessionRef(str(result["session_id"]), str(result["stored_session_id"]), params.get("title"))
        self._core.bind(ref)
        self._flush()
        return ref

    async def resume(self, stored_id: str | SessionRef) -> SessionRef:
        """``session.resume`` (§3.1) by stored id or title; returns this connection's ref for it, updated.

        The live id may differ from before (a new one after an orphan reap or a Dashboard restart, §5). If the
        session is still running a turn, its remaining events go to listeners as an unsolicited turn.
        """
        key = stored_id.stored_id if isinstance(stored_id, SessionRef) else stored_id
        await self._ensure_connected()
        result = await self._call("session.resume", {"session_id": key})
        ref, session, catch_up = self._core.resumed(key, result)
        await replay.catch_up(self, session, result, catch_up, self.replay_epoch)
        inflight = result.get("inflight")
        if result.get("running") and session.unsolicited is None and not session.turns:
            replay.seed_inflight(session, inflight if isinstance(inflight, Mapping) else {})
        self._flush()
        return ref

    async def _live(self, ref: SessionRef) -> _Session:
        """The routing state of ``ref`` on the current socket, resuming it first if the socket is newer."""
        await self._ensure_connected()
        if ref._generation != self._core.generation or ref.live_id not in self._core.by_live:
            await self.resume(ref)
        return self._core.by_live[ref.live_id]

    async def sessions(self, limit: int = 200) -> list[dict[str, Any]]:
        """Stored sessions, most recently active first (``session.list``, §3.1)."""
        await self._ensure_connected()
        result = await self._call("session.list", {"limit": limit})
        return list(result.get("sessions") or [])

    async def set_title(self, ref: SessionRef, title: str) -> str:
        """Set a session's title (``session.title``); returns the title the server stored."""
        session = await self._live(ref)
        result = await self._call("session.title", {"session_id": session.ref.live_id, "title": title})
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
            await self._call("session.close", {"session_id": live_id})
        await self._call("session.delete", {"session_id": key})

    # --- turns -----------------------------------------------------------------------------------------

    async def submit(
        self,
        ref: SessionRef | str,
        text: str,
        images: Iterable[ImageInput] | None = None,
        *,
        turn_id: str | None = None,
    ) -> Turn:
        """Send a prompt and return its :class:`Turn` once the server accepted it (status streaming/queued).

        ``turn_id`` names the turn (its messages are ``user:<id>`` and ``assistant:<id>``); a view that showed
        the user message before sending passes its id so both messages of the turn share it. Default: a new id.

        ``images``: ``(mime_type, bytes)`` pairs with an ``image/*`` type, or paths of image files; anything else
        raises :class:`HermesUnsupportedAttachmentError` before anything is sent. Images are queued with
        ``image.attach_bytes`` and consumed by this prompt (§3.1: prompt.submit has no images parameter).
        """
        if not isinstance(text, str):
            raise HermesUsageError(f"the prompt must be a string, not {type(text).__name__}")
        if turn_id is not None and (not isinstance(turn_id, str) or not turn_id.strip()):
            raise HermesUsageError(f"turn_id must be a non-empty string, not {turn_id!r}")
        attachments = prepare_images(images)
        self._check_open()
        if not isinstance(ref, SessionRef):
            ref = await self.resume(ref)
        for attempt in (1, 2):
            session = await self._live(ref)
            for mime, data in attachments:
                await self._call("image.attach_bytes", attach_params(ref.live_id, mime, data))
            params = self._core.submit_params(session, text)
            turn = self._core.open_turn(session, text, turn_id, self)
            try:
                result = await self._call("prompt.submit", params)
            except HermesRPCError as exc:
                self._core.drop_turn(session, turn)
                if exc.code == 4001 and attempt == 1:  # the live id expired (§2.1): resume and retry once
                    ref._generation = -1
                    continue
                raise
            self._core.accept(session, turn, result.get("status") if isinstance(result, Mapping) else None)
            return turn
        raise AssertionError("unreachable")  # pragma: no cover

    async def compress(self, ref: SessionRef, focus_topic: str | None = None) -> dict[str, Any]:
        """Compress the session's context now (``session.compress``); its next turn opens with a marker."""
        return await compaction.compress_session(self, await self._live(ref), focus_topic)

    async def interrupt(self, ref: SessionRef) -> None:
        """Stop the session's running turn (``session.interrupt``, §3.1).

        The running turn ends ``interrupted`` when its ``message.complete`` arrives; the server also drops the
        queued prompt, denies pending approvals and answers pending clarify/sudo/secret with ``""``, so queued
        turns of this session end ``cancelled`` here.
        """
        session = await self._live(ref)
        await self._call("session.interrupt", {"session_id": ref.live_id})
        for turn in list(session.turns):
            if not turn._started and turn._status == "queued":
                session.turns.remove(turn)
                turn._end("cancelled")
            elif not turn._started and not turn._done:  # the server may drop it silently, or lose the stop
                turn._stop_sent = True
                self._callbacks.spawn(early_stop.follow_up(self, session, turn))

    def open_turns(self) -> list[Turn]:
        """The turns submitted here that have not ended (a kernel tool finds the turn that called it)."""
        return self._core.open_turns()

    async def respond(self, ref: SessionRef, request_id: str, response: str) -> None:
        """Answer a pending interaction of the session's open turns (approval, clarify, sudo, secret).

        Approvals have no id on the wire: ``approval.respond`` resolves the session's *oldest* pending one
        (§3.1, §8.6), so they must be answered in order. The interaction becomes ``answered`` (sudo/secret
        responses are recorded redacted).
        """
        session = await self._live(ref)
        found = session.find_interaction(request_id)
        if found is None:
            raise HermesUsageError(f"no pending interaction {request_id!r} in session {ref.stored_id}")
        await prompts.answer(self, session, ref, found, request_id, response)

    # --- listeners -------------------------------------------------------------------------------------

    def listen(self, stored_id: str | SessionRef, callback: Listener) -> Callable[[], None]:
        """Receive every event of a session, plus connection changes; returns ``off()`` to stop.

        The session is resumed on this connection if it is not already (events go only to the socket that
        resumed it last, §5 "Event routing"), and again after every reconnect.
        """
        self._check_open()
        key = stored_id.stored_id if isinstance(stored_id, SessionRef) else stored_id
        core = self._core
        core.set_listeners(key, [*core.listeners.get(key, []), callback])
        session = core.sessions.get(key)
        if self._ws is not None and (session is None or session.ref._generation != core.generation):
            self._callbacks.spawn(reconnect.bring_back(self))
        elif self._ws is None and self._ever_connected and self._reconnect is not None:
            reconnect.start(self)

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
        self._check_open()
        return await fetch_history(self._resolve_settings(), key, limit, self._transform_output)

    # --- closing ---------------------------------------------------------------------------------------

    async def close(self) -> None:
        """End every open turn (``cancelled``), fail waiting requests, close the socket; later calls fail."""
        if self._closed:
            return
        self._closed = True
        if self._reconnect_task is not None:
            self._reconnect_task.cancel()
        self._callbacks.cancel()
        self._core.end_all("cancelled")
        for method, future in self._core.fail_requests():
            if not future.done():
                future.set_exception(HermesClosedError(f"{method} got no reply: the connection was closed"))
        ws, reader = self._ws, self._reader
        if ws is not None:
            await ws.close()
        if reader is not None:
            await asyncio.gather(reader, return_exceptions=True)
        self._ws = None
        self._core.listeners.clear()

    def _check_open(self) -> None:
        if self._closed:
            raise HermesClosedError(f"the Dashboard connection to {self.url} is closed")


# --- helpers -----------------------------------------------------------------------------------------------

async def _send_quietly(ws: ClientConnection, frame: str) -> None:
    with contextlib.suppress(ConnectionClosed):
        await ws.send(frame)
