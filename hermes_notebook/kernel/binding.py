"""Which tool part a kernel tool call answers: the one whose arguments are the call's, and only once.

Why: Hermes offers the kernel's MCP tools to every session of the profile. ``mcp.servers.add`` writes the
server into the profile's ``config.yaml`` and ``reload.mcp`` refreshes every live session
(docs/protocol/dashboard-newer.md
§9); neither server can scope a server to one session (``tools.configure`` with a ``session_id`` persists to
the same config). So a call reaching the kernel may come from a cron job, a gateway chat or another Dashboard
client while a notebook turn runs. A call is answered only for a tool part that asked for exactly it:

- the part is running in an open turn of a connection that shares the kernel, and is named exactly
  ``mcp__<server>__<tool>`` (0.19.0: ``mcp_<server>_<tool>``), never by a substring;
- its arguments are the call's. A newer Dashboard's ``tool.start`` carries them (``args``, verified live:
  ``{"name": "df"}`` for ``describe``); 0.19.0's carries only a preview (``context``: ``agent/display.py``
  ``build_tool_preview`` L420-558, the first of query/text/command/path/name/prompt/code/goal on one line, cut
  to 80 characters by ``tui_gateway/server.py`` ``_tool_ctx`` L3902-3908), which must be the call's own
  (:func:`hermes_preview`); its ``tool.complete`` then brings the arguments, which are checked against the
  call's afterwards (:func:`part_arguments`);
- a part answers at most one call for the life of its turn (:class:`Claims`): another call for it competes and
  is refused, and so is a call whose arguments no running part asked for. Both are shown in the turn as a
  notice.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable, Mapping
from typing import Any

from ..turns import Part

__all__ = ["Claims", "arguments_fit", "hermes_preview", "part_arguments", "tool_names"]

#: The argument keys Hermes' preview takes its text from, in order (0.19.0 ``agent/display.py`` L539).
PREVIEW_KEYS = ("query", "text", "command", "path", "name", "prompt", "code", "goal")
#: Characters of a 0.19.0 tool preview (``_tool_ctx``: ``max_len=80``).
PREVIEW_CHARS = 80


def tool_names(server: str, tool: str) -> tuple[str, str]:
    """The names Hermes gives ``tool`` of MCP server ``server``: newer ``mcp__s__t``, 0.19.0 ``mcp_s_t``."""
    return f"mcp__{server}__{tool}", f"mcp_{server}_{tool}"


def hermes_preview(arguments: Mapping[str, Any]) -> str:
    """The ``context`` a 0.19.0 ``tool.start`` shows for an MCP tool called with ``arguments`` ("" for
    none)."""
    key = next((k for k in PREVIEW_KEYS if k in arguments), None)
    if key is None:
        return ""
    value = arguments[key]
    if isinstance(value, list):
        value = value[0] if value else ""
    preview = " ".join(str(value).split())
    return preview if len(preview) <= PREVIEW_CHARS else preview[: PREVIEW_CHARS - 3] + "..."


def part_arguments(part: Part) -> dict[str, Any] | None:
    """The arguments a tool part carries as an object (a newer ``tool.start``'s ``args``, any
    ``tool.complete``'s), or None when it carries only a preview."""
    args = part.arguments
    if isinstance(args, str):
        try:
            args = json.loads(args)
        except ValueError:
            return None
    return dict(args) if isinstance(args, dict) else None


def _same(asked: Any, given: Any) -> bool:
    """One argument as the model asked for it and as the tool received it (the MCP SDK turns ``"2"`` into
    ``2`` for an ``int`` parameter)."""
    if asked == given:
        return True
    scalars = (str, int, float)
    return isinstance(asked, scalars) and isinstance(given, scalars) and str(asked) == str(given)


def arguments_fit(part: Part, arguments: Mapping[str, Any]) -> bool:
    """Whether the part asked for a call with ``arguments`` (every parameter the tool received has the value
    the part asked for; keys the tool does not take are not compared), or, knowing only its preview, with that
    one."""
    known = part_arguments(part)
    if known is not None:
        return all(key in known and _same(known[key], value) for key, value in arguments.items())
    return (part.preview or "") == hermes_preview(arguments)


class Claims:
    """Which parts have answered a call: ``(turn id, part id)``, kept for the life of the turn
    (thread-safe)."""

    def __init__(self) -> None:
        self._claimed: set[tuple[str, str]] = set()
        self._lock = threading.Lock()

    def claim(self, turn_id: str, part_id: str) -> bool:
        """Take the part for one call; False when it answered one already."""
        with self._lock:
            if (turn_id, part_id) in self._claimed:
                return False
            self._claimed.add((turn_id, part_id))
            return True

    def claimed(self, turn_id: str, part_id: str) -> bool:
        """True once the part has answered a call."""
        with self._lock:
            return (turn_id, part_id) in self._claimed

    def forget_ended(self, running: Iterable[str]) -> None:
        """Drop the claims of turns no longer running (their parts can get no more calls)."""
        alive = set(running)
        with self._lock:
            self._claimed = {claim for claim in self._claimed if claim[0] in alive}
