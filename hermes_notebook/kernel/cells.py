"""The cell tools' common ground: the notebook's front end they need, and ``list_cells`` (the outline).

Every cell tool needs the notebook's front end (:mod:`.document`): the tools are offered only while one is
attached (:func:`follow_front_end` tells the tool server when that changes), and :func:`unavailable` says why
a call cannot be answered now (no front end; or a cell running where the page cannot answer meanwhile:
ipykernel 6 handles no message from the page while a cell runs, ipykernel 7 does on its subshells).
``list_cells`` is a read (off unless the session may read the kernel). The proposals (``insert_cell``,
``edit_cell``, ``delete_cell``) are in :mod:`.proposals`, ``run_cell`` in :mod:`.cell_runs`. Everything the
front end sends back is bounded before it reaches the agent (and scrubbed by the caller).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from .call import ToolCall
from .document import DOCUMENT, Answer, DocumentLink
from .reading import bounded
from .versions import parse_version

__all__ = [
    "FIRST_LINE_CHARS",
    "MAX_OUTLINE_CELLS",
    "cell_index",
    "clip",
    "failed",
    "follow_front_end",
    "list_cells",
    "outline",
    "unavailable",
]

#: Characters of a cell's first line in the outline.
FIRST_LINE_CHARS = 120
#: Cells the outline lists at most.
MAX_OUTLINE_CELLS = 300


class ToolsChanged(Protocol):
    """The tool server, told when the offered tools change (:meth:`~.server.ToolServer.tools_changed`)."""

    def tools_changed(self) -> None: ...


_following: dict[int, ToolsChanged] = {}  # id(link) -> the server it tells (the newest)


def follow_front_end(server: ToolsChanged, link: DocumentLink = DOCUMENT) -> None:
    """Tell ``server`` (the newest one only) when the cell tools come or go with the notebook's front end, and
    open the comm to it (a no-op where it is open, or outside a kernel)."""
    key = id(link)
    if key not in _following:

        def changed(_attached: bool) -> None:
            _following[key].tools_changed()

        link.on_change(changed)
    _following[key] = server
    link.open()


def unavailable(call: ToolCall) -> str | None:
    """Why a cell tool cannot be answered now (the page is not there, or cannot answer while a cell runs);
    None when it can."""
    if not call.document.attached:
        return (
            "The notebook's front end is not attached: cell tools need the notebook open in JupyterLab 4 or "
            "Notebook 7 with the hermes-notebook extension. Nothing was changed."
        )
    if call.outputs.busy and not call.jobs.serving and not call.document.answers_while_busy:
        return (
            "The notebook cannot be read while a cell runs in this kernel (ipykernel 6 handles no message "
            "from the page meanwhile; ipykernel 7 does). Nothing was asked or changed; try when the cell has "
            "finished. list_variables and read_output work meanwhile."
        )
    return None


async def list_cells(call: ToolCall) -> str:
    """The notebook's outline from its front end (:func:`outline`); what it shows is remembered as read
    (:mod:`.versions`)."""
    answer = await call.document.request("outline")
    if not answer.ok:
        return failed(answer)
    raw = answer.data.get("cells")
    call.seen.outline(
        call.session_id, [c for c in raw if isinstance(c, Mapping)] if isinstance(raw, list) else []
    )
    return outline(answer.data)


def cell_index(value: object) -> int | None:
    """A cell index the agent gave (a whole number from 0, or its digits), None for anything else."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if value >= 0 else None
    if isinstance(value, str) and value.strip().isdigit():
        return int(value)
    return None


def failed(answer: Answer) -> str:
    """What the agent hears when the front end did not do what was asked."""
    return f"Nothing was changed: {answer.error}."


def clip(value: object, limit: int) -> str:
    """A string the front end sent, cut to ``limit`` characters ("" for anything else)."""
    return value[:limit] if isinstance(value, str) else ""


def outline(data: Mapping[str, Any]) -> str:
    """The ``list_cells`` text from the front end's outline: one line per cell, then the pending changes."""
    raw = data.get("cells")
    cells: list[Any] = raw if isinstance(raw, list) else []
    name = clip(data.get("path"), 200) or "the notebook"
    lines = [f"{name}: {len(cells)} cell{'s' if len(cells) != 1 else ''}" + (":" if cells else ".")]
    for index, cell in enumerate(cells[:MAX_OUTLINE_CELLS]):
        if isinstance(cell, Mapping):
            lines.append(_outline_line(index, cell))
    if len(cells) > MAX_OUTLINE_CELLS:
        lines.append(f"… and {len(cells) - MAX_OUTLINE_CELLS} more cells")
    pending = [p for p in data.get("pending") or [] if isinstance(p, Mapping)]
    if pending:
        lines.append("Pending changes (waiting for the user to keep or discard):")
        for change in pending[:50]:
            kind, at = clip(change.get("kind"), 10), change.get("index")
            where = "at the end" if at is None else f"at index {at}" if kind == "insert" else f"on cell {at}"
            lines.append(f"- {clip(change.get('id'), 20)}: {kind} {where}")
    return bounded("\n".join(lines))


def _outline_line(index: int, cell: Mapping[str, Any]) -> str:
    kind = clip(cell.get("type"), 20) or "code"
    count = cell.get("execution_count")
    head = f"[{index}] {kind}"
    if kind == "code":
        head += f" In[{count}]" if isinstance(count, int) and not isinstance(count, bool) else " (not run)"
    version = parse_version(cell.get("version"))
    if version is not None:
        head += f" v{version}"
    source = clip(cell.get("source"), 100_000)
    first = next((line.strip() for line in source.splitlines() if line.strip()), "")
    if len(first) > FIRST_LINE_CHARS:
        first = first[:FIRST_LINE_CHARS] + "…"
    count_of_lines = cell.get("lines")
    total = (
        count_of_lines
        if isinstance(count_of_lines, int) and not isinstance(count_of_lines, bool)
        else len(source.splitlines())
    )
    head += f": {first}" if first else ": (empty)"
    if total > 1:
        head += f"  ({total} lines)"
    kinds = [clip(k, 60) for k in cell.get("outputs") or [] if isinstance(k, str)][:8]
    if kinds:
        head += " -> " + ", ".join(kinds)
    return head
