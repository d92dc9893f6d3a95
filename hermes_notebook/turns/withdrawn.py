"""Turn-model handlers for prompts and runs a newer Hermes ends from its side.

``request.cancel {id, method, reason}`` (newer Dashboards) withdraws one prompt: its interaction ends ``expired``
on a timeout and ``cancelled`` otherwise, keeping the server's reason. ``run.interrupted`` (newer API Servers)
ends a run the gateway could not settle (a restart or shutdown). Kept apart from ``model.py`` (size limit); they
use the folder's own resolution rules.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .changes import ChangeRecord
    from .events import Event
    from .folder import TurnFolder

__all__ = ["on_request_cancel", "on_run_interrupted"]


def on_request_cancel(f: TurnFolder, event: Event) -> list[ChangeRecord]:
    """The server stopped waiting for one prompt: end its interaction with the reason."""
    p = event.payload
    rid = p.get("id")
    part = None if rid is None else f._pending_part(str(rid))
    if part is None or part.interaction is None:
        return []
    reason = p.get("reason")
    part.interaction.reason = reason if isinstance(reason, str) else None
    return f._resolve(part, "expired" if reason == "timeout" else "cancelled")


def on_run_interrupted(f: TurnFolder, event: Event) -> list[ChangeRecord]:
    """The gateway restarted or shut down before the run settled."""
    error = event.payload.get("error")
    return f._end("interrupted", None, error if isinstance(error, str) else None)
