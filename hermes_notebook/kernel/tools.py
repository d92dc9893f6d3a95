"""The kernel's tools, one row each: the one place a tool is named, gated, described and dispatched.

Why one table: the tool server lists and registers from it (:mod:`.server`: each handler's signature, less its
first parameter, is the tool's argument schema), every call is gated by its row before the handler runs
(:func:`refusal`), and dispatch is the row's handler. A new tool is one :class:`Tool` row and one handler
``async def handler(call: ToolCall, **arguments) -> str | ToolAnswer``; nothing else names it.

Gates (:mod:`.grants` holds the modes): ``read`` tools answer only where reads are on, or were granted to the
session from a card; ``edit`` tools only propose, and ``share_kernel(edit="off")`` refuses them; ``run`` tools
run code the user sees on a Run card (:mod:`.runs`: ``ask``, ``allow`` for the session), and
``share_kernel(run="never")`` refuses them. A ``front_end`` tool is offered only while the notebook's front
end is attached (:mod:`.cells`), and answers only while it can reach it.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from . import cell_runs, cell_sequences, cells, code_tool, proposals, read_tools, runs
from .call import ToolCall
from .images import ToolAnswer
from .preview import tool as preview_tool

__all__ = ["GATES", "TOOLS", "Gate", "Handler", "Tool", "answer", "offered", "refusal", "tool_named"]

Gate = Literal["read", "edit", "run"]
#: ``handler(call, **arguments)``: the tool's answer (text, or text and images).
Handler = Callable[..., Awaitable[str | ToolAnswer]]

#: What a call hears when its row's gate is closed for it.
GATES: dict[Gate, str] = {
    "read": "Reading the notebook is off for this session. The user can turn it on with "
    "hermes.share_kernel(read=True) or %hermes --kernel read.",
    "edit": "Refused: editing this notebook is off for this session (share_kernel(edit='off')). Nothing was "
    "proposed; show the user the change in your reply instead.",
    "run": runs.RUNS_OFF,
}


@dataclass(frozen=True)
class Tool:
    """One kernel tool: its name (Hermes lists it under the server's), gate, hints, description, handler."""

    name: str
    gate: Gate
    description: str
    handler: Handler
    #: MCP's hints: the tool changes nothing / may change the user's state irreversibly (running code).
    read_only: bool = False
    destructive: bool = False
    #: Offered only while the notebook's front end (the hermes-notebook extension) is attached.
    front_end: bool = False


TOOLS: tuple[Tool, ...] = (
    Tool(
        "list_variables",
        "read",
        "List the variables in the user's Jupyter notebook kernel: name, type, shape or size.",
        read_tools.list_variables,
        read_only=True,
    ),
    Tool(
        "describe",
        "read",
        "A bounded summary of one notebook variable (type, shape, columns, head rows, ...). `name` is a "
        "plain variable name such as df.",
        read_tools.describe,
        read_only=True,
    ),
    Tool(
        "read_cells",
        "read",
        "The source of notebook cells as In[n]. `cells` is a number (5), a range (3:6) or -N for the last N "
        "cells.",
        read_tools.read_cells,
        read_only=True,
    ),
    Tool(
        "read_output",
        "read",
        "One notebook cell: its source, what it printed and displayed (its plots as images), its result "
        "(Out[n], summarized) and the error it raised. A cell still running shows its output so far "
        "(list_variables names the running cell).",
        read_tools.read_output,
        read_only=True,
    ),
    Tool(
        "run_code",
        "run",
        "Run Python code in the user's notebook kernel (their variables, their files). The user sees the "
        "whole code and must click Run first (unless runs are allowed for this session); while a cell runs "
        "it waits for it. Returns stdout, the last expression's value, any error, and figures as images.",
        code_tool.run_code,
        destructive=True,
    ),
    Tool(
        "list_cells",
        "read",
        "The notebook's cells as an outline: index (from 0), type, execution count, version (v + 8 hex "
        "digits: a hash of the source), first line and the kinds of output, plus changes still waiting for "
        "the user. Use the indexes with the other cell tools.",
        cells.list_cells,
        read_only=True,
        front_end=True,
    ),
    Tool(
        "insert_cell",
        "edit",
        "Propose a new cell at `index` (0 = first; the number of cells = at the end) with `source`; "
        "`cell_type` is code, markdown or raw. The user sees it as a pending change and keeps or discards "
        "it; nothing runs. Indexes do not change until the user keeps it.",
        proposals.insert_cell,
        front_end=True,
    ),
    Tool(
        "edit_cell",
        "edit",
        "Propose replacing the whole source of cell `index` with `source`. The user sees the diff on the "
        "cell and keeps or discards it; nothing runs. Refused when the cell changed since you read it (the "
        "refusal shows it as it is now): `version` is the version your edit is based on (by default the one "
        "you last read).",
        proposals.edit_cell,
        front_end=True,
    ),
    Tool(
        "delete_cell",
        "edit",
        "Propose deleting cell `index`. The user keeps (deletes) or discards it. Refused, as edit_cell is, "
        "when the cell changed since you read it.",
        proposals.delete_cell,
        front_end=True,
    ),
    Tool(
        "run_cell",
        "run",
        "Run code cell `index` in the notebook, its output shown there. The user sees the cell's whole "
        "source and must click Run first (unless runs are allowed for this session); while a cell runs it "
        "waits for it. Returns the cell's outputs, plots as images.",
        cell_runs.run_cell,
        destructive=True,
        front_end=True,
    ),
    Tool(
        "run_cells",
        "run",
        "Run code cells `first` to `last` (indexes from 0, both included; leave `last` out to run to the "
        "end, both out to run all) in the notebook, in order, their output shown there. The user sees every "
        "cell's whole source on one card and must click Run first (unless runs are allowed for this "
        "session). Stops at the first error and returns that cell's index, id and traceback; later cells "
        "are not run.",
        cell_sequences.run_cells,
        destructive=True,
        front_end=True,
    ),
    Tool(
        "restart_and_run_all",
        "run",
        "Restart the notebook's kernel (every variable is lost) and run all its cells in order, stopping at "
        "the first error. The user must click Run on a card first, even where runs are allowed. These tools "
        "live in that kernel: the call returns before the restart, without the run's outcome.",
        cell_sequences.restart_and_run_all,
        destructive=True,
        front_end=True,
    ),
    Tool(
        "preview",
        "run",
        "Try a code cell you proposed (insert_cell / edit_cell) before the user keeps it: `change` is its "
        "pending change id. It runs in a copy of the kernel (the user's variables stay untouched; files, "
        "network and databases are real) after the user clicks Run (unless runs are allowed). Returns what "
        "it printed and displayed (figures as images), its error, the variables it created, changed, rebound "
        "or deleted, and the time; revise the proposal before the user keeps it.",
        preview_tool.preview,
        destructive=True,
        front_end=True,
    ),
)

_BY_NAME = {tool.name: tool for tool in TOOLS}


def tool_named(name: str) -> Tool | None:
    """The row of tool ``name`` (None: no such tool)."""
    return _BY_NAME.get(name)


def offered(attached: bool) -> tuple[str, ...]:
    """The tools to list now: every row, the ``front_end`` ones only while a front end is ``attached``."""
    return tuple(tool.name for tool in TOOLS if attached or not tool.front_end)


async def answer(tool: Tool, call: ToolCall, arguments: Mapping[str, Any]) -> ToolAnswer:
    """What the kernel answers a bound call of ``tool``: its row's gate, then its handler (arguments it does
    not take, or one it needs missing, are named in one line instead)."""
    refused = refusal(tool, call)
    if refused:
        return ToolAnswer(refused)
    try:
        _signature(tool.handler).bind(call, **arguments)
    except TypeError as exc:
        return ToolAnswer(f"{tool.name} was called with the wrong arguments: {exc}.")
    return ToolAnswer.of(await tool.handler(call, **arguments))


@functools.cache
def _signature(handler: Handler) -> inspect.Signature:
    return inspect.signature(handler)


def refusal(tool: Tool, call: ToolCall) -> str | None:
    """Why ``call`` may not run ``tool`` (the front end is out of reach, or the row's gate is closed for the
    call's session); None when the handler may answer it."""
    if tool.front_end and (why := cells.unavailable(call)) is not None:
        return why
    return GATES[tool.gate] if _CLOSED[tool.gate](call) else None


_CLOSED: dict[Gate, Callable[[ToolCall], bool]] = {
    "read": lambda call: not call.share.may_read(call.session_id),
    "edit": lambda call: call.share.grants.modes.edits == "off",
    "run": lambda call: call.share.grants.modes.runs == "never",
}
