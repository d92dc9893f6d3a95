"""The scripted model's notebook keywords: ``KERNEL`` (one kernel tool call), ``KERNELS`` (several, one per
response) and ``PREVIEW`` (propose a code cell, then preview that proposal), each calling the notebook
kernel's MCP tools as Hermes offers them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from .follow_up import images_line, result_text
from .reply import Reply, ToolCall, content_text
from .request_body import offered_tools, result_images, tool_rounds

__all__ = ["kernel_call", "kernel_steps", "preview_steps"]


def kernel_call(body: Mapping[str, Any], keyword: str, rest: str) -> Reply:
    """``KERNEL[@server] <tool> [argument]``: call a notebook kernel tool (an MCP tool
    ``mcp__notebook_<hex>__<tool>``, or ``mcp_notebook_<hex>_<tool>`` on 0.19.0), directly when offered, else
    through a newer Hermes' ``tool_call`` (MCP tools are deferred behind ``tool_search`` there, named in its
    description)."""
    server = keyword.partition("@")[2] or r"notebook_[0-9a-f]{8}"
    tool, _, argument = rest.partition(" ")
    argument = argument.strip()
    by_tool: dict[str, dict[str, Any]] = {
        "describe": {"name": argument},
        "read_cells": {"cells": argument},
        "run_code": {"code": argument},
        "read_output": {"cell": int(argument) if argument.lstrip("-").isdigit() else 0},
        "preview": {"change": argument},
    }
    arguments = _cell_arguments(tool, argument) if tool in _CELL_TOOLS else by_tool.get(tool, {})
    pattern = re.compile(rf"\bmcp__?{server}__?{re.escape(tool)}\b")
    offered = offered_tools(body)
    direct = next((name for name in sorted(offered) if pattern.fullmatch(name)), None)
    if direct is not None:
        return Reply(tool_calls=[ToolCall(direct, arguments)])
    catalog = " ".join(
        str((t.get("function") or {}).get("description") or "")
        for t in body.get("tools") or []
        if isinstance(t, dict)
    )
    deferred = pattern.search(catalog)
    if deferred is not None and "tool_call" in offered:
        return Reply(
            tool_calls=[
                ToolCall("tool_call", {"calls": [{"name": deferred.group(0), "arguments": arguments}]})
            ]
        )
    return Reply(text=f"[scripted model] no notebook tool {tool!r} was offered by Hermes.")


_CELL_TOOLS = (
    "list_cells",
    "insert_cell",
    "edit_cell",
    "delete_cell",
    "run_cell",
    "run_cells",
    "restart_and_run_all",
)


def kernel_steps(
    body: Mapping[str, Any], messages: Sequence[Mapping[str, Any]], rest: str, keyword: str
) -> Reply:
    """``KERNELS[@server] [wait S ;;] <tool> [arg] ;; <tool> [arg] ... [;; slow N]``: one kernel tool call per
    response, in order (the first after S seconds of reasoning), then ``Kernel tool results:`` with each
    result in a fenced block, streamed as N slow ticks first when the last step is ``slow N``."""
    steps = [step.strip() for step in rest.split(";;") if step.strip()]
    wait = 0.0
    if steps and steps[0].startswith("wait "):
        wait = float(steps.pop(0).split()[1])
    slow = int(steps.pop().split()[1]) if steps and steps[-1].startswith("slow ") else 0
    done = tool_rounds(messages)
    if done < len(steps):
        call = kernel_call(body, keyword.replace("KERNELS", "KERNEL", 1), steps[done])
        if done == 0 and wait and call.tool_calls:
            ticks = max(1, int(wait / 0.25))
            return replace(call, reasoning=["waiting "] * ticks, delay=0.25)
        return call
    earlier = [result_text(content_text(m.get("content"))) for m in messages if m.get("role") == "tool"][
        -len(steps) :
    ]
    text = "Kernel tool results:\n" + "\n".join(f"```\n{r}\n```" for r in earlier)
    return Reply(text=[f"tick {i} " for i in range(slow)] + [text], delay=0.25 if slow else None)


def _cell_arguments(tool: str, argument: str) -> dict[str, Any]:
    """``insert_cell 2 [markdown] <source>``, ``edit_cell 0 <source>``, ``delete_cell 1``, ``run_cell 3``,
    ``run_cells [first [last]]``, ``restart_and_run_all``: a
    source that starts with a double quote is a JSON string (so it can hold newlines: ``"a = 1\\nb = 2"``)."""
    if tool in ("list_cells", "restart_and_run_all"):
        return {}
    if tool == "run_cells":  # ``run_cells [first [last]]``
        bounds = [int(word) for word in argument.split() if word.isdigit()][:2]
        return dict(zip(("first", "last"), bounds, strict=False))
    index_text, _, source = argument.partition(" ")
    arguments: dict[str, Any] = {"index": int(index_text) if index_text.isdigit() else index_text}
    if tool in ("insert_cell", "edit_cell"):
        cell_type, _, after = source.partition(" ")
        if tool == "insert_cell" and cell_type in ("code", "markdown", "raw") and after:
            arguments["cell_type"], source = cell_type, after
        if source.startswith('"'):
            try:
                decoded = json.loads(source)
            except ValueError:
                decoded = None
            source = decoded if isinstance(decoded, str) else source
        arguments["source"] = source
    return arguments


#: The pending change an ``insert_cell`` result names (kernel/proposals.py: ``as pending change c3-ab12.``).
_CHANGE = re.compile(r"\bpending change (c\d+-[0-9a-f]+)\b")


def preview_steps(
    body: Mapping[str, Any], messages: Sequence[Mapping[str, Any]], rest: str, keyword: str
) -> Reply:
    """``PREVIEW[@server] <index> <source>``: propose a code cell at ``index`` (``insert_cell``; a source
    starting with ``"`` is a JSON string), then ``preview`` the pending change its result names, then
    ``Preview result:`` and what the preview tool said in a fenced block (and ``Images received: ...``).
    A proposal that names no change (refused) ends with ``Could not preview:`` and its result."""
    kernel = keyword.replace("PREVIEW", "KERNEL", 1)
    done = tool_rounds(messages)
    if done == 0:
        return kernel_call(body, kernel, f"insert_cell {rest}")
    latest = next(
        (result_text(content_text(m.get("content"))) for m in reversed(messages) if m.get("role") == "tool"),
        "",
    )
    change = _CHANGE.search(latest) if done == 1 else None
    if change is not None:
        return kernel_call(body, kernel, f"preview {change[1]}")
    head = "Preview result:" if done >= 2 else "Could not preview:"
    return Reply(text=f"{head}\n```\n{latest}\n```{images_line(result_images(messages))}")
