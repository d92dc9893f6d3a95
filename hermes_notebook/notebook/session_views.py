"""What ``hermes.rollback()``, ``changes()``, ``profiles()``, ``sessions()`` and ``chat()`` give back.

Each is plain data with a notebook repr. Every string in them is the server's (file paths, checkpoint notes,
diff lines, profile names and descriptions): the text forms go through
:func:`~hermes_notebook.inert.terminal_safe`, the HTML forms through :mod:`hermes_notebook.render_checkpoints`
and :class:`~.results.Table` (escaped, inert). The work is the
:class:`~hermes_notebook.session.Conversation`'s; this module only shapes results.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from .. import runtime
from ..errors import HermesUsageError
from ..inert import escape_html, html_block, terminal_safe
from ..kernel.share import KERNEL
from ..render_checkpoints import checkpoint_diff_bundle
from ..session import (
    Checkpoint,
    CheckpointRef,
    Checkpoints,
    Conversation,
    Profile,
    RestoreResult,
    TurnChanges,
)
from .results import Table

if TYPE_CHECKING:
    from ..jobs.api import JobsAPI
    from ..settings import Settings
    from ..widgets.chat import Chat
    from ..widgets.jobs import Jobs

__all__ = [
    "CHECKPOINT_COLUMNS",
    "PROFILE_COLUMNS",
    "Changes",
    "Restored",
    "checkpoints_table",
    "message_id",
    "open_chat",
    "open_jobs",
    "profiles_table",
    "rollback",
    "sessions_table",
]

CHECKPOINT_COLUMNS = ("number", "hash", "taken", "message")
PROFILE_COLUMNS = ("name", "default", "model", "provider", "description")


def message_id(at: Any) -> str | int | None:
    """``branch(at=...)``: a message id, or the id of a message (a dict from ``history()`` or a Message);
    ``-N`` as it is (the last N exchanges left out)."""
    if isinstance(at, int) and not isinstance(at, bool):
        return at
    found = at.get("id") if isinstance(at, dict) else getattr(at, "id", at)
    if at is not None and not isinstance(found, str):
        raise HermesUsageError(f"at must be a message id or a message, not {type(at).__name__}")
    return found


def checkpoints_table(listed: Checkpoints) -> Table:
    """The session's checkpoints, newest first: ``number`` (what ``rollback(checkpoint=N)`` takes),
    ``hash``..."""
    rows = [
        {
            "number": n,
            "hash": c.hash,
            "taken": c.timestamp.astimezone().strftime("%Y-%m-%d %H:%M:%S") if c.timestamp else "",
            "message": c.message,
        }
        for n, c in enumerate(listed.checkpoints, 1)
    ]
    empty = (
        "this Hermes takes no checkpoints of files"
        if not listed.enabled
        else "no checkpoints yet: Hermes takes one before a turn first changes a file"
    )
    return Table(rows, columns=CHECKPOINT_COLUMNS, empty=empty)


def _checkpoint(value: CheckpointRef | Mapping[str, Any]) -> CheckpointRef:
    """A row of :func:`checkpoints_table` names its checkpoint by hash."""
    return str(value.get("hash") or "") if isinstance(value, Mapping) else value


async def rollback(
    conversation: Conversation, session: str | None, *, checkpoint: Any = None, file: str | None = None
) -> Table | Restored:
    """``hermes.rollback()``: list the checkpoints, or restore one (``file``: that file only)."""
    if checkpoint is None:
        if file is not None:
            raise HermesUsageError("file= restores one file of a checkpoint: name the checkpoint too")
        return checkpoints_table(await conversation.checkpoints(session))
    return Restored(await conversation.restore(session, checkpoint=_checkpoint(checkpoint), file=file))


@dataclass(frozen=True)
class Changes:
    """``hermes.changes()``: the files a turn changed, a diff per file (``files``), or why there are none."""

    turn: TurnChanges

    @property
    def checkpoint(self) -> Checkpoint | None:
        return self.turn.checkpoint

    @property
    def files(self) -> list[Any]:
        """One :class:`~hermes_notebook.turns.checkpoints.FileChange` per file (``path``, ``status``,
        ``diff``)."""
        return list(self.turn.diff.files) if self.turn.diff is not None else []

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        if self.turn.diff is None:
            text = f"No file changes to show: {self.turn.note}."
            return {"text/plain": terminal_safe(text), "text/html": html_block(f"<p>{escape_html(text)}</p>")}
        return checkpoint_diff_bundle(self.turn.diff)

    def __str__(self) -> str:
        return self._repr_mimebundle_()["text/plain"]

    def __repr__(self) -> str:
        return (
            f"<Changes {len(self.files)} file(s) since "
            f"{self.checkpoint.hash[:8] if self.checkpoint else 'none'}>"
        )


@dataclass(frozen=True)
class Restored:
    """What a restore put back: ``files``, those Hermes kept (edited since: ``skipped``), history rows
    dropped."""

    result: RestoreResult

    @property
    def files(self) -> tuple[str, ...]:
        return self.result.files

    @property
    def skipped(self) -> tuple[str, ...]:
        return self.result.skipped

    def lines(self) -> list[str]:
        out = [f"restored {len(self.files)} file(s) to checkpoint {self.result.restored_to[:8] or '?'}"]
        out += [f"  {name}" for name in self.files]
        out += [f"kept (edited since): {name}" for name in self.skipped]
        if self.result.history_removed:
            out.append(f"the session's last turn was undone ({self.result.history_removed} stored rows)")
        return [terminal_safe(line) for line in out]

    def __str__(self) -> str:
        return "\n".join(self.lines())

    def __repr__(self) -> str:
        return f"<Restored {len(self.files)} file(s)>"

    def _repr_html_(self) -> str:
        return html_block(
            "<ul>" + "".join(f"<li>{escape_html(line)}</li>" for line in self.lines()) + "</ul>"
        )


def sessions_table(rows: Sequence[Mapping[str, Any]], current: str | None) -> Table:
    """``hermes.sessions()``: one row per stored session, the connection's current one marked."""
    keep = ("id", "title", "preview", "message_count", "source", "started_at")
    return Table([{k: row.get(k) for k in keep} for row in rows], columns=keep, current=current)


