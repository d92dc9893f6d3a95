"""A conversation's file checkpoints: which checkpoint holds the files as they were before a turn, what that
turn changed (a diff per file), putting one file or the whole folder back, and an undo that restores files
too.

Hermes snapshots a session's folder before a turn first changes a file there (``rollback.*``,
docs/protocol/dashboard-newer.md §15), but no event names the turn a checkpoint belongs to: the turns run here
are known by when they started (:func:`~hermes_notebook.turns.checkpoints.checkpoint_for_turn` finds the
oldest checkpoint after that). A turn that ran elsewhere has none here: name a checkpoint from the list
instead. A whole restore also drops the session's last turn, so it waits for the session's running turn like
an undo; a newer Hermes does it, 0.19.0 is told "not offered" (files one at a time only). A branch with files
puts the folder back as it was after the message it branches at: the files changed since (the diff of the
checkpoint taken before the first turn it leaves out) are restored one by one, so no session's history
changes; Hermes keeps a "pre-rollback" checkpoint first, so the original session's files can come back with
``hermes.rollback()``. Owned by the :class:`~.conversation.Conversation` (``conversation.files``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

from ..client.dashboard.rewind import check_rewind, undo_turn
from ..client.dashboard.rollback import Checkpoints, checkpoint_diff, list_checkpoints, restore_checkpoint
from ..errors import HermesUsageError
from ..turns.checkpoints import Checkpoint, CheckpointDiff, RestoreResult, checkpoint_for_turn
from .queue import TurnQueue

if TYPE_CHECKING:
    from ..client.dashboard import DashboardConnection, SessionRef

__all__ = ["Branched", "CheckpointRef", "Checkpoints", "FileRewind", "RestoreResult", "TurnChanges", "Undone"]

#: What names a checkpoint: a :class:`Checkpoint`, its hash (or a unique prefix of 4+ digits), or its number
# in : the list (1 = newest); None where a default applies.
CheckpointRef = Checkpoint | str | int | None


class Undone(int):
    """How many stored rows an undo dropped (an ``int``, 0: nothing to undo), and the files it put back."""

    files: tuple[str, ...]
    skipped: tuple[str, ...]

    def __new__(cls, rows: int, files: Sequence[str] = (), skipped: Sequence[str] = ()) -> Undone:
        undone = super().__new__(cls, rows)
        undone.files, undone.skipped = tuple(files), tuple(skipped)
        return undone

    def sentence(self) -> str:
        """What the undo did, in words (how a notebook shows it; the number stays the value)."""
        if not self:
            return "Nothing to undo: the session has no exchange yet."
        said = "Undid the last exchange: your prompt and its reply are gone, and Hermes forgot them."
        if self.files:
            said += f" Put back: {', '.join(self.files)}."
        if self.skipped:
            said += f" Could not put back: {', '.join(self.skipped)}."
        return said

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(self.sentence())


class Branched(str):
    """A branch's stored id (a ``str``), and with ``files=True`` the files put back and those that could not
    be."""

    files: tuple[str, ...]
    skipped: tuple[str, ...]

    def __new__(cls, stored_id: str, files: Sequence[str] = (), skipped: Sequence[str] = ()) -> Branched:
        branched = super().__new__(cls, stored_id)
        branched.files, branched.skipped = tuple(files), tuple(skipped)
        return branched


@dataclass(frozen=True)
class TurnChanges:
    """The files a turn changed: the checkpoint from before it and its diff, file by file.

    ``checkpoint`` is None when the turn changed no file Hermes checkpointed (or no turn ran here:
    ``note``)."""

    session_id: str
    checkpoint: Checkpoint | None
    diff: CheckpointDiff | None
    enabled: bool = True
    note: str = ""


class Owner(Protocol):
    """What this uses of its :class:`~.conversation.Conversation`: its turn queue and its session
    resolution."""

    queue: TurnQueue

    async def target(self, session: str | None, what: str) -> tuple[DashboardConnection, SessionRef, str]: ...


class FileRewind:
    """The checkpoints side of one :class:`~.conversation.Conversation` (see the module docstring)."""

    def __init__(self, conversation: Owner) -> None:
        self._conversation = conversation
        self._starts: dict[str, list[datetime]] = {}  # stored session id -> when each turn run here started

    def ran(self, session_id: str, started: datetime) -> None:
        """A turn of ``session_id`` ran here, started at ``started`` (its checkpoint is the first one
        after)."""
        self._starts.setdefault(session_id, []).append(started)

    def starts(self, session_id: str) -> tuple[datetime, ...]:
        """When each turn of ``session_id`` still in its history that ran here started, oldest first."""
        return tuple(self._starts.get(session_id, ()))

    def undone(self, session_id: str, rows: int) -> None:
        """The session's last turn was dropped (by an undo or a whole restore): its start no longer counts."""
        starts = self._starts.get(session_id)
        if rows and starts:
            starts.pop()

    async def checkpoints(self, session: str | None) -> Checkpoints:
        conn, ref, _ = await self._conversation.target(session, "listing checkpoints")
        return await list_checkpoints(conn, ref)

    async def _turn_checkpoint(
        self, conn: DashboardConnection, ref: SessionRef, key: str
    ) -> Checkpoint | None:
        starts = self._starts.get(key)
        if not starts:
            return None
        return checkpoint_for_turn((await list_checkpoints(conn, ref)).checkpoints, starts[-1])

    async def changes(self, session: str | None, checkpoint: CheckpointRef) -> TurnChanges:
        conn, ref, key = await self._conversation.target(session, "showing a turn's file changes")
        listed = await list_checkpoints(conn, ref)
        if not listed.enabled:
            return TurnChanges(
                key, None, None, enabled=False, note="this Hermes takes no checkpoints of files"
            )
        if checkpoint is None:
            found = await self._turn_checkpoint(conn, ref, key)
            if found is None:
                note = (
                    "the last turn changed no file Hermes checkpointed"
                    if self._starts.get(key)
                    else "no turn of this session ran here: name a checkpoint (hermes.rollback() lists them)"
                )
                return TurnChanges(key, None, None, note=note)
        else:
            found = _pick(listed.checkpoints, checkpoint)
        return TurnChanges(key, found, await checkpoint_diff(conn, ref, found))

    async def restore(
        self, session: str | None, checkpoint: CheckpointRef, file: str | None
    ) -> RestoreResult:
        if checkpoint is None:
            raise HermesUsageError(
                "name the checkpoint to restore (its number or hash: hermes.rollback() lists them)"
            )
        conn, ref, key = await self._conversation.target(session, "restoring files")
        found = _pick((await list_checkpoints(conn, ref)).checkpoints, checkpoint)
        if file is not None:
            return await restore_checkpoint(conn, ref, found, file_path=file)
        async with self._conversation.queue.turn(key):
            result = await restore_checkpoint(conn, ref, found)
        self.undone(key, result.history_removed)
        return result

    async def undo(self, conn: DashboardConnection, ref: SessionRef, key: str) -> Undone:
        """Undo the last turn with its files: a whole restore of the turn's checkpoint, else a plain undo."""
        await check_rewind(conn, "undo")
        async with self._conversation.queue.turn(key):
            found = await self._turn_checkpoint(conn, ref, key)
            files: tuple[str, ...] = ()
            skipped: tuple[str, ...] = ()
            if found is None:
                rows, files, skipped = await undo_turn(conn, ref, checked=True), (), ()
            else:
                changed = await checkpoint_diff(conn, ref, found)  # a whole restore does not name its files
                result = await restore_checkpoint(conn, ref, found)
                skipped = result.skipped
                rows, files = (
                    result.history_removed,
                    result.files or tuple(c.path for c in changed.files if c.path not in skipped),
                )
        self.undone(key, rows)
        return Undone(rows, files, skipped)


