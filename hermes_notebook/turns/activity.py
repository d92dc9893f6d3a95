"""What the agent did besides talking: its task list, its subagents and the file changes its tools made.

Handlers of the Dashboard dialect (the folder's other half, like :mod:`.dialects`), through the folder's
public vocabulary (:class:`~.vocabulary.FolderOps`) only:

* the task list: ``todo.updated {todos, revision}`` (newer servers) and the ``todos`` a todo tool's
  ``tool.complete`` carries (both servers; history: the tool row's result) fold into ONE ``todo`` part per
  turn, added where the list first appears and patched in place with every later full snapshot;
* subagents: ``subagent.spawn_requested|start|thinking|tool|progress|complete`` (keyed by ``subagent_id``,
  nested by ``parent_id``/``depth``) become ``subagent:<id>`` parts with their own tool calls and status;
* file changes: ``tool.complete.inline_diff`` (docs/protocol/dashboard.md §8.8) is kept on the tool part as
  plain
  lines: the server's terminal colours are stripped, views colour by line prefix.

Payloads: docs/protocol/dashboard-newer.md §11. Everything here is untrusted text: stored as data, capped,
never markup.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, cast

from .changes import (
    ChangeRecord,
    PartFields,
    SubagentDict,
    SubagentStatus,
    SubagentToolDict,
    TodoItemDict,
    ToolStatus,
)
from .events import Event
from .labels import usable_preview
from .model import Part
from .payload import number_or_none, text_or_none

if TYPE_CHECKING:
    from .vocabulary import FolderOps

__all__ = [
    "HANDLERS",
    "MAX_DIFF_CHARS",
    "MAX_SUBAGENT_TOOLS",
    "MAX_TEXT",
    "MAX_TODO_ITEMS",
    "SUBAGENT_EVENTS",
    "TODO_PART_ID",
    "TODO_TOOL_NAMES",
    "clean_diff",
    "diff_line_kind",
    "on_subagent",
    "on_todo_updated",
    "todo_items",
    "tool_extras",
]

#: The one task-list part of a turn.
TODO_PART_ID = "todo"
#: The todo tool's names: ``todo`` (0.19.0, and a newer server's legacy alias), ``todo_list`` (newer).
TODO_TOOL_NAMES = frozenset({"todo", "todo_list"})
SUBAGENT_EVENTS = (
    "subagent.spawn_requested",
    "subagent.start",
    "subagent.thinking",
    "subagent.tool",
    "subagent.progress",
    "subagent.complete",
)

# Bounds on what one turn keeps of a server's lists and texts (a runaway agent must not grow a part without
# end).
MAX_TODO_ITEMS = 200
MAX_SUBAGENT_TOOLS = 100
MAX_TEXT = 2000
MAX_DIFF_CHARS = 200_000

_TODO_STATUSES = frozenset({"pending", "in_progress", "completed", "cancelled"})
_SUBAGENT_STATUSES = frozenset(
    {"queued", "running", "completed", "failed", "error", "timeout", "interrupted"}
)
# A subagent's own status as the part's generic one (what views badge and the end of a turn cancels).
_PART_STATUS: dict[str, ToolStatus] = {
    "queued": "running",
    "running": "running",
    "completed": "completed",
    "failed": "error",
    "error": "error",
    "timeout": "error",
    "interrupted": "cancelled",
}
_EVENT_STATUS: dict[str, SubagentStatus] = {"subagent.spawn_requested": "queued", "subagent.start": "running"}
# ANSI/VT escape sequences (CSI with its parameters, OSC up to BEL/ST, two-byte escapes) and other C0
# controls.
_ESCAPES = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-_]|[\x00-\x08\x0b-\x1f\x7f]"
)


def _clip(text: str, limit: int = MAX_TEXT) -> str:
    return text if len(text) <= limit else text[:limit] + "…"


# ------------------------------------------------------------------------------------------------------------
# The task list


def todo_items(value: Any) -> list[TodoItemDict] | None:
    """The server's full task-list snapshot as contract items, or None when ``value`` is not a list."""
    if not isinstance(value, list):
        return None
    items: list[TodoItemDict] = []
    for n, raw in enumerate(value[:MAX_TODO_ITEMS]):
        if not isinstance(raw, Mapping):
            continue
        status = raw.get("status")
        parent = raw.get("parent")
        items.append(
            {
                "id": _clip(str(raw.get("id") if raw.get("id") is not None else n), 200),
                "content": _clip(str(raw.get("content") or "")),
                "status": status if isinstance(status, str) and status in _TODO_STATUSES else "pending",  # type: ignore[typeddict-item]
                "parent": _clip(str(parent), 200)
                if isinstance(parent, (str, int)) and parent != ""
                else None,
            }
        )
    return items


