"""Telling Hermes about the kernel's tool server: registered on a Dashboard that can, a config snippet
otherwise.

Through the sharing conversation's profile servers (``conversation.mcp``,
:class:`~hermes_notebook.session.mcp_servers.McpServers`: the Dashboard's ``mcp.servers.*`` and
``reload.mcp``, where it has them). There the server is added to the profile (the bearer token goes to Hermes'
own ``.env``, only a ``${VAR}`` template to ``config.yaml``) and every live session reloads its MCP tools. A
Dashboard without them (0.19.0) gets the user the ``mcp_servers`` snippet to paste, plus the path of a 0600
file holding the token (never the token in an output), and a restart of Hermes is needed.

Names are ``notebook_<8 hex>``, one per kernel. A kernel that died without cleaning up leaves its entry
behind; the next kernel to register removes every ``notebook_*`` entry whose loopback URL no longer accepts a
connection (only when the Dashboard runs on this machine: another host's loopback is not ours to probe,
neither here nor when a name is taken in :func:`register`). Hermes never deletes the ``.env`` line of a
removed server, so a kernel registers under the first free name of a fixed series per user (:func:`free_name`;
the series is keyed by the user's name, uid and the Hermes profile, so two users sharing a uid in containers,
or two profiles, never draw the same names): a new kernel takes over a dead one's name and line instead of
adding another. Where it is registered is kept per Dashboard *and profile*: a second profile on the same
Dashboard is registered too. A restarted tool server (another port and token) is registered again, never left
to the old entry. The 0.19.0 token file is created afresh (``O_EXCL | O_NOFOLLOW``, in a 0700 directory of
this user) and removed when the share ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import getpass
import hashlib
import os
import re
import secrets
import socket
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from ..errors import HermesRPCError, HermesUsageError
from ..session.mcp_servers import McpServers
from .exposure import Exposure
from .run_limits import tool_call_timeout

__all__ = [
    "NAME_PREFIX",
    "Registrations",
    "config_snippet",
    "env_key",
    "free_name",
    "is_stale",
    "place",
    "register",
    "remove_stale",
    "remove_token_file",
    "slot_name",
    "supports_registration",
    "token_file",
    "unregister",
]

#: Every kernel's server is named ``notebook_<8 hex>``.
NAME_PREFIX = "notebook_"
#: Names tried by :func:`free_name` before a random one.
NAME_SLOTS = 32
_LOOPBACK = ("127.0.0.1", "localhost", "::1")
_NAME = re.compile(r"notebook_[0-9a-f]{8}")


@dataclass
class _Entry:
    servers: McpServers
    #: The server URL Hermes was given (a restarted server has another port and token: registered again).
    server_url: str


def place(dashboard_url: str, profile: str | None) -> str:
    """The key of one registration: a Dashboard and a profile on it (each profile has its own servers)."""
    return f"{dashboard_url}#{profile or ''}"


class Registrations:
    """Where this kernel's tool server is registered, one entry per Dashboard and profile, and under which
    name (settled at the first share: a registration slot, or a random name where the Dashboard registers
    nothing)."""

    def __init__(self) -> None:
        self.name = f"{NAME_PREFIX}{secrets.token_hex(4)}"
        self._named = False
        self._entries: dict[str, _Entry] = {}  # place(Dashboard URL, profile) -> where, and what it was given

    async def ensure(
        self,
        servers: McpServers,
        dashboard_url: str,
        server_url: str,
        token: str,
        exposure: Exposure | None = None,
        profile: str | None = None,
    ) -> bool:
        """Register ``server_url`` in ``profile`` on ``servers``' Dashboard unless it is there already; False
        where that Dashboard cannot register servers (the user adds the snippet). ``exposure``: the headers
        Hermes sends where a proxy owns Authorization."""
        key = place(dashboard_url, profile)
        try:
            current = self._entries.get(key)
            if current is not None and current.server_url == server_url:
                return True  # registered there already (a new policy): nothing to ask the Dashboard
            if not await supports_registration(servers):
                return False
            if current is not None:  # the server restarted: Hermes must not keep the old port and token
                await unregister(servers, self.name)
            await remove_stale(servers, keep={self.name}, dashboard_url=dashboard_url)
            for attempt in range(3):
                if not self._named:  # a dead kernel's name is taken over: its .env line is reused
                    self.name = await free_name(servers, profile)
                headers = exposure.headers(env_key(self.name)) if exposure is not None else None
                if await register(
                    servers, self.name, server_url, token, headers, dashboard_url=dashboard_url
                ):
                    break
                if self._named or attempt == 2:  # another kernel took that name a moment ago: the next one
                    raise HermesUsageError(f"the name {self.name} is registered by another live kernel")
            self._entries[key] = _Entry(servers, server_url)
            return True
        finally:
            self._named = True

    def forget(self, dashboard_url: str | None = None, profile: str | None = None) -> list[_Entry]:
        """Drop the entry of ``dashboard_url`` and ``profile`` (without a URL, every entry); the entries
        dropped, to :meth:`undo`."""
        if dashboard_url is None:
            entries, self._entries = list(self._entries.values()), {}
            return entries
        entry = self._entries.pop(place(dashboard_url, profile), None)
        return [] if entry is None else [entry]

    async def undo(self, entry: _Entry, timeout: float) -> None:
        """Unregister a forgotten entry (a Dashboard that is gone or slow leaves a stale one)."""
        with contextlib.suppress(Exception):
            await asyncio.wait_for(unregister(entry.servers, self.name), timeout)


async def supports_registration(servers: McpServers) -> bool:
    """True when the Dashboard can add MCP servers while it runs (``mcp.servers.*`` and ``reload.mcp``)."""
    return await servers.offered()


async def register(
    servers: McpServers,
    name: str,
    url: str,
    token: str,
    headers: dict[str, str] | None = None,
    *,
    dashboard_url: str | None = None,
) -> bool:
    """Add the server to the profile and reload MCP tools in every live session. An entry of that name left
    by a dead server (its URL no longer answers) is replaced, probed only for a Dashboard on this machine;
    False when a live one holds the name (or it cannot be told, for a remote Dashboard)."""
    timeout = tool_call_timeout()  # Hermes waits for the longest run this kernel allows
    if not await servers.add(name, url, token, headers, timeout):
        if dashboard_url is not None and not is_local(dashboard_url):
            return False  # its entry's loopback URL is the Dashboard host's, not ours to probe
        if not await _dead_entry(servers, name):
            return False
        await servers.remove(name)
        if not await servers.add(name, url, token, headers, timeout):
            return False
    await servers.reload()
    return True


async def unregister(servers: McpServers, name: str) -> bool:
    """Remove the server and reload; False when it was not registered (already gone)."""
    if not await servers.remove(name):
        return False
    await servers.reload()
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


async def _listed(servers: McpServers) -> dict[str, str | None]:
    """The profile's ``notebook_*`` registrations: name -> URL."""
    return {name: url for name, url in (await servers.listed()).items() if _NAME.fullmatch(name)}


