"""The per-event handlers of both dialects: which events change a turn, and how (the folder's other half).

Each handler takes the turn folder and one event and returns change records, through the folder's public
vocabulary (:class:`~.vocabulary.FolderOps`), never its fields. Events without a handler are ignored by
default but still reach ``transform_output``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from . import activity, compression, images, risk, steering
from .changes import ChangeRecord, MessageStatus, PartFields, ToolStatus
from .events import Event
from .model import Part
from .payload import number_or_none, result_failed, text_or_none
from .withdrawn import on_request_cancel, on_run_interrupted

if TYPE_CHECKING:
    from .vocabulary import FolderOps

__all__ = ["COMPLETE_STATUSES", "HANDLERS", "Handler"]

Handler = Callable[["FolderOps", Event], list[ChangeRecord]]

COMPLETE_STATUSES = frozenset({"complete", "interrupted", "error"})  # message.complete.status, dashboard §4.1


# Dashboard dialect (docs/protocol/dashboard.md §4). thinking.delta (spinner text), reasoning.available (a
# copy of the reply), message.interim (commentary; transform_output may show it) and tool.generating have no
# handler on
# purpose: they are ignored by default but still reach transform_output.


def _d_message_start(f: FolderOps, e: Event) -> list[ChangeRecord]:
    # Idempotent while the turn is open: synthetic turns send it twice (§7 "Synthetic turns", §8.3). A queued
    # message becomes streaming here.
    return f.begin("streaming")


def _d_message_delta(f: FolderOps, e: Event) -> list[ChangeRecord]:
    text = e.payload.get("text")
    if not text or type(text) is not str:
        return []
    return f.add_text(text)  # O(1): one append and one record per delta


def _d_reasoning_delta(f: FolderOps, e: Event) -> list[ChangeRecord]:
    text = e.payload.get("text")
    return f.add_reasoning(text) if text and type(text) is str else []


def _d_tool_start(f: FolderOps, e: Event) -> list[ChangeRecord]:
    # tool.start {tool_id, name, context, args_text?, args?}: context is the human preview, args_text (verbose
    # mode only) the raw arguments (§4.1); a newer server sends the arguments object too
    # (docs/protocol/dashboard-newer.md §3.2), which is what a kernel tool call is bound to its part by
    # (kernel/share.py).
    p = e.payload
    pid = f"tool:{p.get('tool_id')}"
    part = f.part(pid)
    name, preview = text_or_none(p.get("name")), text_or_none(p.get("context"))
    args: str | dict[str, Any] | None = text_or_none(p.get("args_text"))
    if args is None and isinstance(p.get("args"), dict):
        args = dict(p["args"])
    if part is not None:  # a repeated start: refresh in place
        fields: PartFields = {}
        if name is not None and part.name != name:
            part.name = fields["name"] = name
        if preview is not None and part.preview != preview:
            part.preview = fields["preview"] = preview
        if args is not None and part.arguments != args:
            part.arguments = fields["arguments"] = args
        return [f.patch(part, fields)] if fields else []
    return f.add_tool(Part(pid, "tool", name=name, status="running", arguments=args, preview=preview))


def _d_tool_complete(f: FolderOps, e: Event) -> list[ChangeRecord]:
    # tool.complete {tool_id, name, args, duration_s?, result, ...}; result is JSON-parsed when possible
    # (§4.1). It can arrive without tool.start (sent for inline diffs even with tool_progress off, §8.8).
    p = e.payload
    pid = f"tool:{p.get('tool_id')}"
    result = p.get("result")
    status: ToolStatus = "error" if p.get("error") is True or result_failed(result) else "completed"
    duration = number_or_none(p.get("duration_s"))
    args = p.get("args")
    args = args if isinstance(args, (str, dict)) else None
    part = f.part(pid)
    if part is None:
        part = Part(
            pid,
            "tool",
            name=text_or_none(p.get("name")),
            status=status,
            arguments=args,
            result=result,
            duration=duration,
        )
        changes = f.add_tool(part)
    else:
        changes = f.complete_tool(
            part, status, result=result, duration=duration, arguments=args, name=text_or_none(p.get("name"))
        )
    # its inline diff, its task list, the images its result names, the untrusted-data wrapper the model saw
    extras = activity.tool_extras(f, e, part) + images.tool_images(f, part, result)
    return changes + extras + risk.mark_wrapped(f, part, result)


def _approval_request(f: FolderOps, e: Event) -> list[ChangeRecord]:
    return f.asks.on_approval_request(e)


def _expire(f: FolderOps, e: Event) -> list[ChangeRecord]:
    return f.asks.on_expire(e)


def _d_clarify(f: FolderOps, e: Event) -> list[ChangeRecord]:
    return f.asks.on_request(e, "clarify")


def _d_sudo(f: FolderOps, e: Event) -> list[ChangeRecord]:
    return f.asks.on_request(e, "sudo")


def _d_secret(f: FolderOps, e: Event) -> list[ChangeRecord]:
    return f.asks.on_request(e, "secret")


def _d_message_complete(f: FolderOps, e: Event) -> list[ChangeRecord]:
    # message.complete {text, usage, status, reasoning?} (§4.1). Text and reasoning are only added when
    # nothing was streamed (e.g. a failed call has text and no deltas, docs/protocol/dashboard.md §4.1).
    p = e.payload
    wire_status = p.get("status")
    status: MessageStatus = wire_status if wire_status in COMPLETE_STATUSES else "complete"
    text = p.get("text")
    changes = f.final_text(text) if text and type(text) is str else []
    reasoning = p.get("reasoning")
    if not f.has_reasoning and reasoning and type(reasoning) is str:
        changes.extend(f.add_reasoning(reasoning))
    # A failed turn's text is the error message (compute-host crash: {text:"Error: …", status:"error"}).
    error = (text.strip() or None) if status == "error" and type(text) is str else None
    changes.extend(f.on_compressions(compression.compressions_of(p.get("usage")), compression.UNANNOUNCED))
    changes.extend(
        images.text_images(f)
    )  # the text is final: the images it names (MEDIA: files, data: images)
    changes.extend(f.end(status, p.get("usage"), error))
    return changes


def _d_status_update(f: FolderOps, e: Event) -> list[ChangeRecord]:
    # status.update {kind, text} (§4.1): "compacting" is a context compaction inside the turn, which then
    # keeps streaming; a newer server's "warn" right after may say it refused to compact (see .compression).
    kind = e.payload.get("kind")
    if kind == "compacting":
        return f.on_compacting(compression.COMPACTED)
    if compression.is_refusal(kind, e.payload.get("text")):
        return f.on_refused(compression.REFUSED)
    return []


def _d_steer(f: FolderOps, e: Event) -> list[ChangeRecord]:
    # A stored steer (turns/history.py): the marker the live turn showed when the server accepted it.
    text = text_or_none(e.payload.get("text"))
    return f.add_marker(steering.steer_marker(text)) if text and text.strip() else []


def _d_error(f: FolderOps, e: Event) -> list[ChangeRecord]:
    # error {message, reason?} ends the turn without message.complete (§4.1, §8.5).
    message = text_or_none(e.payload.get("message")) or "error"
    return f.end("error", None, message)


_DASHBOARD: dict[str, Handler] = {
    "message.start": _d_message_start,
    "message.delta": _d_message_delta,
    "reasoning.delta": _d_reasoning_delta,
    "tool.start": _d_tool_start,
    "tool.complete": _d_tool_complete,
    "approval.request": _approval_request,
    "clarify.request": _d_clarify,
    "sudo.request": _d_sudo,
    "secret.request": _d_secret,
    "sudo.expire": _expire,
    "secret.expire": _expire,
    "request.cancel": on_request_cancel,
    "tool.output_risk": risk.on_output_risk,
    "status.update": _d_status_update,
    steering.STEER_EVENT: _d_steer,
    "message.complete": _d_message_complete,
    "error": _d_error,
    **activity.HANDLERS,  # todo.updated, subagent.*
}


# ------------------------------------------------------------------------------------------------------------
# API Server run dialect (docs/protocol/api-server.md §3 "Where events come from"). reasoning.available is the
# reply text again, not reasoning: ignored.


def _r_message_delta(f: FolderOps, e: Event) -> list[ChangeRecord]:
    text = e.payload.get("delta")
    if not text or type(text) is not str:
        return []
    return f.add_text(text)


def _r_tool_started(f: FolderOps, e: Event) -> list[ChangeRecord]:
    # tool.started {tool, preview}: no id on the wire, so tools are numbered run-1, run-2, ... (contract,
    # "Ids").
    p = e.payload
    name = text_or_none(p.get("tool"))
    return f.add_tool(f.run_tools.start(name, text_or_none(p.get("preview"))))


def _r_tool_completed(f: FolderOps, e: Event) -> list[ChangeRecord]:
    # tool.completed {tool, duration, error: bool}: matched to the oldest running tool of that name.
    p = e.payload
    name = text_or_none(p.get("tool"))
    status: ToolStatus = "error" if p.get("error") else "completed"
    duration = number_or_none(p.get("duration"))
    part = f.run_tools.oldest_running(name)
    if part is not None:
        return f.complete_tool(part, status, duration=duration)
    return f.add_tool(f.run_tools.finished(name, status, duration))


def _r_approval_responded(f: FolderOps, e: Event) -> list[ChangeRecord]:
    # approval.responded {choice, resolved}: the server resolved the oldest `resolved` approvals (FIFO, §3).
    # A newer server names the one it resolved (request_id): that one, not the oldest.
    # One the view already answered through folder.answer() keeps its recorded answer.
    p = e.payload
    resolved = p.get("resolved")
    count = resolved if type(resolved) is int and resolved > 0 else 1
    choice = text_or_none(p.get("choice"))
    named = p.get("request_id")
    return f.asks.resolve_oldest_approvals(count, choice, named if isinstance(named, str) else None)


def _r_run_completed(f: FolderOps, e: Event) -> list[ChangeRecord]:
    # run.completed {output, usage}: output is the final text, used when nothing was streamed.
    p = e.payload
    output = p.get("output")
    changes = f.final_text(output) if output and type(output) is str else []
    changes.extend(images.text_images(f))  # a run's MEDIA: tags (docs/protocol/api-server.md §11)
    changes.extend(f.end("complete", p.get("usage"), None))
    return changes


def _r_run_failed(f: FolderOps, e: Event) -> list[ChangeRecord]:
    return f.end("error", None, text_or_none(e.payload.get("error")) or "run failed")


def _r_run_cancelled(f: FolderOps, e: Event) -> list[ChangeRecord]:
    return f.end("cancelled", None, None)


_RUN: dict[str, Handler] = {
    "message.delta": _r_message_delta,
    "tool.started": _r_tool_started,
    "tool.completed": _r_tool_completed,
    "approval.request": _approval_request,
    "approval.responded": _r_approval_responded,
    "run.completed": _r_run_completed,
    "run.failed": _r_run_failed,
    "run.cancelled": _r_run_cancelled,
    "run.interrupted": on_run_interrupted,
}

HANDLERS: dict[str, dict[str, Handler]] = {
    "dashboard": _DASHBOARD,
    "run": _RUN,
}
