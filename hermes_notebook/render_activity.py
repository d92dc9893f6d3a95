"""The agent's task list, subagents and tool diffs in the static transcripts (text, markdown, HTML).

:mod:`hermes_notebook.render` calls these for ``todo`` and ``subagent`` parts and for a tool part's ``diff``,
so a saved notebook read without a kernel shows them as the live widget does (js/src/chat/activity.ts is the
twin). All of it is server text: escaped for HTML, escaped or fenced for markdown, never markup.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .inert import escape_html, escape_markdown, markdown_fence
from .turns.activity import diff_line_kind

__all__ = [
    "TODO_MARKS",
    "activity_css",
    "activity_html",
    "activity_markdown",
    "activity_text",
    "diff_html",
    "diff_markdown",
    "diff_text",
    "subagent_line",
]

#: How an item's status reads in text: done, doing, to do, dropped.
TODO_MARKS = {"completed": "[x]", "in_progress": "[~]", "pending": "[ ]", "cancelled": "[-]"}
_TODO_WORDS = {
    "completed": "done",
    "in_progress": "in progress",
    "pending": "pending",
    "cancelled": "cancelled",
}


def _todos(part: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    todos = part.get("todos")
    return [t for t in todos if isinstance(t, Mapping)] if isinstance(todos, list) else []


def _info(part: Mapping[str, Any]) -> Mapping[str, Any]:
    info = part.get("subagent")
    return info if isinstance(info, Mapping) else {}


def _depth(part: Mapping[str, Any]) -> int:
    depth = _info(part).get("depth")
    return depth if isinstance(depth, int) and 0 <= depth < 10 else 0


def subagent_line(part: Mapping[str, Any]) -> str:
    """``subagent: <goal> [<status>, 1.20 s]``: what a subagent was asked and how it ended."""
    info = _info(part)
    status = (
        "cancelled"
        if part.get("status") == "cancelled"
        else str(info.get("status") or part.get("status") or "")
    )
    duration = part.get("duration")
    timing = f", {duration:.2f} s" if isinstance(duration, (int, float)) else ""
    return f"subagent: {info.get('goal') or '(no goal)'} [{status}{timing}]"


def _tools(part: Mapping[str, Any]) -> list[str]:
    tools = _info(part).get("tools")
    rows = [t for t in tools if isinstance(t, Mapping)] if isinstance(tools, list) else []
    return [f"{t.get('name') or 'tool'}({t.get('preview') or ''})" for t in rows]


# --- text/plain
# ---------------------------------------------------------------------------------------------------


def activity_text(part: Mapping[str, Any]) -> list[str]:
    """The lines of a ``todo`` or ``subagent`` part in a plain-text transcript."""
    if part.get("kind") == "todo":
        return ["[plan]"] + [
            f"  {'  ' if t.get('parent') else ''}{TODO_MARKS.get(str(t.get('status')), '[ ]')} "
            f"{t.get('content')}"
            for t in _todos(part)
        ]
    indent = "  " * _depth(part)
    lines = [f"{indent}[{subagent_line(part)}]"]
    lines.extend(f"{indent}  tool: {tool}" for tool in _tools(part))
    summary = _info(part).get("summary")
    if isinstance(summary, str) and summary:
        lines.extend(f"{indent}  > {line}" for line in summary.split("\n"))
    return lines


def diff_text(part: Mapping[str, Any]) -> list[str]:
    """A tool part's diff, indented under its tool line."""
    diff = part.get("diff")
    return [f"  {line}" for line in diff.split("\n")] if isinstance(diff, str) and diff else []


# --- text/markdown
# ------------------------------------------------------------------------------------------------


def activity_markdown(part: Mapping[str, Any]) -> list[str]:
    """Markdown blocks of a ``todo`` or ``subagent`` part: every server string escaped or fenced."""
    if part.get("kind") == "todo":
        items = [
            f"{'  ' if t.get('parent') else ''}- {TODO_MARKS.get(str(t.get('status')), '[ ]')} "
            f"{escape_markdown(str(t.get('content') or ''))}"
            for t in _todos(part)
        ]
        return ["_Plan_", "\n".join(items)] if items else ["_Plan_"]
    blocks = [f"_{escape_markdown(subagent_line(part))}_"]
    tools = _tools(part)
    if tools:
        blocks.append(markdown_fence("\n".join(tools)))
    summary = _info(part).get("summary")
    if isinstance(summary, str) and summary:
        blocks.append(markdown_fence(summary))
    return blocks


def diff_markdown(part: Mapping[str, Any]) -> list[str]:
    """A tool part's diff as a fenced ``diff`` block."""
    diff = part.get("diff")
    return [markdown_fence(diff, "diff")] if isinstance(diff, str) and diff else []


# --- text/html
# ----------------------------------------------------------------------------------------------------


def activity_css() -> str:
    """The static transcript's rules for these parts (JupyterLab theme variables, with fallbacks)."""
    return (
        ".hn-static .hn-todo{list-style:none;padding-left:8px;margin:4px 0}"
        ".hn-static .hn-todo "
        "[data-status=completed]{text-decoration:line-through;color:var(--jp-ui-font-color2,#666)}"
        ".hn-static .hn-subagent{border-left:3px solid var(--jp-brand-color2,#64b5f6);"
        "padding:2px 8px;margin:4px 0}"
        ".hn-static .hn-diff{font-family:var(--jp-code-font-family,monospace);white-space:pre;"
        "overflow-x:auto}"
        ".hn-static .hn-diff-add{background:var(--jp-success-color3,rgba(46,160,67,.15))}"
        ".hn-static .hn-diff-del{background:var(--jp-error-color3,rgba(248,81,73,.15))}"
        ".hn-static .hn-diff-hunk,.hn-static .hn-diff-file{color:var(--jp-ui-font-color2,#666)}"
    )


def activity_html(part: Mapping[str, Any]) -> str:
    """A ``todo`` part as a checklist, a ``subagent`` part as a collapsible card indented by its depth."""
    esc = escape_html
    if part.get("kind") == "todo":
        items = "".join(
            f'<li data-status="{esc(t.get("status"))}">{esc(TODO_MARKS.get(str(t.get("status")), "[ ]"))} '
            f"{esc(t.get('content') or '')} <span "
            f'class="hn-meta">({esc(_TODO_WORDS.get(str(t.get("status")), ""))})</span></li>'
            for t in _todos(part)
        )
        return f'<div class="hn-plan"><div class="hn-meta">Plan</div><ul class="hn-todo">{items}</ul></div>'
    body = [
        f'<div class="hn-subagent" style="margin-left:{_depth(part) * 16}px" '
        f'data-status="{esc(part.get("status"))}">',
        f"<details><summary>{esc(subagent_line(part))}</summary>",
    ]
    body.extend(f'<div class="hn-meta">{esc(tool)}</div>' for tool in _tools(part))
    summary = _info(part).get("summary")
    if isinstance(summary, str) and summary:
        body.append(f"<pre>{esc(summary)}</pre>")
    body.append("</details></div>")
    return "".join(body)


def diff_html(part: Mapping[str, Any]) -> str:
    """A tool part's diff: one escaped line per row, coloured by its prefix (a class, never server markup)."""
    diff = part.get("diff")
    if not isinstance(diff, str) or not diff:
        return ""
    rows = "".join(
        f'<div class="hn-diff-{diff_line_kind(line)}">{escape_html(line) or "&#8203;"}</div>'
        for line in diff.split("\n")
    )
    return f'<details open><summary>Changes</summary><div class="hn-diff">{rows}</div></details>'
