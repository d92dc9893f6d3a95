"""Rewinding a conversation's session: undo, regenerate or edit the last prompt, branch into a copy.

Why its own owner: each changes the stored transcript, so each waits for the session's running turn in the
conversation's turn queue, and each needs a Dashboard that rewrites its stored transcript (0.19.0 refuses, by
name: :func:`~hermes_notebook.client.dashboard.rewind.check_rewind`); with ``files``, the files the dropped
turns changed go back too (:class:`~.files.FileRewind`). Owned by the
:class:`~.conversation.Conversation` (``conversation.rewinding``), whose methods of the same names the faces
call.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

from ..client.dashboard.rewind import branch_session, check_rewind, last_user_text, turns_after, undo_turn
from ..client.dashboard.rollback import checkpoint_diff
from ..errors import HermesUsageError
from ..turns import MessageDict
from ..turns.checkpoints import FileChange
from .book import SessionBook
from .files import Branched, FileRewind, Undone, branch_checkpoint, put_back
from .queue import TurnQueue

if TYPE_CHECKING:
    from ..client.dashboard import DashboardConnection, SessionRef

__all__ = ["Rewinding"]


class Owner(Protocol):
    """What this uses of its :class:`~.conversation.Conversation`."""

    book: SessionBook
    queue: TurnQueue
    files: FileRewind

    @property
    def has_dashboard(self) -> bool: ...

    async def dashboard(self) -> DashboardConnection: ...

    async def target(
        self, session: str | None, what: str, *, why: str = ""
    ) -> tuple[DashboardConnection, SessionRef, str]: ...


class Rewinding:
    """Undo, resend (regenerate/edit) and branch for one conversation (see the module docstring)."""

    def __init__(self, conversation: Owner) -> None:
        self._conversation = conversation

    async def rewindable(self, what: str) -> None:
        """Raise :class:`~hermes_notebook.errors.HermesNotOfferedError` if this Hermes cannot rewind a stored
        session (0.19.0)."""
        if not self._conversation.has_dashboard:
            raise HermesUsageError(
                f"{what} needs the Dashboard (a dashboard token): API Server sessions cannot rewind"
            )
        await check_rewind(await self._conversation.dashboard(), what)

    async def _target(self, session: str | None, what: str) -> tuple[DashboardConnection, SessionRef, str]:
        return await self._conversation.target(session, what, why=": API Server sessions cannot rewind")

    async def undo(self, session: str | None = None, *, files: bool = False) -> Undone:
        """Drop the session's last exchange: how many stored rows went (0: nothing to undo); with ``files``,
        the files its checkpoint holds are put back too (where Hermes took one:
        :class:`~.files.FileRewind`)."""
        conn, ref, key = await self._target(session, "undo")
        if files:
            return await self._conversation.files.undo(conn, ref, key)
        async with self._conversation.queue.turn(key):
            rows = await undo_turn(conn, ref)
        self._conversation.files.undone(key, rows)
        return Undone(rows)

    async def resend(
        self,
        session: str | None = None,
        text: str | None = None,
        *,
        messages: Sequence[MessageDict] | None = None,
    ) -> str:
        """Undo the last exchange to send a prompt in its place: returns ``text`` (an edit), or for None the
        last prompt of ``messages`` (default: the stored history) to send again (a regenerate)."""
        if text is not None and (not isinstance(text, str) or not text.strip()):
            raise HermesUsageError("the new prompt is empty")
        what = "regenerate" if text is None else "edit"
        conn, ref, key = await self._target(session, what)
        await check_rewind(conn, what)
        async with self._conversation.queue.turn(key):
            resend = last_user_text(messages or await conn.history(key)) if text is None else text
            if not await undo_turn(conn, ref, intent="retry" if text is None else "undo", checked=True):
                raise HermesUsageError(f"there is no exchange to {what} in this session")
        return resend

    async def branch(
        self,
        session: str | None = None,
        *,
        at: str | int | None = None,
        messages: Sequence[MessageDict] | None = None,
        name: str | None = None,
        follow: bool = True,
        files: bool = False,
    ) -> str:
        """Copy the session into a new one, without the exchanges after message ``at`` (an id in ``messages``,
        default the stored history; ``-N``: without the last N); returns the copy's stored id, current with
        ``follow``. With ``files``, the files changed since go back as they were then (a
        :class:`~.files.Branched` names them; refused before anything changes where Hermes has no checkpoints
        or the later turns did not run here)."""
        conn, ref, key = await self._target(session, "branch")
        if files:
            await check_rewind(conn, "branch")
        async with self._conversation.queue.turn(key):
            drop = 0 if at is None else turns_after(messages or await conn.history(key), at)
            found = await branch_checkpoint(self._conversation.files, conn, ref, key, drop) if files else None
            child = await branch_session(conn, ref, drop_turns=drop, name=name)
            restored = await put_back(conn, ref, found) if found is not None else ([], [])
        if follow:
            self._conversation.book.adopt(child)
        else:
            self._conversation.book.remember(child)
        return Branched(child.stored_id, *restored) if files else child.stored_id

    async def branch_files(
        self, session: str | None = None, *, at: str | int, messages: Sequence[MessageDict] | None = None
    ) -> list[FileChange]:
        """What :meth:`branch` with ``files`` at ``at`` would put back: the files changed since, as Hermes
        diffs them (nothing changes; refused as that branch would be)."""
        conn, ref, key = await self._target(session, "branch")
        await check_rewind(conn, "branch")
        drop = turns_after(messages or await conn.history(key), at)
        found = await branch_checkpoint(self._conversation.files, conn, ref, key, drop)
        return [] if found is None else list((await checkpoint_diff(conn, ref, found)).files)