def _set_todos(f: FolderOps, items: list[TodoItemDict]) -> list[ChangeRecord]:
    part = f.part(TODO_PART_ID)
    if part is None:
        # add_tool closes the text segment like any tool part; a part with no status is never "running".
        return f.add_tool(Part(TODO_PART_ID, "todo", todos=items))
    if part.todos == items:  # the same snapshot again (tool.complete, then todo.updated)
        return []
    part.todos = items
    return [f.patch(part, {"todos": items})]


def on_todo_updated(f: FolderOps, e: Event) -> list[ChangeRecord]:
    """``todo.updated {todos, revision}``: the full list after a todo tool ran (newer servers)."""
    items = todo_items(e.payload.get("todos"))
    return [] if items is None else _set_todos(f, items)


# ------------------------------------------------------------------------------------------------------------
# File changes, and the todo tool's own completion


def clean_diff(text: str) -> str:
    """The server's inline diff as plain lines: terminal colours and controls removed, its header line
    dropped.

    Hermes renders the diff for a terminal (``agent/display.py``): a header line (``┊ review diff``, or an
    untranslated key), ``a/path → b/path`` file lines, then unified-diff lines, each wrapped in colour codes.
    Lines before the first file or hunk line are that header.
    """
    lines = _ESCAPES.sub("", text[:MAX_DIFF_CHARS]).split("\n")
    start = next((i for i, line in enumerate(lines) if diff_line_kind(line) in ("file", "hunk")), 0)
    return "\n".join(lines[start:]).rstrip()


_FILE_SIDE = re.compile(r"^(?P<side>[ab])/(?P<path>.+)$")


def relative_diff(diff: str, arguments: Any) -> str:
    """A diff's file lines (``a/<path> → b/<path>``) with each path as the tool was given it, relative to
    Hermes' working folder, where Hermes wrote the absolute one (``a//tmp/home/work/notes.txt`` for
    ``path: notes.txt`` reads ``a/notes.txt``); another absolute path is shown as it is, without the ``a/``
    that doubled its slash."""
    given = arguments.get("path") if isinstance(arguments, Mapping) else None
    given = given if isinstance(given, str) and given and not given.startswith("/") else None

    def side(text: str) -> str:
        match = _FILE_SIDE.match(text.strip())
        if match is None:
            return text.strip()
        path = "/" + match["path"].lstrip("/") if match["path"].startswith("/") else match["path"]
        if given is not None and path.endswith("/" + given.removeprefix("./")):
            path = given.removeprefix("./")
        return path if path.startswith("/") else f"{match['side']}/{path}"

    lines = diff.split("\n")
    for index, line in enumerate(lines):
        if diff_line_kind(line) == "file":
            old, _, new = line.partition(" → ")
            lines[index] = f"{side(old)} → {side(new)}"
    return "\n".join(lines)


def diff_line_kind(line: str) -> str:
    """``hunk``, ``add``, ``del``, ``context``, ``file`` or ``meta``: how a view colours one diff line."""
    if line.startswith("@@"):
        return "hunk"
    if line.startswith("+"):
        return "add"
    if line.startswith("-"):
        return "del"
    if line.startswith(" "):
        return "context"
    return "file" if " → " in line else "meta"


