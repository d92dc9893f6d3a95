"""Hermes' own slash commands: the catalog (``commands.catalog``) and running one (``slash.exec``).

``slash.exec`` is the method meant for clients (docs/protocol/dashboard-newer.md §10): it runs the command in
the session's slash worker, or answers the structured directive ``command.dispatch`` would. A skill command is
refused there (4018 "use command.dispatch"), and only then ``command.dispatch`` is called. Output is the
server's text, untrusted: views show it inert.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ...errors import HermesRPCError, HermesUsageError
from .offered import call_offered

if TYPE_CHECKING:
    from .connection import DashboardConnection
    from .session import SessionRef

__all__ = [
    "MAX_ALIASES",
    "MAX_COMMAND_CHARS",
    "CommandOutcome",
    "catalog_entries",
    "commands_catalog",
    "parse_command",
    "run_command",
]

#: Longest command line sent (the name and its arguments).
MAX_COMMAND_CHARS = 4000
#: How many ``alias`` hops a command may take, so a loop of aliases ends.
MAX_ALIASES = 3
_NAME = re.compile(r"/?([A-Za-z0-9][A-Za-z0-9_.:-]{0,63})")
# A description that is an untranslated message key ("slash.shared.usage_suffix") says nothing to a reader.
_MESSAGE_KEY = re.compile(r"[a-z0-9_]+(?:\.[a-z0-9_]+)+")
_USE_DISPATCH = 4018


@dataclass(frozen=True)
class CommandOutcome:
    """What a slash command answered: text ``output`` (and a ``warning``), or a directive ``kind``.

    Directives (``command.dispatch``): ``send``/``skill`` ask the client to send ``message`` as the next
    prompt (show ``display``), ``prefill`` to put it in the composer, ``alias`` to run ``target`` instead.
    """

    command: str
    output: str = ""
    warning: str = ""
    kind: str = ""
    message: str = ""
    display: str = ""
    target: str = ""
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False)


def parse_command(line: str) -> tuple[str, str]:
    """``("/name", "args")`` of a command line, or :class:`HermesUsageError` (before anything is sent)."""
    if not isinstance(line, str) or not line.strip().startswith("/"):
        raise HermesUsageError("a Hermes command starts with '/', e.g. /help")
    if len(line) > MAX_COMMAND_CHARS:
        raise HermesUsageError(
            f"the command is too long ({len(line)} characters; at most {MAX_COMMAND_CHARS})"
        )
    head, _, rest = line.strip().partition(" ")
    match = _NAME.fullmatch(head)
    if match is None:
        raise HermesUsageError(f"{head[:40]!r} is not a command name (letters, digits and _.:-)")
    return f"/{match.group(1)}", rest.strip()


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def catalog_entries(result: Any) -> list[dict[str, str]]:
    """The catalog as ``[{"name": "/help", "description", "category"}]``, one entry per name, in the server's
    order."""
    if not isinstance(result, Mapping):
        return []
    groups: list[tuple[str, Any]] = []
    for category in result.get("categories") or ():
        if isinstance(category, Mapping):
            groups.append((_text(category.get("name")), category.get("pairs")))
    groups.append(("", result.get("pairs")))
    entries: dict[str, dict[str, str]] = {}
    for category_name, pairs in groups:
        for pair in pairs if isinstance(pairs, list) else ():
            if not (isinstance(pair, list) and pair and isinstance(pair[0], str)):
                continue
            name = pair[0] if pair[0].startswith("/") else f"/{pair[0]}"
            description = _text(pair[1]) if len(pair) > 1 else ""
            if _MESSAGE_KEY.fullmatch(description.strip()):
                description = ""
            if name not in entries:
                entries[name] = {"name": name, "description": description.strip(), "category": category_name}
    return list(entries.values())


async def commands_catalog(conn: DashboardConnection, ref: SessionRef | None = None) -> list[dict[str, str]]:
    """The server's slash commands (``commands.catalog``), as :func:`catalog_entries`."""
    result = await call_offered(conn, "commands.catalog", {}, what="Hermes' command catalog", ref=ref)
    return catalog_entries(result)


async def run_command(conn: DashboardConnection, ref: SessionRef, line: str) -> CommandOutcome:
    """Run ``/name args`` on the session (``slash.exec``; a skill through ``command.dispatch``).

    An ``alias`` directive is followed (the target with the same arguments), at most :data:`MAX_ALIASES`
    times.
    """
    name, arg = parse_command(line)
    for _ in range(MAX_ALIASES + 1):
        outcome = await _run_once(conn, ref, name, arg)
        if outcome.kind != "alias" or not outcome.target:
            return outcome
        name, _ = parse_command(outcome.target if outcome.target.startswith("/") else f"/{outcome.target}")
    raise HermesUsageError(f"{line.split()[0][:40]} leads through more than {MAX_ALIASES} aliases; not run")


async def _run_once(conn: DashboardConnection, ref: SessionRef, name: str, arg: str) -> CommandOutcome:
    command = f"{name} {arg}".strip()
    try:
        result = await call_offered(conn, "slash.exec", {"command": command}, what="Hermes commands", ref=ref)
    except HermesRPCError as exc:
        if exc.code != _USE_DISPATCH or "command.dispatch" not in str(exc):
            raise
        result = await call_offered(
            conn, "command.dispatch", {"name": name.lstrip("/"), "arg": arg}, what="Hermes commands", ref=ref
        )
    raw = dict(result) if isinstance(result, Mapping) else {}
    output = raw.get("output")
    return CommandOutcome(
        command=command,
        output="" if output is None else str(output),
        warning=_text(raw.get("warning")) or _text(raw.get("notice")),
        kind=_text(raw.get("type")),
        message=_text(raw.get("message")),
        display=_text(raw.get("display")),
        target=_text(raw.get("target")),
        raw=raw,
    )
