"""The kernel's tool server: MCP over streamable HTTP on 127.0.0.1, behind its own random bearer token.

It uses the official ``mcp`` SDK (the optional extra ``hermes-notebook[tools]``) and runs uvicorn on a daemon
thread, so the kernel's own loop and the package loop stay free. Every request must carry
``Authorization: Bearer <token>`` (or the bare token in :data:`~.exposure.TOKEN_HEADER`, where a proxy in
front owns ``Authorization``); anything else gets 401 before the MCP layer sees it. Where it listens and the
URL Hermes is given are its :class:`~.exposure.Exposure` (loopback unless the kernel's environment says
otherwise; TLS from a certificate; plain http off loopback only when the user opts in). The server knows
nothing about policy: it registers every row of the tool table (:mod:`.tools`: name, description, hints, and
the handler's signature less its first parameter as the argument schema) and hands each call to
``handler(tool, arguments)`` (:mod:`.share`), whose :class:`~.images.ToolAnswer` is the result: a text block,
then each image as an MCP ``image`` block (PNG).

Which tools are listed can change while Hermes is connected (the cell tools exist only while the notebook's
front end is attached): ``tools/list`` answers with ``offered()``, and :meth:`ToolServer.tools_changed` sends
``notifications/tools/list_changed`` to every MCP session that listed tools before, again until it has listed
them anew (the notification rides the session's GET stream, which may not be open yet). Hermes' MCP client
re-lists on that notification and its agents pick the new list up before their next model call. Sessions need
the SDK's stateful mode for that stream; a client without a session (a bare ``tools/list``) gets a 400.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import inspect
import logging
import secrets
import socket
import threading
import time
from collections.abc import Awaitable, Callable, Collection, Sequence
from typing import Any

from ..errors import HermesUsageError
from ..settings import Secret
from .exposure import TOKEN_HEADER, Exposure
from .images import ToolAnswer
from .run_limits import progress_interval
from .tools import TOOLS, Tool
from .tools import offered as offered_tools

__all__ = ["Handler", "ToolServer", "tools_available"]

log = logging.getLogger(__name__)

#: Seconds to wait for the server to listen.
START_TIMEOUT = 15.0
#: Seconds between ``tools/list_changed`` notifications to a session that has not listed tools again yet.
ANNOUNCE_DELAYS = (0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 30.0)

Handler = Callable[[str, dict[str, Any]], Awaitable[ToolAnswer]]
Content = list[Any]  # MCP content blocks: TextContent, then ImageContent


def tools_available() -> bool:
    """True when the ``mcp`` SDK (``pip install 'hermes-notebook[tools]'``) can be imported."""
    try:
        import mcp.server.mcpserver  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError:
        return False
    return True


class ToolServer:
    """One MCP server for this kernel: ``start()`` it, read :attr:`url`, hand :attr:`token` to Hermes only."""

    def __init__(
        self,
        handler: Handler,
        offered: Callable[[], Collection[str]] = lambda: offered_tools(False),
        tools: Sequence[Tool] = TOOLS,
        exposure: Exposure | None = None,
    ) -> None:
        self._handler = handler
        #: Where it listens and what it advertises (default: loopback, a free port).
        self.exposure = exposure or Exposure()
        self._offered = offered
        self._tools = tuple(tools)
        #: The bearer token (a :class:`Secret`: its repr never shows the value).
        self.token = Secret(secrets.token_urlsafe(32))
        self.port = 0
        self._server: Any = None
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        #: MCP session id -> (a ServerSession of it, the tool list revision it listed), on the server's loop
        # only.
        self._sessions: dict[str, tuple[Any, int]] = {}
        self._revision = 0
        self._revision_lock = threading.Lock()

    @property
    def url(self) -> str:
        """The streamable HTTP endpoint Hermes is given (:meth:`.exposure.Exposure.advertise`)."""
        return self.exposure.advertise(self.port)

    @property
    def running(self) -> bool:
        """True while the server thread serves."""
        return self._thread is not None and self._thread.is_alive()

    def __repr__(self) -> str:
        return f"<ToolServer {self.url if self.port else 'not started'}>"

    def start(self) -> ToolServer:
        """Listen on a free loopback port and serve on a daemon thread (once)."""
        if self.running:
            return self
        if not tools_available():
            raise HermesUsageError("kernel tools need the mcp package: pip install 'hermes-notebook[tools]'")
        import uvicorn

        for name in ("mcp", "uvicorn"):  # their INFO lines would land in whichever cell's stderr is current
            quiet = logging.getLogger(name)
            if quiet.level == logging.NOTSET:
                quiet.setLevel(logging.WARNING)
        # IPPROTO_TCP named: asyncio sets TCP_NODELAY only on connections of such a socket; without it every
        # answer waited ~40 ms for the client's delayed ACK (Nagle), whatever the tool did.
        exposure = self.exposure
        sock = socket.socket(exposure.family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        if exposure.port:  # a fixed port: a restarted kernel takes it again while old connections linger
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((exposure.bind, exposure.port))
        except OSError as exc:
            sock.close()
            raise HermesUsageError(
                f"the kernel tool server cannot listen on {exposure.bind}:{exposure.port}: {exc.strerror}"
            ) from None
        self.port = sock.getsockname()[1]
        config = uvicorn.Config(
            self._app(),
            log_config=None,
            log_level="warning",
            access_log=False,
            lifespan="on",
            ssl_certfile=exposure.certfile,
            ssl_keyfile=exposure.keyfile,
        )
        server = self._server = uvicorn.Server(config)

        async def serve() -> None:
            self._loop = asyncio.get_running_loop()
            await server.serve(sockets=[sock])

        self._thread = threading.Thread(
            target=lambda: asyncio.run(serve()), name="hermes-notebook-tools", daemon=True
        )
        self._thread.start()
        deadline = time.monotonic() + START_TIMEOUT
        while not server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise HermesUsageError("the kernel tool server did not start")
            time.sleep(0.01)  # readiness poll
        return self

    def stop(self, timeout: float = 5.0) -> None:
        """Stop serving (the token is useless afterwards: a new server makes a new one)."""
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout)
        self._thread = None

    async def stop_async(self, timeout: float = 5.0) -> None:
        """:meth:`stop` without blocking the awaiting loop: waits for the server's thread by polling."""
        if self._server is not None:
            self._server.should_exit = True
        thread, deadline = self._thread, time.monotonic() + timeout
        while thread is not None and thread.is_alive() and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
        self._thread = None

    # --- the offered tools ----------------------------------------------------------------------------------

    def tools_changed(self) -> None:
        """The offered tools changed: tell every MCP session that listed them (thread-safe; see the module
        doc)."""
        loop = self._loop
        if loop is None or loop.is_closed():
            return
        with self._revision_lock:  # counted here, at once: clients_current is False from this call on
            self._revision += 1
            revision = self._revision
        with contextlib.suppress(RuntimeError):  # the server's loop just ended
            loop.call_soon_threadsafe(self._announce_soon, revision)

    @property
    def clients_current(self) -> bool:
        """True when every MCP session that listed tools has listed them since the last change (and one
        has)."""
        sessions = list(self._sessions.values())  # a copy: the server's loop may add one meanwhile
        return bool(sessions) and all(seen == self._revision for _session, seen in sessions)

    def _announce_soon(self, revision: int) -> None:
        asyncio.ensure_future(self._announce(revision))

    async def _announce(self, revision: int) -> None:
        for delay in (0.0, *ANNOUNCE_DELAYS):
            await asyncio.sleep(delay)
            if revision != self._revision:
                return  # a newer change announces itself
            behind = [(key, session) for key, (session, seen) in self._sessions.items() if seen < revision]
            if not behind:
                return
            for key, session in behind:
                try:
                    await session.send_tool_list_changed()
                except Exception:  # the session ended (its client went away): forget it
                    log.debug("tools/list_changed not delivered; dropping the session", exc_info=True)
                    self._sessions.pop(key, None)

    async def _middleware(self, ctx: Any, call_next: Callable[[Any], Awaitable[Any]]) -> Any:
        """Lists only the offered tools, remembers who listed them, and says that the list can change."""
        result = await call_next(ctx)
        if ctx.method == "tools/list":
            key = _session_id(ctx)
            if key is not None:
                self._sessions[key] = (ctx.session, self._revision)
            offered = set(self._offered())
            if isinstance(result, dict):
                result = {
                    **result,
                    "tools": [t for t in result.get("tools") or [] if t.get("name") in offered],
                }
            elif hasattr(result, "tools"):
                result = result.model_copy(update={"tools": [t for t in result.tools if t.name in offered]})
        elif ctx.method == "initialize":
            result = _with_list_changed(result)
        return result

    def _app(self) -> Any:
        from mcp.server.mcpserver import MCPServer
        from mcp.types import ToolAnnotations

        # log_level: the SDK calls logging.basicConfig with it, and the default INFO would make every httpx
        # request of the kernel ("HTTP Request: GET ...") a line in whichever cell runs next.
        mcp = MCPServer(
            "hermes-notebook",
            instructions="Tools of the user's Jupyter notebook kernel.",
            middleware=[self._middleware],
            log_level="WARNING",
        )
        for tool in self._tools:
            mcp.add_tool(
                self._sdk_function(tool),
                name=tool.name,
                description=tool.description,
                structured_output=False,
                annotations=ToolAnnotations(read_only_hint=tool.read_only, destructive_hint=tool.destructive),
            )
        from mcp.server.transport_security import TransportSecuritySettings

        security = TransportSecuritySettings(  # DNS-rebinding protection: the Host names it is reached by
            enable_dns_rebinding_protection=True, allowed_hosts=self.exposure.allowed_hosts(self.port)
        )
        inner = mcp.streamable_http_app(json_response=False, transport_security=security)
        token = self.token.reveal().encode()
        expected = b"Bearer " + token
        own_header = TOKEN_HEADER.lower().encode()

        async def guarded(scope: Any, receive: Any, send: Any) -> None:
            if scope["type"] == "http":
                headers = dict(scope.get("headers") or [])
                bearer = hmac.compare_digest(headers.get(b"authorization", b""), expected)
                if not (bearer or hmac.compare_digest(headers.get(own_header, b""), token)):
                    await send(
                        {
                            "type": "http.response.start",
                            "status": 401,
                            "headers": [(b"content-type", b"text/plain"), (b"www-authenticate", b"Bearer")],
                        }
                    )
                    await send({"type": "http.response.body", "body": b"unauthorized"})
                    return
                if scope.get("method") == "DELETE":  # the client ends its session: nothing more to tell it
                    self._sessions.pop(headers.get(b"mcp-session-id", b"").decode("latin-1"), None)
            await inner(scope, receive, send)

        return guarded

    def _sdk_function(self, tool: Tool) -> Callable[..., Awaitable[Content]]:
        """The function the SDK registers for ``tool``: the handler's signature less its first parameter (the
        call), so the SDK derives the argument schema from it, answering through :meth:`_answer`; the SDK
        also passes the request's context (``mcp_context``, not an argument), for progress notifications."""
        from mcp.server.mcpserver import Context

        signature = inspect.signature(tool.handler, eval_str=True)
        parameters = list(signature.parameters.values())[1:]
        unset = {p.name for p in parameters if p.default is None}

        async def call(mcp_context: Any = None, **arguments: Any) -> Content:
            # Only what the call carried (a parameter left at its None default was not): the call is matched
            # against its tool part's arguments.
            given = {k: v for k, v in arguments.items() if not (v is None and k in unset)}
            return await self._answer_in_progress(tool.name, given, mcp_context)

        context = inspect.Parameter("mcp_context", inspect.Parameter.KEYWORD_ONLY, annotation=Context)
        call.__name__ = call.__qualname__ = tool.name
        call.__signature__ = signature.replace(  # type: ignore[attr-defined]
            parameters=[*parameters, context], return_annotation=inspect.Signature.empty
        )
        call.__annotations__ = {**{p.name: p.annotation for p in parameters}, "mcp_context": Context}
        return call

    async def _answer_in_progress(self, tool: str, arguments: dict[str, Any], context: Any) -> Content:
        """:meth:`_answer`, with a progress notification every :func:`.run_limits.progress_interval` seconds
        while it runs (a long cell), where the caller asked for progress (the SDK sends none without its
        progress token); the response's SSE stream pings meanwhile either way (:mod:`.run_limits`)."""
        answering = asyncio.ensure_future(self._answer(tool, arguments))
        interval, waited = progress_interval(), 0.0
        try:
            while not answering.done():
                await asyncio.wait({answering}, timeout=interval)
                if not answering.done() and context is not None:
                    waited += interval
                    with contextlib.suppress(Exception):  # a client gone meanwhile: the answer still settles
                        await context.report_progress(waited, None, f"{tool}: running for {waited:.0f} s")
            return answering.result()
        finally:
            answering.cancel()

    async def _answer(self, tool: str, arguments: dict[str, Any]) -> Content:
        """The handler's answer as MCP content: the text, then one image block per PNG."""
        from mcp.types import ImageContent, TextContent

        answer = await self._handler(tool, arguments)
        return [
            TextContent(type="text", text=answer.text),
            *(ImageContent(type="image", data=image.data, mime_type=image.mime) for image in answer.images),
        ]


def _session_id(ctx: Any) -> str | None:
    """The MCP session a request belongs to (its ``mcp-session-id`` header), None outside a stateful
    session."""
    request = getattr(ctx, "request", None)
    headers = getattr(request, "headers", None)
    value = headers.get("mcp-session-id") if headers is not None else None
    return value if isinstance(value, str) and value else None


def _with_list_changed(result: Any) -> Any:
    """An ``initialize`` result that says the tool list can change (``tools.listChanged``)."""
    if isinstance(result, dict):
        capabilities = dict(result.get("capabilities") or {})
        capabilities["tools"] = {**(capabilities.get("tools") or {}), "listChanged": True}
        return {**result, "capabilities": capabilities}
    tools = getattr(getattr(result, "capabilities", None), "tools", None)
    if tools is not None:
        tools.list_changed = True
    return result
