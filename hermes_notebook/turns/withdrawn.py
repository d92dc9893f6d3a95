"""Turn-model handlers for prompts and runs a newer Hermes ends from its side.

``request.cancel {id, method, reason}`` (newer Dashboards) withdraws one prompt: its interaction ends ``expired``
on a timeout and ``cancelled`` otherwise, keeping the server's reason. ``run.interrupted`` (newer API Servers)
ends a run the gateway could not settle (a restart or shutdown). They use the folder's own resolution rules,
through its public vocabulary (:class:`~.vocabulary.FolderOps`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .changes import ChangeRecord
    from .events import Event
    from .vocabulary import FolderOps

__all__ = ["on_request_cancel", "on_run_interrupted"]


def on_request_cancel(f: FolderOps, event: Event) -> list[ChangeRecord]:
    """The server stopped waiting for one prompt: end its interaction with the reason."""
    p = event.payload
    rid = p.get("id")
    part = None if rid is None else f.pending_part(str(rid))
    if part is None or part.interaction is None:
        return []
    reason = p.get("reason")
    part.interaction.reason = reason if isinstance(reason, str) else None
    return f.resolve(part, "expired" if reason == "timeout" else "cancelled")


def on_run_interrupted(f: FolderOps, event: Event) -> list[ChangeRecord]:
    """The gateway restarted or shut down before the run settled."""
    error = event.payload.get("error")
    return f.end("interrupted", None, error if isinstance(error, str) else None)
