"""Hermes profiles on the Dashboard: which ones it serves (``profiles.list``), and keeping a connection in
one.

A profile is a whole Hermes home (its own config, model, sessions, cron jobs and MCP servers). A newer
Dashboard serves every profile of its machine from one process: a call carrying ``profile`` acts on that
profile's home (``tui_gateway/server.py`` ``_profile_scoped``/``_profile_home``), and a session created or
resumed with it keeps it for every later call by its live id. A name that is not a profile is error 4064
there, never a silent fall-back. hermes-agent 0.19.0 has no ``profiles.list``, falls back to the launch
profile for a name it does not know and lists only the launch profile's sessions, so a profile is "not
offered" there (docs/protocol/dashboard-newer.md §12).

Which methods take ``profile`` is in :data:`PROFILE_METHODS`: the ones that name no session (create, resume by
stored id, list) and the profile's MCP servers. A session's own calls need none: the server scopes them by the
session. Every name shown here is the server's text, untrusted: views render it through
:mod:`hermes_notebook.inert`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ...errors import HermesProtocolError, HermesUsageError
from .offered import Requester, call_offered

__all__ = ["PROFILE_METHODS", "Profile", "check_profile", "list_profiles", "with_profile"]

#: Methods to which a connection kept in one profile adds ``profile`` (every one accepts it on a newer
# Dashboard, : ``tui_gateway/contracts``). ``reload.mcp`` takes no ``profile`` (it reloads every live
# session's tools).
PROFILE_METHODS = frozenset(
    {
        "session.create",
        "session.resume",
        "session.list",
        "session.delete",
        "session.most_recent",
        "mcp.servers.list",
        "mcp.servers.add",
        "mcp.servers.remove",
        "mcp.servers.status",
        "model.options",
        "commands.catalog",
    }
)
#: Longest text kept of a profile's description or display name.
MAX_TEXT = 500


@dataclass(frozen=True)
class Profile:
    """One profile a Hermes serves: ``name`` (what ``profile=`` takes), whether it is the default, its
    model."""

    name: str
    is_default: bool = False
    model: str | None = None
    provider: str | None = None
    display_name: str = ""
    description: str = ""
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False)


def _text(value: Any) -> str:
    return value[:MAX_TEXT] if isinstance(value, str) else ""


def profile_rows(result: Any) -> list[Profile]:
    """``profiles.list``'s answer as :class:`Profile` values (rows without a name are skipped)."""
    if not isinstance(result, Mapping) or not isinstance(result.get("profiles"), list):
        raise HermesProtocolError("profiles.list answered without a profiles list")
    out = []
    for row in result["profiles"]:
        if not isinstance(row, Mapping) or not isinstance(row.get("name"), str) or not row["name"]:
            continue
        out.append(
            Profile(
                name=row["name"],
                is_default=row.get("is_default") is True,
                model=_text(row.get("model")) or None,
                provider=_text(row.get("provider")) or None,
                display_name=_text(row.get("display_name")),
                description=_text(row.get("description")),
                raw=dict(row),
            )
        )
    return out


async def list_profiles(conn: Requester) -> list[Profile]:
    """The profiles this Dashboard serves (``profiles.list``, without the session previews it can add)."""
    result = await call_offered(conn, "profiles.list", {"include_sessions": False}, what="choosing a profile")
    return profile_rows(result)


async def check_profile(conn: Requester, name: str) -> Profile:
    """The profile ``name``, or :class:`HermesUsageError` naming the ones there are (before anything else is
    sent)."""
    profiles = await list_profiles(conn)
    for profile in profiles:
        if profile.name == name:
            return profile
    known = ", ".join(sorted(p.name for p in profiles)[:20]) or "none"
    raise HermesUsageError(f"this Hermes has no profile {name!r} (its profiles: {known})", param="profile")


def with_profile(method: str, params: Mapping[str, Any], profile: str | None) -> dict[str, Any]:
    """``params`` with ``profile`` added when the connection is kept in one and ``method`` takes it."""
    out = dict(params)
    if profile is not None and method in PROFILE_METHODS:
        out.setdefault("profile", profile)
    return out
