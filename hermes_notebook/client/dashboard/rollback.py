"""Putting files back: Hermes' checkpoints of a session's folder (``rollback.list``, ``rollback.diff``,
``rollback.restore``), through the connection's public API.

Both servers offer the three methods (docs/protocol/dashboard-newer.md §15); checkpoints are taken only where
the Hermes runs with them on (``checkpoints.enabled``, or ``HERMES_TUI_CHECKPOINTS`` for a 0.19.0 Dashboard):
a list says ``enabled``, and a diff or restore there is refused in one line. A restore of one file touches
only that file. A restore of a whole checkpoint also drops the session's last turn, which only a Hermes that
rewrites the stored transcript does for real (0.19.0 pops its in-memory context and its history keeps the
turn, as with undo): there it is "not offered", and files are restored one at a time. A restore while a turn
runs is busy (4009).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ...errors import HermesUsageError
from ...turns.checkpoints import (
    Checkpoint,
    CheckpointDiff,
    RestoreResult,
    parse_checkpoints,
    parse_diff,
    parse_restore,
)
from .offered import call_offered
from .rewind import check_rewind

if TYPE_CHECKING:
    from .connection import DashboardConnection
    from .session import SessionRef

__all__ = ["Checkpoints", "checkpoint_diff", "list_checkpoints", "restore_checkpoint"]

_HASH = re.compile(r"[0-9a-f]{4,64}")
_WHAT = "rewinding files"


@dataclass(frozen=True)
class Checkpoints:
    """A session folder's checkpoints, newest first; ``enabled`` is False where the Hermes takes none."""

    enabled: bool
    checkpoints: tuple[Checkpoint, ...]


def _hash(checkpoint: Checkpoint | str) -> str:
    value = checkpoint.hash if isinstance(checkpoint, Checkpoint) else checkpoint
    if not isinstance(value, str) or not _HASH.fullmatch(value):
        raise HermesUsageError(
            f"a checkpoint is a Checkpoint or its hash (hex digits); got {str(value)[:70]!r}"
        )
    return value


def _file(path: str) -> str:
    parts = path.replace("\\", "/").split("/") if isinstance(path, str) else []
    if not path or path.startswith("/") or ".." in parts or "\x00" in path or len(path) > 1000:
        raise HermesUsageError(
            f"file_path is a path inside the session's folder, as a diff names it; got {path!r}"
        )
    return path


async def list_checkpoints(conn: DashboardConnection, ref: SessionRef) -> Checkpoints:
    """The checkpoints of the session's folder (``rollback.list``)."""
    enabled, found = parse_checkpoints(await call_offered(conn, "rollback.list", {}, what=_WHAT, ref=ref))
    return Checkpoints(enabled, tuple(found))


async def _enabled(conn: DashboardConnection, ref: SessionRef) -> None:
    if not (await list_checkpoints(conn, ref)).enabled:
        raise HermesUsageError(
            "this Hermes takes no checkpoints of files (checkpoints.enabled is off in its "
            "config.yaml; a 0.19.0 Dashboard needs HERMES_TUI_CHECKPOINTS=1)"
        )


async def checkpoint_diff(
    conn: DashboardConnection, ref: SessionRef, checkpoint: Checkpoint | str
) -> CheckpointDiff:
    """What changed in the session's folder since ``checkpoint``, file by file (``rollback.diff``)."""
    value = _hash(checkpoint)
    await _enabled(conn, ref)
    return parse_diff(value, await call_offered(conn, "rollback.diff", {"hash": value}, what=_WHAT, ref=ref))


async def restore_checkpoint(
    conn: DashboardConnection, ref: SessionRef, checkpoint: Checkpoint | str, file_path: str | None = None
) -> RestoreResult:
    """Put the folder (or only ``file_path``) back as it was at ``checkpoint``; a whole restore also drops the
    session's last turn. Refused (nothing changed) where that is not offered, or when Hermes did not
    restore."""
    params: dict[str, str] = {"hash": _hash(checkpoint)}
    if file_path is not None:
        params["file_path"] = _file(file_path)
    else:
        await check_rewind(conn, "restoring a whole checkpoint (it also undoes the last turn)")
    await _enabled(conn, ref)
    result = parse_restore(await call_offered(conn, "rollback.restore", params, what=_WHAT, ref=ref))
    if not result.success:
        raise HermesUsageError(f"Hermes did not restore the checkpoint: {result.error or 'no reason given'}")
    return result
