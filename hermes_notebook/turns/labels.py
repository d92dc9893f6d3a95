"""What a view shows for a tool part: a readable name and a one-line detail, decided once here (pure).

Hermes names the notebook's kernel tools ``mcp__notebook_<hex>__describe`` (0.19.0 and newer alike): a
person reads "notebook: describe". Its preview (``tool.start``'s
``context``) is meant for a terminal and is not always usable: a newer Hermes sends untranslated message
keys for some tools (``display.preview.shell_plus_one``, ``display.preview.todo_tasks``: its i18n catalogue
is not in the wheel) and drops a command's redirections (``printf ... > notes.txt`` previews as ``printf
...``, hiding the file it writes). So a ``command`` argument is shown as it runs, a preview only when it is
text, and otherwise the arguments we have. The part keeps Hermes' own ``preview`` untouched (a 0.19.0 kernel
tool call is bound to its part by it: :mod:`hermes_notebook.kernel.binding`); views read ``label``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from .changes import ToolLabelDict

__all__ = [
    "MAX_DETAIL",
    "display_name",
    "is_message_key",
    "label_of",
    "result_text",
    "tool_detail",
    "tool_label",
    "usable_preview",
]

#: Characters of a detail kept (a view cuts it to its width with an ellipsis; Arguments show it all).
MAX_DETAIL = 300
# An i18n message key: dotted lowercase words, at least three (``display.preview.shell_plus_one``).
_MESSAGE_KEY = re.compile(r"[a-z][a-z0-9_]*(?:\.[a-z][a-z0-9_]*){2,}")
# The notebook kernel tools: mcp__notebook_<hex>__<tool> (both versions).
_NOTEBOOK_TOOL = re.compile(r"mcp__notebook_[0-9a-f]{8}__(?P<tool>\w+)")
# Another MCP server's tool as Hermes names it: mcp__<server>__<tool>.
_MCP_TOOL = re.compile(r"mcp__(?P<server>[A-Za-z0-9][\w-]*?)__(?P<tool>\w+)")
# Argument keys whose value says what a call is about, in the order Hermes' own previews take them.
_PRIMARY_KEYS = ("command", "query", "text", "path", "url", "name", "prompt", "code", "goal", "question")


def is_message_key(text: str) -> bool:
    """Whether ``text`` is an untranslated message key rather than words."""
    return _MESSAGE_KEY.fullmatch(text.strip()) is not None


def display_name(name: str | None) -> str:
    """A tool's name as a person reads it: ``notebook: describe``, ``server: tool`` for an MCP tool."""
    if not name:
        return "tool"
    if (match := _NOTEBOOK_TOOL.fullmatch(name)) is not None:
        return f"notebook: {match['tool']}"
    if (match := _MCP_TOOL.fullmatch(name)) is not None:
        return f"{match['server']}: {match['tool']}"
    return name


def _one_line(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= MAX_DETAIL else line[: MAX_DETAIL - 1] + "…"


def usable_preview(preview: str | None) -> str | None:
    """Hermes' preview on one line, or None when it is empty or a message key."""
    if not preview or not preview.strip() or is_message_key(preview):
        return None
    return _one_line(preview)


def _value_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, default=str)


def _arguments_detail(arguments: Mapping[str, Any]) -> str | None:
    todos = arguments.get("todos")
    if isinstance(todos, list):
        return f"{len(todos)} task{'s' if len(todos) != 1 else ''}"
    calls = arguments.get("calls")
    if isinstance(calls, list) and calls and all(isinstance(c, Mapping) for c in calls):
        # a newer Hermes' tool_call bridge: the tools it calls, each with its own detail
        return "; ".join(
            f"{display_name(str(c.get('name') or ''))}({tool_detail(None, None, c.get('arguments')) or ''})"
            for c in calls
        )
    for key in _PRIMARY_KEYS:
        value = arguments.get(key)
        if value not in (None, "", [], {}):
            return _value_text(value)
    shown = [f"{key}={_value_text(value)}" for key, value in arguments.items() if value not in (None, "")]
    return ", ".join(shown) or None


def tool_detail(name: str | None, preview: str | None, arguments: Any) -> str | None:
    """The one line after a tool's name: the command as it runs, else Hermes' preview when it is words,
    else what the arguments say (a task list's size, the main argument, ``key=value`` pairs)."""
    if isinstance(arguments, str) and arguments.strip().startswith("{"):
        try:
            arguments = json.loads(arguments)
        except ValueError:
            pass
    if isinstance(arguments, Mapping) and isinstance(arguments.get("command"), str) and arguments["command"]:
        return _one_line(arguments["command"])
    shown = usable_preview(preview)
    if shown is not None:
        return shown
    if isinstance(arguments, Mapping):
        calls = arguments.get("calls")
        if isinstance(calls, list) and len(calls) == 1 and isinstance(calls[0], Mapping):
            if name and display_name(str(calls[0].get("name") or "")) == display_name(name):
                # the part already bears the one bridged call's name: its detail is that call's own
                return tool_detail(None, None, calls[0].get("arguments"))
        detail = _arguments_detail(arguments)
        return _one_line(detail) if detail else None
    if isinstance(arguments, str) and arguments.strip():
        return _one_line(arguments)
    return None


def tool_label(name: str | None, preview: str | None, arguments: Any) -> ToolLabelDict:
    """A tool part's ``label``: its readable name and detail."""
    return {"name": display_name(name), "detail": tool_detail(name, preview, arguments)}


def label_of(part: Mapping[str, Any]) -> ToolLabelDict:
    """A tool part dict's label: the one it carries, else made from its fields (a part saved before labels
    existed)."""
    label = part.get("label")
    if isinstance(label, Mapping) and isinstance(label.get("name"), str):
        detail = label.get("detail")
        return {"name": label["name"], "detail": detail if isinstance(detail, str) else None}
    preview = part.get("preview")
    return tool_label(part.get("name"), preview if isinstance(preview, str) else None, part.get("arguments"))


def result_text(result: Any) -> str:
    """A tool's result as a view shows it: text as it is, a kernel tool's ``{"result": "..."}`` as its text
    (real line breaks, not the JSON string's ``\\n``), anything else as indented JSON."""
    if result is None:
        return ""
    if isinstance(result, Mapping) and set(result) == {"result"} and isinstance(result["result"], str):
        return result["result"]
    if isinstance(result, str):
        return result
    try:
        return json.dumps(result, ensure_ascii=False, indent=2)
    except (TypeError, ValueError):
        return str(result)
