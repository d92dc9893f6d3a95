"""A scripted stand-in for the Dashboard's ``/api/ws``, for faults the real server cannot produce on cue.

It speaks the same framing as hermes-agent 0.19.0 (docs/protocol/dashboard.md §2): one JSON object per text
frame, ``gateway.ready`` first, token in ``?token=``, a wrong token refused with HTTP 403 on the handshake.
Tests script it by pushing raw frames (including malformed ones), by queueing the frames the next
``prompt.submit`` produces (``REPLY`` marks where the reply goes among them), by dropping the socket, and by
stopping and restarting it on the same port. Every frame the server received is kept in ``received``.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections import deque
from collections.abc import Awaitable, Callable
from http import HTTPStatus
from typing import Any
from urllib.parse import parse_qs, urlsplit

from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.http11 import Request, Response

from hermes_notebook.settings import Settings
from tests.helpers import eventually_async

__all__ = ["REPLY", "FakeDashboard", "event", "plain_turn"]

#: Marker inside a turn script: send the ``prompt.submit`` reply at this point.
REPLY = object()

# The server side logs the request line with the token at DEBUG; keep it out of the tests' captured logs,
# which assert that the *client* never logs a token.
_SERVER_LOG = logging.getLogger("tests.fake_ws_server")
_SERVER_LOG.setLevel(logging.WARNING)

Handler = Callable[["FakeDashboard", ServerConnection, dict[str, Any]], Awaitable[Any]]


def event(etype: str, sid: str | None, payload: dict[str, Any] | None = None) -> dict[str, Any]:
    """An event frame shaped like ``_emit`` builds it (§2 "Events": no payload key when None)."""
    params: dict[str, Any] = {"type": etype}
    if sid is not None:
        params["session_id"] = sid
    if payload is not None:
        params["payload"] = payload
    return {"jsonrpc": "2.0", "method": "event", "params": params}


def plain_turn(sid: str, *chunks: str, status: str = "complete") -> list[Any]:
    """message.start, one delta per chunk, message.complete; the reply first."""
    text = "".join(chunks)
    return [
        REPLY,
        event("message.start", sid),
        *(event("message.delta", sid, {"text": c}) for c in chunks),
        event("message.complete", sid, {"text": text.strip(), "status": status, "usage": {"total": 1}}),
    ]


class FakeDashboard:
    """The fake server. ``async with FakeDashboard() as fake:``; ``fake.settings()`` for the client."""

    def __init__(self, token: str = "fake-token-0123456789") -> None:
        self.token = token
        self.port = 0
        self.received: list[Any] = []
        self.connections: list[ServerConnection] = []
        self.handshakes = 0
        self.turns: dict[str, deque[list[Any]]] = {}  # live sid -> scripts for its next submits
        self.handlers: dict[str, Handler] = {}
        self.replies: dict[str, Any] = {}  # method -> canned result
        self._server: Server | None = None
        self._count = 0
        self._tasks: set[asyncio.Task[Any]] = set()

    # --- lifecycle ---------------------------------------------------------------------------------------

    async def start(self) -> FakeDashboard:
        """Listen on 127.0.0.1 (a free port the first time, the same port afterwards)."""
        self._server = await serve(
            self._handle,
            "127.0.0.1",
            self.port,
            process_request=self._check_token,
            compression=None,
            max_size=None,
            ping_interval=None,
            logger=_SERVER_LOG,
        )
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def stop(self) -> None:
        """Stop listening and abort every open socket (like a killed process: no close frame)."""
        for ws in list(self.connections):
            ws.transport.abort()
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
            self._server = None
        for task in list(self._tasks):
            task.cancel()

    async def __aenter__(self) -> FakeDashboard:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def settings(self, token: str | None = None) -> Settings:
        """Client settings for this server (``token`` overrides the right one)."""
        return Settings(
            dashboard_url=self.url,
            dashboard_token=token or self.token,
            connect_timeout=2.0,
            request_timeout=10.0,
        )

    @property
    def ws(self) -> ServerConnection:
        """The most recent connection."""
        return self.connections[-1]

    def requests(self, method: str | None = None) -> list[dict[str, Any]]:
        """Received request objects (of one method)."""
        return [
            f for f in self.received if isinstance(f, dict) and (method is None or f.get("method") == method)
        ]

    # --- scripting ---------------------------------------------------------------------------------------

    def script(self, sid: str, frames: list[Any]) -> None:
        """Queue the frames the session's next ``prompt.submit`` produces (``REPLY`` marks the reply)."""
        self.turns.setdefault(sid, deque()).append(frames)

    async def send(self, frame: Any) -> None:
        """Send one frame as is: a dict/list is JSON-encoded, str goes as text, bytes as a binary frame."""
        data = json.dumps(frame) if isinstance(frame, (dict, list)) else frame
        await self.ws.send(data)

    async def drop(self) -> None:
        """Abort the current socket without a close frame (a crash or a pulled cable)."""
        self.ws.transport.abort()

    async def wait_for(self, method: str, count: int = 1, timeout: float = 5.0) -> list[dict[str, Any]]:
        """Wait until ``count`` requests of ``method`` arrived."""
        await eventually_async(lambda: len(self.requests(method)) >= count, timeout, f"{method} x{count}")
        return self.requests(method)

    # --- server side -------------------------------------------------------------------------------------

    def _check_token(self, connection: ServerConnection, request: Request) -> Response | None:
        query = parse_qs(urlsplit(request.path).query)
        if query.get("token", [""])[0] != self.token:  # §1.4: close(4401) before accept becomes HTTP 403
            return connection.respond(HTTPStatus.FORBIDDEN, "")
        return None

    async def _handle(self, ws: ServerConnection) -> None:
        self.handshakes += 1
        self.connections.append(ws)
        await ws.send(json.dumps(event("gateway.ready", None, {"skin": {}})))
        try:
            async for raw in ws:
                try:
                    frame = json.loads(raw)
                except ValueError:
                    self.received.append(raw)
                    continue
                self.received.append(frame)
                if isinstance(frame, dict):
                    task = asyncio.ensure_future(self._dispatch(ws, frame))
                    self._tasks.add(task)
                    task.add_done_callback(self._tasks.discard)
        except Exception:  # noqa: BLE001 - an aborted socket ends the handler
            pass

    async def _dispatch(self, ws: ServerConnection, frame: dict[str, Any]) -> None:
        method = frame.get("method")
        handler = self.handlers.get(method) or getattr(self, "_on_" + str(method).replace(".", "_"), None)
        if handler is None:
            await self._reply(ws, frame, self.replies.get(method, {"ok": True}))
            return
        await handler(self, ws, frame) if method in self.handlers else await handler(ws, frame)

    async def _reply(self, ws: ServerConnection, frame: dict[str, Any], result: Any) -> None:
        await ws.send(json.dumps({"jsonrpc": "2.0", "id": frame.get("id"), "result": result}))

    async def _on_client_capabilities(self, ws: ServerConnection, frame: dict[str, Any]) -> None:
        # 0.19.0 has no such method (docs/protocol/dashboard-newer.md §1.2): the client uses *.request events.
        await ws.send(
            json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": frame.get("id"),
                    "error": {"code": -32601, "message": "unknown method: client.capabilities"},
                }
            )
        )

    async def _on_session_create(self, ws: ServerConnection, frame: dict[str, Any]) -> None:
        self._count += 1
        await self._reply(
            ws,
            frame,
            {
                "session_id": f"live{self._count}",
                "stored_session_id": f"stored{self._count}",
                "message_count": 0,
                "messages": [],
                "info": {},
            },
        )

    async def _on_session_resume(self, ws: ServerConnection, frame: dict[str, Any]) -> None:
        stored = frame["params"]["session_id"]
        self._count += 1
        await self._reply(
            ws,
            frame,
            {
                "session_id": f"live{self._count}",
                "resumed": stored,
                "session_key": stored,
                "message_count": 0,
                "messages": [],
                "running": False,
                "status": "idle",
            },
        )

    async def _on_prompt_submit(self, ws: ServerConnection, frame: dict[str, Any]) -> None:
        sid = frame["params"]["session_id"]
        scripts = self.turns.get(sid)
        frames = scripts.popleft() if scripts else plain_turn(sid, "Hello ", "from the fake.")
        for item in frames:
            if item is REPLY:
                await self._reply(ws, frame, {"status": "streaming"})
            elif isinstance(item, (int, float)):
                await asyncio.sleep(item)
            elif isinstance(item, dict) and "result" in item and item.get("id") == "REPLY":
                await self._reply(ws, frame, item["result"])
            else:
                await ws.send(json.dumps(item))