def tool_extras(f: FolderOps, e: Event, part: Part) -> list[ChangeRecord]:
    """After ``tool.complete``: its inline diff onto the tool part, its task list into the ``todo`` part."""
    p = e.payload
    changes: list[ChangeRecord] = []
    raw = p.get("inline_diff")
    diff = relative_diff(clean_diff(raw), part.arguments) if isinstance(raw, str) else ""
    if diff and part.diff != diff:
        part.diff = diff
        changes.append(f.patch(part, {"diff": diff}))
    todos = p.get("todos")
    result = p.get("result")
    if not isinstance(todos, list) and part.name in TODO_TOOL_NAMES and isinstance(result, Mapping):
        todos = result.get("todos")  # history: the tool row's result is the same snapshot
    items = todo_items(todos)
    if items is not None:
        changes.extend(_set_todos(f, items))
    return changes


# ------------------------------------------------------------------------------------------------------------
# Subagents


def _int(value: Any, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def _subagent_key(p: Mapping[str, Any]) -> str:
    # Every server we support sends subagent_id (sa-<task>-<hex>); an older emitter's frame keys by its task.
    sid = text_or_none(p.get("subagent_id"))
    return _clip(sid, 200) if sid else f"task-{_int(p.get('task_index'), 0)}"


def _new_subagent(key: str, p: Mapping[str, Any]) -> SubagentDict:
    return {
        "id": key,
        "parent_id": _clip(text_or_none(p.get("parent_id")) or "", 200) or None,
        "depth": max(0, _int(p.get("depth"), 0)),
        "goal": _clip(text_or_none(p.get("goal")) or ""),
        "status": "running",
        "model": _clip(text_or_none(p.get("model")) or "", 200) or None,
        "task_index": _int(p.get("task_index"), 0),
        "task_count": max(1, _int(p.get("task_count"), 1)),
        "activity": None,
        "tools": [],
        "summary": None,
    }


def on_subagent(f: FolderOps, e: Event) -> list[ChangeRecord]:
    """One ``subagent.*`` frame: create or update that subagent's part (tool_progress._progress_subagent)."""
    p = e.payload
    key = _subagent_key(p)
    part = f.part(f"subagent:{key}")
    info = _new_subagent(key, p) if part is None or part.subagent is None else dict(part.subagent)
    info = cast(SubagentDict, info)
    status: SubagentStatus | None = _EVENT_STATUS.get(e.type)
    text = text_or_none(p.get("text"))
    if e.type in ("subagent.thinking", "subagent.progress") and text and text.strip():
        info["activity"] = _clip(text.strip(), 500)
    elif e.type == "subagent.tool":
        name = text_or_none(p.get("tool_name")) or "tool"
        preview = usable_preview(text_or_none(p.get("tool_preview"))) or usable_preview(text)
        if len(info["tools"]) < MAX_SUBAGENT_TOOLS:
            tool: SubagentToolDict = {
                "name": _clip(name, 200),
                "preview": _clip(preview, 500) if preview else None,
            }
            info["tools"] = [*info["tools"], tool]
    elif e.type == "subagent.complete":
        wire = p.get("status")
        status = (
            cast(SubagentStatus, wire)
            if isinstance(wire, str) and wire in _SUBAGENT_STATUSES
            else "completed"
        )
        summary = text_or_none(p.get("summary")) or text
        info["summary"] = _clip(summary.strip()) if summary and summary.strip() else None
        info["activity"] = None
    if status is not None:
        info["status"] = status
    duration = number_or_none(p.get("duration_seconds"))
    if part is None:
        new = Part(
            f"subagent:{key}",
            "subagent",
            status=_PART_STATUS[info["status"]],
            duration=duration,
            subagent=info,
        )
        return f.add_tool(new)
    fields: PartFields = {}
    if info != part.subagent:
        part.subagent = fields["subagent"] = info
    part_status = _PART_STATUS[info["status"]]
    if part.status != part_status and part.status != "cancelled":
        part.status = fields["status"] = part_status
    if duration is not None and part.duration != duration:
        part.duration = fields["duration"] = duration
    return [f.patch(part, fields)] if fields else []


#: The Dashboard dialect's handlers for these events (merged into :data:`.dialects.HANDLERS`).
HANDLERS: dict[str, Callable[[FolderOps, Event], list[ChangeRecord]]] = {
    "todo.updated": on_todo_updated,
    **dict.fromkeys(SUBAGENT_EVENTS, on_subagent),
}
