"""The socket of one Dashboard connection: dialing, the read loop, sends, request/reply and closing.

:class:`Channel` owns the WebSocket and its reader task. The read loop feeds every frame to the sans-I/O
:class:`~.core.DashboardCore` and, when the core queued output, acts on it (:meth:`Channel.flush`): frames to
send, replies that resolve the futures :meth:`Channel.call` waits on, listener items and faults for the
callbacks. Everything on the per-frame path is O(1), creates no task and formats no log line.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Mapping
from typing import Any

from websockets.asyncio.client import ClientConnection
from websockets.exceptions import ConnectionClosed

from ...errors import (
    HermesClosedError,
    HermesError,
    HermesGatewayClosedError,
    HermesRPCError,
    HermesTimeoutError,
)
from ...settings import Settings
from .callbacks import Callbacks
from .core import METHOD_NOT_FOUND, DashboardCore
from .prompts import Answer
from .ws import close_detail, dial

__all__ = ["Channel"]

logger = logging.getLogger("hermes_notebook.client.dashboard.connection")


class Channel:
    """One connection's socket, reopened after drops; :meth:`close` is final.

    ``on_drop(detail)`` is called once per socket that closed on its own (not by :meth:`close`), after waiting
    requests failed; ``detail`` is the close code and reason, ready to append to a message.
    """

    def __init__(
        self, core: DashboardCore, callbacks: Callbacks, settings: Settings, on_drop: Callable[[str], None]
    ) -> None:
        self.settings = settings  # the ones the last socket was dialled with (URL, timeouts)
        self.closed = False
        self.ever_opened = False
        self._core = core
        self._callbacks = callbacks
        self._on_drop = on_drop
        self._ws: ClientConnection | None = None
        self._reader: asyncio.Task[None] | None = None
        self._lock: asyncio.Lock | None = None

    @property
    def connected(self) -> bool:
        """True while a socket is open."""
        return self._ws is not None

    @property
    def url(self) -> str:
        """The WebSocket endpoint, without the token."""
        return self.settings.dashboard_ws_url

    def check_open(self) -> None:
        """Raise :class:`HermesClosedError` after :meth:`close`."""
        if self.closed:
            raise HermesClosedError(f"the Dashboard connection to {self.url} is closed")

    # --- opening -------------------------------------------------------------------------------------------

    async def open(self, resolve: Callable[[], Settings]) -> None:
        """Dial with freshly resolved settings (unless a socket is open) and advertise our capabilities."""
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            if self._ws is not None:
                return
            self.check_open()
            self.settings = settings = resolve()
            ws = await dial(settings)
            if self.closed:
                await ws.close()
                raise HermesClosedError("the Dashboard connection was closed while connecting")
            self._ws = ws
            self._core.new_socket()
            self.ever_opened = True
            self._reader = asyncio.ensure_future(self._read_loop(ws))
            try:
                await self._handshake()
            except BaseException:
                await ws.close()  # a socket we could not set up is not left half-open
                raise

    async def _handshake(self) -> None:
        """Advertise that we answer server requests (newer Dashboards withdraw every prompt otherwise).

        Sent on every socket: the server forgets the advertisement when a socket closes. A 0.19.0 server
        answers
        -32601, which is how it is told apart (docs/protocol/dashboard-newer.md §1.2, §7).
        """
        try:
            result = await self.call("client.capabilities", {"server_requests": True})
        except HermesRPCError as exc:
            if exc.code != METHOD_NOT_FOUND:
                logger.warning("client.capabilities failed; prompts may be withdrawn by the server: %s", exc)
            return
        self._core.prompts.set_capabilities(result)

    # --- the read loop (hot path) --------------------------------------------------------------------------

    async def _read_loop(self, ws: ClientConnection) -> None:
        core = self._core
        receive, flush = core.receive, self.flush
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
            if self._ws is ws:
                self._ws = None
                self._reader = None
                detail = close_detail(cause)
                self._fail_requests(
                    lambda method: HermesGatewayClosedError(
                        f"{method} got no reply: the Dashboard connection closed{detail}"
                    )
                )
                self._on_drop(detail)

    def flush(self) -> None:
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

    def _fail_requests(self, make_error: Callable[[str], HermesError]) -> None:
        for method, future in self._core.calls.fail_all():
            if not future.done():
                future.set_exception(make_error(method))

    # --- sending -------------------------------------------------------------------------------------------

    async def call(
        self, method: str, params: Mapping[str, Any], on_sent: Callable[[], None] | None = None
    ) -> Any:
        """Send a request and wait for its ``result`` (``on_sent`` runs once it is on the wire)."""
        ws = self._ws
        if ws is None:
            raise HermesGatewayClosedError(f"{method} was not sent: the Dashboard connection is closed")
        calls = self._core.calls
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        request_id, frame = calls.request(method, params, future)
        try:
            await ws.send(frame)
        except BaseException as exc:
            calls.forget(request_id)
            # The read loop may already have failed this future on the same drop: retrieve it, or asyncio logs
            # "Future exception was never retrieved" for a future nobody will ever await.
            if future.done():
                if not future.cancelled():
                    future.exception()
            else:
                future.cancel()
            if isinstance(exc, ConnectionClosed):
                raise HermesGatewayClosedError(
                    f"{method} was not sent: the Dashboard connection closed"
                ) from None
            raise
        if on_sent is not None:
            on_sent()
        timeout = self.settings.request_timeout
        try:
            return await asyncio.wait_for(future, timeout)
        except (TimeoutError, asyncio.TimeoutError):
            raise HermesTimeoutError(f"{method} got no reply within {timeout:g} s") from None
        finally:
            calls.forget(request_id)

    async def answer(self, answer: Answer) -> Any:
        """Send an answer the way the core planned it, and have the core record it once it is on the wire."""
        core = self._core
        rid, response = answer.request_id, answer.response
        if answer.method is not None:  # 0.19.0: a *.respond RPC
            return await self.call(
                answer.method, answer.params or {}, lambda: core.answered(rid, response, answer.session)
            )
        frame = core.prompts.answer_frame(rid, response)
        locks = core.prompts.lock_params(rid, response)
        if locks is not None and await self._lock_answers(rid, locks):
            core.answered(rid, response, answer.session)
            return {"ok": True}
        ws = self._ws
        if ws is None:
            raise HermesGatewayClosedError("the answer was not sent: the Dashboard connection is closed")
        try:
            await ws.send(frame)
        except ConnectionClosed:
            raise HermesGatewayClosedError(
                "the answer was not sent: the Dashboard connection closed"
            ) from None
        finally:
            del frame  # it may hold a sudo password or secret value
        core.answered(rid, response, answer.session)
        return {"ok": True}

    async def _lock_answers(self, request_id: str, locks: list[dict[str, Any]]) -> bool:
        """Send a clarify's answers with ``clarify.lock``, one acknowledged call per question; False when the
        server has no such method (-32601: the result frame goes instead)."""
        prompts = self._core.prompts
        for params in locks:
            try:
                result = await self.call("clarify.lock", params)
            except HermesRPCError as exc:
                if exc.code != METHOD_NOT_FOUND:
                    raise
                prompts.locks_refused()
                return False
            prompts.lock_taken(request_id, result)
        return True

    # --- closing -------------------------------------------------------------------------------------------

    async def close(self) -> None:
        """Fail waiting requests, close the socket and wait for the read loop; later opens fail."""
        self.closed = True
        self._fail_requests(
            lambda method: HermesClosedError(f"{method} got no reply: the connection was closed")
        )
        ws, reader = self._ws, self._reader
        if ws is not None:
            await ws.close()
        if reader is not None:
            await asyncio.gather(reader, return_exceptions=True)
        self._ws = None


async def _send_quietly(ws: ClientConnection, frame: str) -> None:
    with contextlib.suppress(ConnectionClosed):
        await ws.send(frame)