async def branch_checkpoint(
    rewind: FileRewind, conn: DashboardConnection, ref: SessionRef, key: str, drop: int
) -> Checkpoint | None:
    """Before a branch with files: the checkpoint from before the first of the ``drop`` turns it leaves out
    (None: no file changed since), or a refusal before anything changes."""
    listed = await list_checkpoints(conn, ref)
    if not listed.enabled:
        raise HermesUsageError("this Hermes takes no checkpoints of files: branch without files=True")
    if drop == 0:
        return None
    starts = rewind.starts(key)
    if len(starts) < drop:
        raise HermesUsageError(
            "the turns after that message did not all run here, so which checkpoint holds the "
            "files is unknown: branch without files=True, then hermes.rollback() lists them"
        )
    return checkpoint_for_turn(listed.checkpoints, starts[-drop])


async def put_back(
    conn: DashboardConnection, ref: SessionRef, checkpoint: Checkpoint
) -> tuple[list[str], list[str]]:
    """Restore each file changed since ``checkpoint``, one by one (no history changes): (put back, not put
    back).

    A file created since has no copy in the checkpoint: it is left as it is (named in the second list)."""
    files: list[str] = []
    skipped: list[str] = []
    for change in (await checkpoint_diff(conn, ref, checkpoint)).files:
        if change.status == "added":
            skipped.append(change.path)
            continue
        result = await restore_checkpoint(conn, ref, checkpoint, file_path=change.path)
        files.extend(result.files or (change.path,))
        skipped.extend(result.skipped)
    return files, skipped


def _pick(checkpoints: Sequence[Checkpoint], name: CheckpointRef) -> Checkpoint:
    """The listed checkpoint ``name`` means (see :data:`CheckpointRef`), or a one-line refusal."""
    if isinstance(name, Checkpoint):
        return name
    if isinstance(name, int) and not isinstance(name, bool):
        if 1 <= name <= len(checkpoints):
            return checkpoints[name - 1]
        raise HermesUsageError(f"there is no checkpoint number {name} (this session has {len(checkpoints)})")
    text = name.strip().lower() if isinstance(name, str) else ""
    if text.isdigit() and len(text) < 4:
        return _pick(checkpoints, int(text))
    matches = [c for c in checkpoints if len(text) >= 4 and c.hash.startswith(text)]
    if len(matches) == 1:
        return matches[0]
    why = "is ambiguous" if matches else "is not one of this session's checkpoints"
    raise HermesUsageError(f"checkpoint {str(name)[:70]!r} {why} (hermes.rollback() lists them)")