async def _dead_entry(servers: McpServers, name: str) -> bool:
    url = (await _listed(servers)).get(name)
    return url is not None and await asyncio.to_thread(is_stale, url)


async def free_name(servers: McpServers, profile: str | None = None) -> str:
    """The first name of this user's series in ``profile`` (:func:`slot_name`) no registration uses (call
    :func:`remove_stale` first, so dead kernels' names are free again); a random name when all are taken."""
    taken = await _listed(servers)
    for slot in range(NAME_SLOTS):
        if (name := slot_name(slot, profile)) not in taken:
            return name
    return f"{NAME_PREFIX}{os.urandom(4).hex()}"


def slot_name(slot: int, profile: str | None = None, user: str | None = None) -> str:
    """Registration name number ``slot`` of this user in ``profile``: the same in every kernel, so names (and
    Hermes' ``.env`` lines, which it never removes) are reused rather than piling up. Keyed by the user's name
    and uid (containers often share a uid between users) and the profile."""
    who = user if user is not None else _user()
    seed = f"hermes-notebook:{who}:{profile or ''}:{slot}"
    return NAME_PREFIX + hashlib.sha256(seed.encode()).hexdigest()[:8]


def _user() -> str:
    """This user: the login name (JupyterHub's ``JUPYTERHUB_USER`` first) and the uid."""
    name = os.environ.get("JUPYTERHUB_USER") or ""
    if not name:
        with contextlib.suppress(Exception):
            name = getpass.getuser()
    uid = os.getuid() if hasattr(os, "getuid") else "-"
    return f"{name}:{uid}"


async def remove_stale(servers: McpServers, keep: set[str], dashboard_url: str | None = None) -> list[str]:
    """Remove ``notebook_*`` registrations (other than ``keep``) whose server no longer answers; their names.

    Only for a Dashboard on this machine (``dashboard_url`` on loopback): an entry's ``127.0.0.1`` URL means
    the Dashboard's host, and probing ours would remove another machine's live kernels."""
    if dashboard_url is not None and not is_local(dashboard_url):
        return []
    removed = []
    for name, url in (await _listed(servers)).items():
        if name not in keep and await asyncio.to_thread(is_stale, url):
            with contextlib.suppress(HermesRPCError):
                if await servers.remove(name):
                    removed.append(name)
    if removed:
        await servers.reload()
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


def config_snippet(name: str, url: str, exposure: Exposure | None = None) -> str:
    """The ``~/.hermes/config.yaml`` entry for this server; the token comes from ``~/.hermes/.env``."""
    headers = (exposure.headers(env_key(name)) if exposure is not None else None) or {
        "Authorization": f"Bearer ${{{env_key(name)}}}"
    }
    lines = "".join(f'      {header}: "{value}"\n' for header, value in headers.items())
    return (
        f"mcp_servers:\n  {name}:\n    url: {url}\n    timeout: {tool_call_timeout()}\n    headers:\n{lines}"
    )
