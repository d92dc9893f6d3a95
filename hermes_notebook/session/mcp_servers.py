"""The MCP servers of a conversation's Hermes profile: what the kernel's tool server registers itself with.

Why on the conversation: the servers belong to the profile the conversation's Dashboard connection is kept in
(``profile`` goes with each call), and the kernel's floor reaches the Dashboard only through the conversation
(it never imports the client). The wire calls are ``client/dashboard/mcp_servers.py``'s.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING

from ..client.dashboard.mcp_servers import (
    add_mcp_server,
    list_mcp_servers,
    mcp_servers_offered,
    reload_mcp,
    remove_mcp_server,
)

if TYPE_CHECKING:
    from ..client.dashboard.mcp_servers import Requests

__all__ = ["McpServers"]


class McpServers:
    """``conversation.mcp``: list, add and remove the profile's MCP servers, and reload every session's
    tools."""

    def __init__(self, dashboard: Callable[[], Awaitable[Requests]]) -> None:
        self._dashboard = dashboard

    async def offered(self) -> bool:
        """True when this Dashboard can add servers while it runs (a newer Hermes; 0.19.0 cannot)."""
        return await mcp_servers_offered(await self._dashboard())

    async def listed(self) -> dict[str, str | None]:
        """The profile's servers: name -> URL."""
        return await list_mcp_servers(await self._dashboard())

    async def add(
        self,
        name: str,
        url: str,
        token: str,
        headers: Mapping[str, str] | None = None,
        timeout: int | None = None,
    ) -> bool:
        """Add a server (its bearer token goes to Hermes' ``.env``; ``headers``: the ``${VAR}`` templates
        Hermes sends instead, where a proxy owns Authorization; ``timeout``: seconds Hermes gives a tool
        call); False when the name is taken."""
        return await add_mcp_server(await self._dashboard(), name, url, token, headers, timeout)

    async def remove(self, name: str) -> bool:
        """Remove a server; False when there is none of that name."""
        return await remove_mcp_server(await self._dashboard(), name)

    async def reload(self) -> None:
        """Every live session picks the servers' tools up again."""
        await reload_mcp(await self._dashboard())
