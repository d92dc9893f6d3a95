"""Which tool part a kernel tool call answers: the one whose arguments are the call's, and only once.

Why: Hermes offers the kernel's MCP tools to every session of the profile. ``mcp.servers.add`` writes the
server into the profile's ``config.yaml`` and ``reload.mcp`` refreshes every live session
(docs/protocol/dashboard-newer.md
§9); neither server can scope a server to one session (``tools.configure`` with a ``session_id`` persists to
the same config). So a call reaching the kernel may come from a cron job, a gateway chat or another Dashboard
client while a notebook turn runs. A call is answered only for a tool part that asked for exactly it:

- the part is running in an open turn of a connection that shares the kernel, and is named exactly
  ``mcp__<server>__<tool>`` (both versions: ``tools/mcp_tool.py`` ``mcp_prefixed_tool_name``), never by a
  substring or an older single-underscore form, which cannot tell server from tool;
- its arguments are the call's. A newer Dashboard's ``tool.start`` carries them (``args``, verified live:
  ``{"name": "df"}`` for ``describe``); 0.19.0's carries only a preview (``context``: ``agent/display.py``
  ``build_tool_preview`` L420-558, the first of query/text/command/path/name/prompt/code/goal on one line, cut
  to 80 characters by ``tui_gateway/server.py`` ``_tool_ctx`` L3902-3908), which must be the call's own
  (:func:`hermes_preview`); its ``tool.complete`` then brings the arguments, which are checked against the
  call's afterwards (:func:`part_arguments`);
- a part answers at most one call for the life of its turn (:class:`Claims`): another call for it competes and
  is refused, and so is a call whose arguments no running part asked for. Both are shown in the turn as a
  notice;
- on 0.19.0 a tool whose arguments have no preview key (the cell tools: ``index``, ``source``) shows an empty
  preview, so any session's call fits any running part of that name: it is bound only when that is
  unambiguous (the fitting parts are all in one conversation), and then as *unverified*
  (:attr:`Bound.verified`: the diff or Run card says the caller could not be verified on this Hermes).

The turns looked at are those each sharing conversation runs now (``Conversation.running_turns``: any face's
turn, the chat's and ``%hermes``'s alike), never every turn of a connection (:func:`find_call`).
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

from ..turns import Part
from .call import CallingTurn

__all__ = [
    "CHECK_WAIT",
    "ROUTE_WAIT",
    "Bound",
    "Claims",
    "Sharing",
    "arguments_fit",
    "check_completion",
    "find_call",
    "hermes_preview",
    "part_arguments",
    "tool_name",
]

#: Seconds a call waits for its tool part to reach this kernel (the event and the call travel separately).
ROUTE_WAIT = 5.0
#: Seconds after an answered call within which its part's ``tool.complete`` arguments are checked (0.19.0).
CHECK_WAIT = 30.0

#: The argument keys Hermes' preview takes its text from, in order (0.19.0 ``agent/display.py`` L539).
PREVIEW_KEYS = ("query", "text", "command", "path", "name", "prompt", "code", "goal")
#: Characters of a 0.19.0 tool preview (``_tool_ctx``: ``max_len=80``).
PREVIEW_CHARS = 80


def tool_name(server: str, tool: str) -> str:
    """The name Hermes gives ``tool`` of MCP server ``server`` (our names need none of its sanitizing)."""
    return f"mcp__{server}__{tool}"


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


class Conversing(Protocol):
    """What binding reads of a sharing conversation (:class:`~hermes_notebook.session.Conversation`)."""

    def running_turns(self) -> Sequence[CallingTurn]: ...


class Sharing(Protocol):
    """A share as binding sees it: the conversation whose turns its calls may come from."""

    @property
    def conversation(self) -> Conversing: ...


S = TypeVar("S", bound=Sharing)


@dataclass(frozen=True)
class Bound(Generic[S]):
    """A call bound to the tool part that asked for it: the share that answers, the turn, the part."""

    share: S
    turn: CallingTurn
    part_id: str
    #: The part knew the call's arguments (a newer ``tool.start``); else only its preview matched.
    exact: bool
    #: The part's arguments or a non-empty preview matched; False: 0.19.0 showed nothing that tells callers
    #: apart.
    verified: bool = True


async def find_call(
    shares: Sequence[S],
    server: str,
    tool: str,
    arguments: Mapping[str, Any],
    claims: Claims,
    wait: float | None = None,
) -> Bound[S] | None:
    """The running tool part for ``tool`` of MCP server ``server`` that asked for exactly this call, claimed
    for it: in a turn a sharing conversation runs now. Waits ``wait`` seconds for its ``tool.start`` (which
    travels apart from the call). A call that finds only a part that answered one already, or parts asking
    for other arguments, is None, with a notice in those turns. ``wait`` defaults to :data:`ROUTE_WAIT`."""
    name = tool_name(server, tool)
    blind = hermes_preview(arguments) == ""  # a 0.19.0 preview could not tell this call from another
    loop = asyncio.get_running_loop()
    deadline = loop.time() + (ROUTE_WAIT if wait is None else wait)
    while True:
        running: list[str] = []
        competing: dict[str, CallingTurn] = {}
        mismatched: dict[str, CallingTurn] = {}
        unverified: list[tuple[S, CallingTurn, str]] = []
        for share in shares:
            for turn in share.conversation.running_turns():
                running.append(turn.id)
                for part in turn.message.parts:
                    if part.kind != "tool" or part.status != "running" or part.name != name:
                        continue
                    exact = part_arguments(part) is not None
                    if not arguments_fit(part, arguments):
                        mismatched[turn.id] = turn
                    elif claims.claimed(turn.id, part.id):
                        competing[turn.id] = turn
                    elif not exact and blind:
                        unverified.append((share, turn, part.id))
                    elif claims.claim(turn.id, part.id):
                        return Bound(share, turn, part.id, exact)
        claims.forget_ended(running)
        if unverified:
            return _bind_unverified(tool, unverified, claims)
        if loop.time() >= deadline:
            _refused(tool, competing, mismatched)
            return None
        await asyncio.sleep(0.05)


def _bind_unverified(
    tool: str, candidates: Sequence[tuple[S, CallingTurn, str]], claims: Claims
) -> Bound[S] | None:
    """A call 0.19.0 shows no preview of: bound to the first fitting part when every fitting part is in one
    conversation (unverified), else refused with a notice in each (which one called cannot be told)."""
    conversations = {id(share.conversation) for share, _turn, _part in candidates}
    if len(conversations) == 1:
        share, turn, part_id = candidates[0]
        if claims.claim(turn.id, part_id):
            return Bound(share, turn, part_id, exact=False, verified=False)
    for _share, turn, _part in candidates:
        turn.note(
            f"A call of the kernel tool {tool} was refused: this Hermes does not say which session made it, "
            "and more than one conversation on this kernel was running that tool, so it could not be told "
            "whose it was. Nothing was changed."
        )
    return None


def _refused(tool: str, competing: Mapping[str, CallingTurn], mismatched: Mapping[str, CallingTurn]) -> None:
    for turn in competing.values():
        turn.note(
            f"A second call of the kernel tool {tool} for a step that was answered already was refused (each "
            "step is answered once): another Hermes session may be using this notebook's tools."
        )
    for turn_id, turn in mismatched.items():
        if turn_id not in competing:
            turn.note(
                f"A call of the kernel tool {tool} whose arguments no step of this turn asked for was "
                "refused: another Hermes session may be using this notebook's tools."
            )


async def check_completion(bound: Bound[Any], tool: str, arguments: Mapping[str, Any]) -> None:
    """0.19.0 binds by preview: once the part completes, its arguments must be the ones answered (else the
    turn says so)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + CHECK_WAIT
    while loop.time() < deadline and not bound.turn.done:
        part = next((p for p in bound.turn.message.parts if p.id == bound.part_id), None)
        known = None if part is None else part_arguments(part)
        if known is not None:
            if known != arguments:
                bound.turn.note(
                    f"The kernel answered a call of {tool} for a step that, as Hermes reports it now, asked "
                    "for other arguments: another Hermes session may have used this notebook's tools."
                )
            return
        await asyncio.sleep(0.2)
