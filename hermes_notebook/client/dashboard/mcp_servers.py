"""A Hermes profile's MCP servers on the Dashboard: ``mcp.servers.list|add|remove`` and ``reload.mcp``.

Feature detection, not versions: a Dashboard that answers ``mcp.servers.list`` has the family and
``reload.mcp`` (docs/protocol/dashboard-newer.md §9); a 0.19.0 Dashboard answers -32601. ``mcp.servers.add``
writes the server into the profile (the bearer token to Hermes' own ``.env``, only a ``${VAR}`` template to
``config.yaml``), and ``reload.mcp`` refreshes every live session's tools. A connection kept in one profile
adds ``profile`` to the first three (:data:`~.profiles.PROFILE_METHODS`). The kernel's tool server registers
itself through these (``kernel/registration.py``, by way of the conversation's
:class:`~hermes_notebook.session.mcp_servers.McpServers`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from ...errors import HermesRPCError
from .core import METHOD_NOT_FOUND

__all__ = [
    "EXISTS",
    "NOT_FOUND",
    "Requests",
    "add_mcp_server",
    "list_mcp_servers",
    "mcp_servers_offered",
    "reload_mcp",
    "remove_mcp_server",
]

#: Hermes' error code for ``mcp.servers.remove`` of a server it does not have.
NOT_FOUND = 4064
#: Hermes' error code for ``mcp.servers.add`` of a name that exists.
EXISTS = 4090


class Requests(Protocol):
    """What these calls need of a connection (:class:`~.connection.DashboardConnection`)."""

    async def request(self, method: str, params: Mapping[str, Any] | None = None) -> Any: ...


async def mcp_servers_offered(conn: Requests) -> bool:
    """True when the Dashboard has ``mcp.servers.*`` and ``reload.mcp`` (it answers ``mcp.servers.list``)."""
    try:
        await conn.request("mcp.servers.list", {})
    except HermesRPCError as exc:
        if exc.code == METHOD_NOT_FOUND:
            return False
        raise
    return True


async def list_mcp_servers(conn: Requests) -> dict[str, str | None]:
    """The profile's MCP servers: name -> URL (None for a server without one, e.g. a command)."""
    listed = await conn.request("mcp.servers.list", {})
    servers = listed.get("servers") or [] if isinstance(listed, dict) else []
    return {
        str(s.get("name")): s.get("url") if isinstance(s.get("url"), str) else None
        for s in servers
        if isinstance(s, dict) and s.get("name")
    }


async def add_mcp_server(
    conn: Requests,
    name: str,
    url: str,
    token: str,
    headers: Mapping[str, str] | None = None,
    timeout: int | None = None,
) -> bool:
    """Add a streamable-HTTP server with a bearer token to the profile; False when that name is taken.

    ``headers`` (``${VAR}`` templates only, never values): the server is reached through a proxy that owns
    ``Authorization``, so the token must travel in another header. Hermes writes a secret to the profile's
    ``.env`` only behind ``Authorization: Bearer ${MCP_<NAME>_API_KEY}``; so the server is added that way
    first (the token goes to ``.env``), then replaced by an entry with ``headers``, which name that variable.
    Hermes keeps a removed server's ``.env`` line (§9). ``timeout``: seconds Hermes gives one tool call
    (its entry's ``timeout``; Hermes' default is 300)."""
    config: dict[str, object] = {"url": url, **({"timeout": timeout} if timeout is not None else {})}
    params = {"name": name, "config": config, "bearer_token": token}
    try:
        await conn.request("mcp.servers.add", params)
    except HermesRPCError as exc:
        if exc.code == EXISTS:
            return False
        raise
    if headers:
        await conn.request("mcp.servers.remove", {"name": name})
        await conn.request("mcp.servers.add", {"name": name, "config": {**config, "headers": dict(headers)}})
    return True


async def remove_mcp_server(conn: Requests, name: str) -> bool:
    """Remove the profile's server ``name``; False when there is none."""
    try:
        await conn.request("mcp.servers.remove", {"name": name})
    except HermesRPCError as exc:
        if exc.code == NOT_FOUND:
            return False
        raise
    return True


async def reload_mcp(conn: Requests) -> None:
    """Reload the MCP tools of every live session (``confirm``: the reload invalidates the prompt cache, which
    Hermes otherwise asks about first)."""
    await conn.request("reload.mcp", {"confirm": True})
