"""Telling Hermes about the kernel's tool server: registered on a Dashboard that can, a config snippet otherwise.

Feature detection, not versions: a Dashboard that answers ``mcp.servers.list`` has the ``mcp.servers.*`` family
and ``reload.mcp`` (docs/protocol/dashboard-newer.md §9); a 0.19.0 Dashboard answers -32601. There the server is
added to the profile (``mcp.servers.add``: the bearer token goes to Hermes' own ``.env``, only a ``${VAR}``
template to ``config.yaml``) and every live session reloads its MCP tools (``reload.mcp``). Elsewhere the user
gets the ``mcp_servers`` snippet to paste, plus the path of a 0600 file holding the token (never the token in an
output), and a restart of Hermes is needed.

Names are ``notebook_<8 hex>``, one per kernel. A kernel that died without cleaning up leaves its entry behind;
the next kernel to register removes every ``notebook_*`` entry whose loopback URL no longer accepts a connection.
"""

from __future__ import annotations

import contextlib
import os
import re
import socket
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from ..errors import HermesRPCError

if TYPE_CHECKING:
    from ..client.dashboard import DashboardConnection

__all__ = [
    "METHOD_NOT_FOUND",
    "NAME_PREFIX",
    "config_snippet",
    "env_key",
    "is_stale",
    "register",
    "remove_stale",
    "supports_registration",
    "token_file",
    "unregister",
]

#: Every kernel's server is named ``notebook_<8 hex>``.
NAME_PREFIX = "notebook_"
#: JSON-RPC "method not found": the server has no such method (a 0.19.0 Dashboard).
METHOD_NOT_FOUND = -32601
#: Hermes' own error code for "server not found" on ``mcp.servers.remove``.
NOT_FOUND = 4064
_NAME = re.compile(r"notebook_[0-9a-f]{8}")


async def supports_registration(conn: DashboardConnection) -> bool:
    """True when the Dashboard has ``mcp.servers.*`` and ``reload.mcp`` (it answers ``mcp.servers.list``)."""
    try:
        await conn.request("mcp.servers.list", {})
    except HermesRPCError as exc:
        if exc.code == METHOD_NOT_FOUND:
            return False
        raise
    return True


async def _reload(conn: DashboardConnection) -> None:
    # confirm: the reload invalidates the prompt cache, which Hermes otherwise asks about first.
    await conn.request("reload.mcp", {"confirm": True})


async def register(conn: DashboardConnection, name: str, url: str, token: str) -> dict[str, Any]:
    """Add the server to the Dashboard's profile and reload MCP tools in every live session; the server summary."""
    result = await conn.request("mcp.servers.add", {"name": name, "config": {"url": url}, "bearer_token": token})
    await _reload(conn)
    return dict(result.get("server") or {}) if isinstance(result, dict) else {}


async def unregister(conn: DashboardConnection, name: str) -> bool:
    """Remove the server and reload; False when it was not registered (already gone)."""
    try:
        await conn.request("mcp.servers.remove", {"name": name})
    except HermesRPCError as exc:
        if exc.code == NOT_FOUND:
            return False
        raise
    await _reload(conn)
    return True


def is_stale(url: str | None, timeout: float = 1.0) -> bool:
    """True when a loopback URL no longer accepts a connection (its kernel is gone). Other hosts: never ours."""
    parts = urlsplit(url or "")
    if parts.hostname not in ("127.0.0.1", "localhost", "::1") or parts.port is None:
        return False
    try:
        with socket.create_connection((parts.hostname, parts.port), timeout=timeout):
            return False
    except OSError:
        return True


async def remove_stale(conn: DashboardConnection, keep: set[str]) -> list[str]:
    """Remove ``notebook_*`` registrations (other than ``keep``) whose server no longer answers; their names."""
    import asyncio

    listed = await conn.request("mcp.servers.list", {})
    removed = []
    for server in (listed or {}).get("servers") or []:
        name = str(server.get("name") or "")
        if not _NAME.fullmatch(name) or name in keep:
            continue
        if await asyncio.to_thread(is_stale, server.get("url")):
            with contextlib.suppress(HermesRPCError):
                await conn.request("mcp.servers.remove", {"name": name})
                removed.append(name)
    if removed:
        await _reload(conn)
    return removed


def env_key(name: str) -> str:
    """The ``.env`` variable Hermes reads a server's bearer token from (its own naming: ``MCP_<NAME>_API_KEY``)."""
    return f"MCP_{re.sub(r'[^A-Za-z0-9_]', '_', name.upper()).strip('_')}_API_KEY"


def token_file(name: str, token: str) -> Path:
    """Write the token to a file only this user can read (0600, in a 0700 directory); its path."""
    folder = Path(tempfile.gettempdir()) / f"hermes-notebook-{os.getuid() if hasattr(os, 'getuid') else 'user'}"
    folder.mkdir(mode=0o700, exist_ok=True)
    os.chmod(folder, 0o700)
    path = folder / f"{name}.token"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(token)
    os.chmod(path, 0o600)
    return path


def config_snippet(name: str, url: str) -> str:
    """The ``~/.hermes/config.yaml`` entry for this server; the token comes from ``~/.hermes/.env``."""
    return (
        "mcp_servers:\n"
        f"  {name}:\n"
        f"    url: {url}\n"
        "    headers:\n"
        f'      Authorization: "Bearer ${{{env_key(name)}}}"\n'
    )
