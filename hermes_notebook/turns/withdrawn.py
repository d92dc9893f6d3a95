"""Turn-model handlers for prompts and runs a newer Hermes ends from its side.

``request.cancel {id, method, reason}`` (newer Dashboards) withdraws one prompt: its interaction ends
``expired`` on a timeout and ``cancelled`` otherwise, keeping the server's reason. ``run.interrupted`` (newer
API Servers) ends a run the gateway could not settle (a restart or shutdown). They use the folder's own
resolution rules, through its public vocabulary (:class:`~.vocabulary.FolderOps`). :func:`withdraw_pending`
applies the end-of-turn rule to a message a view ends itself (its folder never saw the end: a dropped
connection).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from .changes import ChangeRecord, InteractionDict, PartFields
    from .events import Event
    from .vocabulary import FolderOps

__all__ = ["on_request_cancel", "on_run_interrupted", "withdraw_pending"]


def on_request_cancel(f: FolderOps, event: Event) -> list[ChangeRecord]:
    """The server stopped waiting for one prompt: end its interaction with the reason."""
    p = event.payload
    rid = p.get("id")
    part = None if rid is None else f.asks.pending_part(str(rid))
    if part is None or part.interaction is None:
        return []
    reason = p.get("reason")
    part.interaction.reason = reason if isinstance(reason, str) else None
    return f.asks.resolve(part, "expired" if reason == "timeout" else "cancelled")


def on_run_interrupted(f: FolderOps, event: Event) -> list[ChangeRecord]:
    """The gateway restarted or shut down before the run settled."""
    error = event.payload.get("error")
    return f.end("interrupted", None, error if isinstance(error, str) else None)


def withdraw_pending(message: Mapping[str, Any] | None) -> list[ChangeRecord]:
    """``patch`` records ending every interaction still pending in ``message`` (a dict) as ``cancelled``.

    The contract's end of turn: a turn ended without its folder (e.g. the connection dropped under it) must
    not leave live cards behind, or a click on one could answer a later turn's request with the same id.
    """
    changes: list[ChangeRecord] = []
    if not isinstance(message, Mapping):
        return changes
    for part in message.get("parts") or ():
        inter = part.get("interaction") if isinstance(part, Mapping) else None
        if not isinstance(inter, Mapping) or inter.get("status") != "pending":
            continue
        fields: PartFields = {"interaction": cast("InteractionDict", {**inter, "status": "cancelled"})}
        if part.get("status") == "running":
            fields["status"] = "cancelled"
        changes.append({"op": "patch", "message_id": message["id"], "part_id": part["id"], "fields": fields})
    return changes
