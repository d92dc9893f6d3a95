"""Telling Hermes about the kernel's tool server: registered on a Dashboard that can, a config snippet
otherwise.

Feature detection, not versions: a Dashboard that answers ``mcp.servers.list`` has the ``mcp.servers.*``
family and ``reload.mcp`` (docs/protocol/dashboard-newer.md §9); a 0.19.0 Dashboard answers -32601. There the
server is added to the profile (``mcp.servers.add``: the bearer token goes to Hermes' own ``.env``, only a
``${VAR}`` template to ``config.yaml``) and every live session reloads its MCP tools (``reload.mcp``).
Elsewhere the user gets the ``mcp_servers`` snippet to paste, plus the path of a 0600 file holding the token
(never the token in an output), and a restart of Hermes is needed.

Names are ``notebook_<8 hex>``, one per kernel. A kernel that died without cleaning up leaves its entry
behind; the next kernel to register removes every ``notebook_*`` entry whose loopback URL no longer accepts a
connection (only when the Dashboard runs on this machine: another host's loopback is not ours to probe).
Hermes never deletes the ``.env`` line of a removed server, so a kernel registers under the first free name of
a fixed series per OS user (:func:`free_name`): a new kernel takes over a dead one's name and line instead of
adding another. A restarted tool server (another port and token) is registered again, never left to the old
entry. The 0.19.0 token file is created afresh (``O_EXCL | O_NOFOLLOW``, in a 0700 directory of this user) and
removed when the share ends.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import socket
import stat
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from ..errors import HermesRPCError, HermesUsageError

if TYPE_CHECKING:
    from ..client.dashboard import DashboardConnection

__all__ = [
    "METHOD_NOT_FOUND",
    "NAME_PREFIX",
    "config_snippet",
    "env_key",
    "free_name",
    "is_stale",
    "register",
    "remove_stale",
    "remove_token_file",
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
#: Hermes' error code for ``mcp.servers.add`` of a name that exists.
EXISTS = 4090
#: Names tried by :func:`free_name` before a random one.
NAME_SLOTS = 32
_LOOPBACK = ("127.0.0.1", "localhost", "::1")
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
    """Add the server to the Dashboard's profile and reload MCP tools in every live session; the server
    summary. An entry of that name left by this kernel's earlier server (its URL no longer answers) is
    replaced."""
    params = {"name": name, "config": {"url": url}, "bearer_token": token}
    try:
        result = await conn.request("mcp.servers.add", params)
    except HermesRPCError as exc:
        if exc.code != EXISTS or not await _dead_entry(conn, name):
            raise
        await conn.request("mcp.servers.remove", {"name": name})
        result = await conn.request("mcp.servers.add", params)
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


def is_local(url: str | None) -> bool:
    """True when ``url`` names this machine's loopback."""
    return urlsplit(url or "").hostname in _LOOPBACK


def is_stale(url: str | None, timeout: float = 1.0) -> bool:
    """True when a loopback URL no longer accepts a connection (its kernel is gone). Other hosts: never
    ours."""
    parts = urlsplit(url or "")
    if parts.hostname not in _LOOPBACK or parts.port is None:
        return False
    try:
        with socket.create_connection((parts.hostname, parts.port), timeout=timeout):
            return False
    except OSError:
        return True


async def _listed(conn: DashboardConnection) -> dict[str, str | None]:
    """The Dashboard's ``notebook_*`` registrations: name -> URL."""
    listed = await conn.request("mcp.servers.list", {})
    servers = (listed or {}).get("servers") or [] if isinstance(listed, dict) else []
    return {
        str(s.get("name")): s.get("url")
        for s in servers
        if isinstance(s, dict) and _NAME.fullmatch(str(s.get("name") or ""))
    }


async def _dead_entry(conn: DashboardConnection, name: str) -> bool:
    import asyncio

    url = (await _listed(conn)).get(name)
    return url is not None and await asyncio.to_thread(is_stale, url)


async def free_name(conn: DashboardConnection) -> str:
    """The first name of this user's series (:func:`slot_name`) no registration uses (call
    :func:`remove_stale` first, so dead kernels' names are free again); a random name when all are taken."""
    taken = await _listed(conn)
    for slot in range(NAME_SLOTS):
        if (name := slot_name(slot)) not in taken:
            return name
    return f"{NAME_PREFIX}{os.urandom(4).hex()}"


def slot_name(slot: int) -> str:
    """Registration name number ``slot`` of this OS user: the same in every kernel, so names (and Hermes'
    ``.env`` lines, which it never removes) are reused rather than piling up."""
    user = os.getuid() if hasattr(os, "getuid") else os.environ.get("USERNAME", "user")
    return NAME_PREFIX + hashlib.sha256(f"hermes-notebook:{user}:{slot}".encode()).hexdigest()[:8]


async def remove_stale(
    conn: DashboardConnection, keep: set[str], dashboard_url: str | None = None
) -> list[str]:
    """Remove ``notebook_*`` registrations (other than ``keep``) whose server no longer answers; their names.

    Only for a Dashboard on this machine (``dashboard_url`` on loopback): an entry's ``127.0.0.1`` URL means
    the Dashboard's host, and probing ours would remove another machine's live kernels."""
    import asyncio

    if dashboard_url is not None and not is_local(dashboard_url):
        return []
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
    """The ``.env`` variable Hermes reads a server's bearer token from (its own naming:
    ``MCP_<NAME>_API_KEY``)."""
    return f"MCP_{re.sub(r'[^A-Za-z0-9_]', '_', name.upper()).strip('_')}_API_KEY"


def token_file(name: str, token: str) -> Path:
    """Write the token to a new file only this user can read (0600, in a 0700 directory of this user); its
    path.

    The directory must be a real directory owned by this user (not a link another user planted in the shared
    temp folder); an old file of that name is removed first and the new one created with ``O_EXCL |
    O_NOFOLLOW``, so the token is never written through a link or into a file someone else opened."""
    folder = (
        Path(tempfile.gettempdir()) / f"hermes-notebook-{os.getuid() if hasattr(os, 'getuid') else 'user'}"
    )
    with contextlib.suppress(FileExistsError):
        folder.mkdir(mode=0o700)
    info = os.lstat(folder)
    if not stat.S_ISDIR(info.st_mode) or (hasattr(os, "getuid") and info.st_uid != os.getuid()):
        raise HermesUsageError(f"{folder} is not a directory of yours: the token file is not written there")
    os.chmod(folder, 0o700)
    path = folder / f"{name}.token"
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)  # never follows a link: removes the link itself
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(token)
    return path


def remove_token_file(path: Path) -> None:
    """Delete a token file :func:`token_file` wrote (the share ended: the token is dead)."""
    with contextlib.suppress(OSError):
        os.unlink(path)


def config_snippet(name: str, url: str) -> str:
    """The ``~/.hermes/config.yaml`` entry for this server; the token comes from ``~/.hermes/.env``."""
    return (
        "mcp_servers:\n"
        f"  {name}:\n"
        f"    url: {url}\n"
        "    headers:\n"
        f'      Authorization: "Bearer ${{{env_key(name)}}}"\n'
    )