def profiles_table(profiles: Sequence[Profile], chosen: str | None) -> Table:
    """``hermes.profiles()``: one row per profile; ``current`` marks the connection's (or the server's
    default)."""
    rows = [
        {
            "id": p.name,
            "name": p.name,
            "default": p.is_default,
            "model": p.model or "",
            "provider": p.provider or "",
            "description": p.description or p.display_name,
        }
        for p in profiles
    ]
    current = chosen or next((p.name for p in profiles if p.is_default), None)
    return Table(rows, columns=PROFILE_COLUMNS, current=current, empty="this Hermes lists no profiles")


class ChatSource(Protocol):
    """What :func:`open_chat` uses of the facade."""

    settings: Settings
    conversation: Conversation


def open_chat(hermes: ChatSource, session: str | None, *, secrets: Sequence[object]) -> Chat:
    """``hermes.chat()``: a chat over the facade's conversation, its header following the kernel's share."""
    from ..widgets.chat import Chat
    from ..widgets.chat_kernel import follow_kernel_modes

    if not hermes.settings.dashboard_token:
        raise HermesUsageError("no Dashboard token: set HERMES_DASHBOARD_TOKEN or pass dashboard_token=")
    chat = Chat(hermes.conversation, session=session, secrets=secrets)
    follow_kernel_modes(chat, KERNEL)  # the header shows what Hermes may do in this kernel
    return chat


class JobsSource(Protocol):
    """What :func:`open_jobs` uses of the facade."""

    settings: Settings
    conversation: Conversation

    @property
    def jobs(self) -> JobsAPI: ...


def open_jobs(hermes: JobsSource) -> Jobs:
    """``hermes.jobs_widget()``: the jobs widget over ``hermes.jobs``, refreshed at once by a newer
    Dashboard's cron.changed."""
    from ..widgets.jobs import Jobs

    widget = Jobs(hermes.jobs)
    if hermes.settings.dashboard_token:
        runtime.submit(widget.follow_feed(hermes.conversation.on_change))
    return widget
