"""The kernel's tool server: MCP over streamable HTTP on 127.0.0.1, behind its own random bearer token.

It uses the official ``mcp`` SDK (the optional extra ``hermes-notebook[tools]``) and runs uvicorn on a daemon
thread, so the kernel's own loop and the package loop stay free. Every request must carry
``Authorization: Bearer <token>``; anything else gets 401 before the MCP layer sees it. The server knows nothing
about policy: each tool call is handed to ``handler(tool, arguments)`` (:mod:`.share`), whose text is the result.
"""

from __future__ import annotations

import asyncio
import hmac
import logging
import secrets
import socket
import threading
import time
from collections.abc import Awaitable, Callable
from typing import Any

from ..errors import HermesUsageError
from ..settings import Secret

__all__ = ["LOOPBACK", "READ_TOOLS", "TOOLS", "Handler", "ToolServer", "tools_available"]

log = logging.getLogger(__name__)

LOOPBACK = "127.0.0.1"
#: The read tools, opt-in per session.
READ_TOOLS = ("list_variables", "describe", "read_cells", "read_output")
#: Every tool the server offers; ``run_code`` asks the user each time.
TOOLS = (*READ_TOOLS, "run_code")
#: Seconds to wait for the server to listen.
START_TIMEOUT = 15.0

Handler = Callable[[str, dict[str, Any]], Awaitable[str]]

_DESCRIPTIONS = {
    "list_variables": "List the variables in the user's Jupyter notebook kernel: name, type, shape or size.",
    "describe": "A bounded summary of one notebook variable (type, shape, columns, head rows, ...). "
                "`name` is a plain variable name such as df.",
    "read_cells": "The source of notebook cells as In[n]. `cells` is a number (5), a range (3:6) or -N for the "
                  "last N cells.",
    "read_output": "One notebook cell: its source, its result (Out[n], summarized) and the error it raised.",
    "run_code": "Run Python code in the user's notebook kernel (their variables, their files). The user sees the "
                "whole code and must click Run first; returns stdout, the last expression's value and any error.",
}


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

    def __init__(self, handler: Handler) -> None:
        self._handler = handler
        #: The bearer token (a :class:`Secret`: its repr never shows the value).
        self.token = Secret(secrets.token_urlsafe(32))
        self.port = 0
        self._server: Any = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """The streamable HTTP endpoint (loopback only)."""
        return f"http://{LOOPBACK}:{self.port}/mcp"

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
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.bind((LOOPBACK, 0))
        self.port = sock.getsockname()[1]
        config = uvicorn.Config(self._app(), log_config=None, log_level="warning", access_log=False, lifespan="on")
        server = self._server = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=lambda: asyncio.run(server.serve(sockets=[sock])), name="hermes-notebook-tools", daemon=True,
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

    def _app(self) -> Any:
        from mcp.server.mcpserver import MCPServer
        from mcp.types import ToolAnnotations

        # log_level: the SDK calls logging.basicConfig with it, and the default INFO would make every httpx request
        # of the kernel ("HTTP Request: GET ...") a line in whichever cell runs next.
        mcp = MCPServer("hermes-notebook", instructions="Tools of the user's Jupyter notebook kernel.", log_level="WARNING")
        for tool in TOOLS:
            read_only = tool in READ_TOOLS
            mcp.add_tool(
                self._tool(tool), name=tool, description=_DESCRIPTIONS[tool], structured_output=False,
                annotations=ToolAnnotations(read_only_hint=read_only, destructive_hint=not read_only),
            )
        inner = mcp.streamable_http_app(stateless_http=True, json_response=True, host=LOOPBACK)
        expected = f"Bearer {self.token.reveal()}".encode()

        async def guarded(scope: Any, receive: Any, send: Any) -> None:
            if scope["type"] == "http":
                given = dict(scope.get("headers") or []).get(b"authorization", b"")
                if not hmac.compare_digest(given, expected):
                    await send({"type": "http.response.start", "status": 401,
                                "headers": [(b"content-type", b"text/plain"), (b"www-authenticate", b"Bearer")]})
                    await send({"type": "http.response.body", "body": b"unauthorized"})
                    return
            await inner(scope, receive, send)

        return guarded

    def _tool(self, tool: str) -> Callable[..., Awaitable[str]]:
        handler = self._handler
        # One function per tool, so the SDK derives each tool's argument schema from its signature.
        if tool == "describe":
            async def describe(name: str) -> str:
                return await handler("describe", {"name": name})
            return describe
        if tool == "read_cells":
            async def read_cells(cells: str) -> str:
                return await handler("read_cells", {"cells": cells})
            return read_cells
        if tool == "read_output":
            async def read_output(cell: int) -> str:
                return await handler("read_output", {"cell": cell})
            return read_output
        if tool == "run_code":
            async def run_code(code: str) -> str:
                return await handler("run_code", {"code": code})
            return run_code

        async def list_variables() -> str:
            return await handler("list_variables", {})
        return list_variables
