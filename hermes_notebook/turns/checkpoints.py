"""Hermes' file checkpoints as data: the list, a checkpoint's changes file by file, a restore's outcome.

Hermes snapshots a directory **before** a turn's first file edit there (or a destructive command), at most
once per directory per turn (docs/protocol/dashboard-newer.md §15). So the oldest checkpoint taken while a
turn ran is the state before that turn: :func:`checkpoint_for_turn` finds it from the turn's start (and the
next turn's), and its diff against the working tree is what the turn (and everything after it) changed, file
by file (:func:`file_changes`). Every string here is the server's (paths, messages, diff lines): views show
them inert.
Pure: no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Literal

__all__ = [
    "DIFF_LIMIT",
    "Checkpoint",
    "CheckpointDiff",
    "FileChange",
    "RestoreResult",
    "checkpoint_for_turn",
    "file_changes",
    "parse_checkpoints",
    "parse_diff",
    "parse_restore",
]

#: Hermes cuts ``rollback.diff``'s diff at this many characters (``tui_gateway/methods_tools.py``).
DIFF_LIMIT = 4000
_MAX_TEXT = 500
_DIFF_HEADER = re.compile(r"^diff --git a/(.+?) b/(.+)$", re.M)
_PRE_ROLLBACK = (
    "pre-rollback snapshot"  # the message of the snapshot a restore takes first (checkpoint_manager.py)
)
_STAT_LINE = re.compile(r"^\s*(.+?)\s+\|\s+(?:\d+|Bin)", re.M)


def _text(value: Any, limit: int = _MAX_TEXT) -> str:
    return value[:limit] if isinstance(value, str) else ""


def _when(value: Any) -> datetime | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=timezone.utc)


@dataclass(frozen=True)
class Checkpoint:
    """One snapshot: ``hash`` (what diff and restore take), when it was taken, and Hermes' note (may be
    empty)."""

    hash: str
    timestamp: datetime | None
    message: str = ""


@dataclass(frozen=True)
class FileChange:
    """What changed in one file since a checkpoint: its path (relative to the session's folder) and diff
    lines.

    ``diff`` is empty for a file the stat names but Hermes cut from the diff (``CheckpointDiff.truncated``).
    """

    path: str
    status: Literal["modified", "added", "deleted"] = "modified"
    diff: str = ""
    added: int = 0
    removed: int = 0


@dataclass(frozen=True)
class CheckpointDiff:
    """A checkpoint against the files as they are now: Hermes' ``stat`` and the changes file by file."""

    hash: str
    stat: str
    files: tuple[FileChange, ...]
    truncated: bool = False


@dataclass(frozen=True)
class RestoreResult:
    """What a restore did: the files put back, those Hermes kept (edited by the user since), history rows
    dropped."""

    success: bool
    restored_to: str = ""
    files: tuple[str, ...] = ()
    skipped: tuple[str, ...] = ()
    history_removed: int = 0
    error: str = ""
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False)


def parse_checkpoints(result: Any) -> tuple[bool, list[Checkpoint]]:
    """``rollback.list``'s answer: whether checkpoints are on, and the checkpoints, newest first."""
    if not isinstance(result, Mapping):
        return False, []
    rows = result.get("checkpoints")
    rows = rows if isinstance(rows, list) else []
    found = [
        Checkpoint(_text(r.get("hash"), 64), _when(r.get("timestamp")), _text(r.get("message")))
        for r in rows
        if isinstance(r, Mapping) and isinstance(r.get("hash"), str) and r["hash"]
    ]
    return result.get("enabled") is not False, found


def file_changes(diff: str, stat: str = "") -> list[FileChange]:
    """A unified diff split file by file (``diff --git`` headers), plus files only the stat names (a cut
    diff)."""
    out: list[FileChange] = []
    headers = list(_DIFF_HEADER.finditer(diff))
    for n, header in enumerate(headers):
        end = headers[n + 1].start() if n + 1 < len(headers) else len(diff)
        body = diff[header.start() : end].rstrip("\n")
        lines = body.split("\n")
        status: Literal["modified", "added", "deleted"] = "modified"
        if any(line.startswith("new file mode") or line == "--- /dev/null" for line in lines[:6]):
            status = "added"
        elif any(line.startswith("deleted file mode") or line == "+++ /dev/null" for line in lines[:6]):
            status = "deleted"
        hunks = [i for i, line in enumerate(lines) if line.startswith("@@")]
        shown = lines[hunks[0] :] if hunks else []
        added = sum(1 for line in shown if line.startswith("+"))
        removed = sum(1 for line in shown if line.startswith("-"))
        out.append(FileChange(header.group(2), status, "\n".join(shown), added, removed))
    named = {change.path for change in out}
    for match in _STAT_LINE.finditer(stat):
        path = match.group(1).strip()
        if path not in named and " => " not in path and not path.startswith("..."):
            out.append(FileChange(path))
            named.add(path)
    return out


def parse_diff(hash: str, result: Any) -> CheckpointDiff:
    """``rollback.diff``'s answer for checkpoint ``hash``."""
    result = result if isinstance(result, Mapping) else {}
    diff, stat = _text(result.get("diff"), 10 * DIFF_LIMIT), _text(result.get("stat"), 10 * DIFF_LIMIT)
    return CheckpointDiff(hash, stat, tuple(file_changes(diff, stat)), truncated=len(diff) >= DIFF_LIMIT)


def _names(value: Any) -> tuple[str, ...]:
    return tuple(_text(v) for v in value if isinstance(v, str)) if isinstance(value, list) else ()


def parse_restore(result: Any) -> RestoreResult:
    """``rollback.restore``'s answer."""
    result = result if isinstance(result, Mapping) else {}
    removed = result.get("history_removed")
    success = result.get("success") is True
    return RestoreResult(
        success=success,
        restored_to=_text(result.get("restored_to"), 64),
        files=_names(result.get("restored_files"))
        or ((_text(result.get("file")),) if result.get("file") else ()),
        skipped=_names(result.get("skipped_user_edits")) + _names(result.get("skipped_oversize")),
        history_removed=removed if isinstance(removed, int) and not isinstance(removed, bool) else 0,
        error=_text(result.get("error")) or ("" if success else _text(result.get("reason"))),
        raw=dict(result),
    )


def checkpoint_for_turn(
    checkpoints: Sequence[Checkpoint],
    started: datetime,
    ended: datetime | None = None,
    *,
    known: Iterable[str] = (),
) -> Checkpoint | None:
    """The checkpoint that holds the files as they were before a turn that ran from ``started`` (until the
    next turn's start ``ended``): the oldest one taken in that time, or None when the turn changed no file
    Hermes saw.

    ``checkpoints`` newest first, as listed. Timestamps have whole seconds (``started`` is taken down to its
    second), so a checkpoint taken in the same second just before the turn would count: ``known``, the hashes
    listed before the turn started, makes it exact. A restore's own "pre-rollback snapshot" is never a turn's.
    """
    since = (started if started.tzinfo else started.astimezone()).replace(microsecond=0)
    ended = ended if ended is None or ended.tzinfo else ended.astimezone()
    skip = set(known)
    taken = [
        c
        for c in checkpoints
        if c.timestamp is not None
        and c.timestamp >= since
        and c.hash not in skip
        and (ended is None or c.timestamp < ended)
        and not c.message.startswith(_PRE_ROLLBACK)
    ]
    return taken[-1] if taken else None
