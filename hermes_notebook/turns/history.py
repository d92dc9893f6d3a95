"""History: the Dashboard's REST message rows rebuilt as the same events a live turn produces.

:func:`history_events` synthesizes the events; :func:`fold_history` runs them through the same
:class:`~hermes_notebook.turns.folder.TurnFolder` as live turns, so part ids are equal live and from history.
Rows are described in docs/protocol/dashboard.md §6 (``GET /api/sessions/{id}/messages``). No I/O.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

from .changes import ImageDict
from .compression import is_summary_text
from .events import Event
from .folder import TurnFolder
from .images import images_in_content, split_image_refs
from .model import Message, TransformOutput, user_message
from .risk import unwrap_untrusted
from .steering import STEER_EVENT, is_steer_row, split_steers

__all__ = ["HistoryTurn", "fold_history", "history_events"]


class HistoryTurn(NamedTuple):
    """One turn rebuilt from REST rows: its id, the user's text (None before the first user row), its events,
    and the images the user attached (a newer Hermes' ``@image:`` lines, ``image_url`` content parts)."""

    turn_id: str
    user_text: str | None
    events: list[Event]
    user_images: list[ImageDict] = []  # noqa: RUF012 (a NamedTuple default; never mutated)


def _content_text(content: Any) -> str:
    # `content` is a string, or decoded JSON for structured content (§6): keep the text parts.
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        out = []
        for item in content:
            if isinstance(item, str):
                out.append(item)
            elif isinstance(item, Mapping) and isinstance(item.get("text"), str):
                out.append(item["text"])
        return "\n".join(out)
    if isinstance(content, Mapping) and isinstance(content.get("text"), str):
        return content["text"]
    return json.dumps(content, ensure_ascii=False)


def _loads_or_raw(value: Any) -> Any:
    # The live tool.complete result is "the tool output parsed as JSON when possible, otherwise a string"
    # (§4.1); history keeps the raw string, so parse it the same way to get equal parts.
    if isinstance(value, str):
        value = unwrap_untrusted(value)[0]  # the output as the tool returned it (turns/risk.py)
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def _inline_diff(metadata: Any) -> str | None:
    # display_metadata {"tool_result_metadata": {"inline_diff": ...}} (newer servers; a JSON string or
    # decoded).
    metadata = _loads_or_raw(metadata)
    inner = metadata.get("tool_result_metadata") if isinstance(metadata, Mapping) else None
    diff = inner.get("inline_diff") if isinstance(inner, Mapping) else None
    return diff if isinstance(diff, str) else None


def _tool_calls(value: Any) -> list[Mapping[str, Any]]:
    # tool_calls is already-decoded JSON on 0.19.0 (§6, §8.12); the seed shows a JSON string: accept both.
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return []
    return [c for c in value if isinstance(c, Mapping)] if isinstance(value, list) else []


def history_events(rows: Iterable[Mapping[str, Any]], *, session_id: str | None = None) -> list[HistoryTurn]:
    """REST message rows -> turns of synthesized events, shaped like live ones (docs/protocol/dashboard.md
    §6).

    Each user row starts a turn ``hermes-row:<user row id>``. Per assistant row: one ``reasoning.delta`` and
    one ``message.delta`` with the whole content, then ``tool.start`` + ``tool.complete`` per tool call
    (tool_id = the call id, result and stored inline diff from the matching tool row: a todo tool's result
    refolds the task list); one ``message.complete`` closes each turn. System rows are skipped; rows before
    the first user row form a turn named after their first row. A compaction summary row (user or assistant)
    becomes ``status.update {kind: "compacting"}``, so it folds into a marker as live. Subagents leave no rows
    here (each child is a session of its own), so history has no ``subagent`` parts.
    """
    rows = list(rows)
    tool_rows: dict[str, Mapping[str, Any]] = {}
    for row in rows:
        if row.get("role") == "tool" and row.get("tool_call_id"):
            tool_rows[str(row["tool_call_id"])] = row
    used: set[str] = set()
    turns: list[HistoryTurn] = []
    events: list[Event] | None = None
    last_text = ""

    def close() -> None:
        if events is not None:
            events.append(Event("message.complete", {"text": last_text, "status": "complete"}, session_id))

    def tool_events(call_id: str, name: Any, args: Any, result_row: Mapping[str, Any] | None) -> None:
        assert events is not None
        name = name if isinstance(name, str) else None
        events.append(Event("tool.start", {"tool_id": call_id, "name": name}, session_id))
        payload: dict[str, Any] = {"tool_id": call_id, "name": name, "args": args}
        content = None if result_row is None else result_row.get("content")
        steers: list[str] = []
        if isinstance(content, str):
            content, steers = split_steers(content)  # 0.19.0 stores a steer at the end of the tool result
        payload["result"] = _loads_or_raw(content)
        diff = None if result_row is None else _inline_diff(result_row.get("display_metadata"))
        if diff is not None:  # a newer server keeps the diff it sent live beside the row
            payload["inline_diff"] = diff
        events.append(Event("tool.complete", payload, session_id))
        if isinstance(content, str) and unwrap_untrusted(content)[1]:
            # Hermes stores no findings, only the untrusted-source wrapper (docs/protocol/dashboard-newer.md
            # §14).
            events.append(
                Event("tool.output_risk", {"tool_id": call_id, "name": name, "risk": "untrusted"}, session_id)
            )
        events.extend(Event(STEER_EVENT, {"text": text}, session_id) for text in steers)

    for row in rows:
        role = row.get("role")
        if role in ("user", "assistant") and is_summary_text(_content_text(row.get("content"))):
            # Hermes' compaction summary: shown as the marker a live turn shows (status.update "compacting").
            if events is None:
                events = []
                turns.append(HistoryTurn(f"hermes-row:{row.get('id')}", None, events))
            events.append(Event("status.update", {"kind": "compacting"}, session_id))
            continue
        if role == "user" and events is not None and is_steer_row(row, _content_text(row.get("content"))):
            # A steer delivered as a row of its own (newer): part of the running turn, not a new prompt.
            events.extend(
                Event(STEER_EVENT, {"text": t}, session_id)
                for t in split_steers(_content_text(row.get("content")))[1]
            )
            continue
        if role == "user":
            close()
            events = []
            last_text = ""
            text, refs = split_image_refs(_content_text(row.get("content")))
            images = [*refs, *images_in_content(row.get("content"))]
            turns.append(HistoryTurn(f"hermes-row:{row.get('id')}", text, events, images))
            continue
        if role not in ("assistant", "tool"):
            continue
        if events is None:  # a segment that starts mid-conversation (e.g. a compression tip)
            events = []
            turns.append(HistoryTurn(f"hermes-row:{row.get('id')}", None, events))
        if role == "tool":
            call_id = str(row.get("tool_call_id") or f"row-{row.get('id')}")
            if call_id not in used:  # a result whose call is not in this segment
                used.add(call_id)
                tool_events(call_id, row.get("tool_name"), None, row)
            continue
        reasoning = row.get("reasoning") or row.get("reasoning_content")
        if isinstance(reasoning, str) and reasoning:
            events.append(Event("reasoning.delta", {"text": reasoning}, session_id))
        text = _content_text(row.get("content"))
        if text:
            events.append(Event("message.delta", {"text": text}, session_id))
            last_text = text
        for call in _tool_calls(row.get("tool_calls")):
            call_id = str(call.get("id") or call.get("call_id") or "")
            if not call_id:
                continue
            fn = call.get("function")
            fn = fn if isinstance(fn, Mapping) else {}
            result_row = tool_rows.get(call_id)
            # The tool row names the tool that ran; the call may name a newer server's deferred-tool bridge
            # (``tool_call``), which live events never show.
            name = (result_row.get("tool_name") if result_row is not None else None) or fn.get("name")
            used.add(call_id)
            tool_events(call_id, name, _loads_or_raw(fn.get("arguments")), result_row)
    close()
    return turns


def fold_history(
    rows: Iterable[Mapping[str, Any]],
    *,
    session_id: str | None = None,
    transform_output: TransformOutput | None = None,
) -> list[Message]:
    """REST rows -> user and assistant messages in order, through the same :class:`TurnFolder` as live turns.

    A turn whose assistant side left no rows (e.g. a failed call) contributes only its user message.
    """
    messages: list[Message] = []
    for turn_id, user_text, events, user_images in history_events(rows, session_id=session_id):
        if user_text is not None:
            messages.append(user_message(turn_id, user_text, user_images))
        folder = TurnFolder(turn_id, source="history", transform_output=transform_output)
        for event in events:
            folder.apply(event)
        msg = folder.ended_message()
        if msg.parts:
            messages.append(msg)
    return messages
