"""The cell edits' handlers: ``insert_cell``, ``edit_cell`` and ``delete_cell`` only *propose*.

The front-end extension shows each proposal as a pending change on its cell (a diff with Keep and Discard);
nothing in the notebook changes, and nothing runs, until the user keeps it, and a turn that ends leaves its
proposals pending. The tool part is linked to its change (``cell_change``), so the chat can show the cell. The
edit gate (``share_kernel(edit="off")`` refuses them) was checked before a handler runs (:mod:`.tools`).
"""

from __future__ import annotations

import itertools
import secrets
from collections.abc import Mapping
from typing import Any, Literal

from ..turns.changes import CellChangeDict
from .call import ToolCall
from .cells import cell_index, failed

__all__ = ["CELL_TYPES", "MAX_SOURCE_CHARS", "delete_cell", "edit_cell", "insert_cell", "new_change_id"]

#: Cell types ``insert_cell`` accepts.
CELL_TYPES = ("code", "markdown", "raw")
#: Characters of source a proposal may carry (the same bound as ``run_code``).
MAX_SOURCE_CHARS = 20_000

Kind = Literal["insert", "edit", "delete"]

_change_numbers = itertools.count(1)
_PROCESS_TAG = secrets.token_hex(2)


def new_change_id() -> str:
    """A pending change's id, unique across kernel processes: the page keeps pending changes across a kernel
    restart and a page reload (js/src/notebook/shelf.ts), so a restarted kernel's first change must not meet
    the one still waiting there under the same id."""
    return f"c{next(_change_numbers)}-{_PROCESS_TAG}"


async def insert_cell(call: ToolCall, index: int, source: str, cell_type: str | None = None) -> str:
    """Propose a new cell at ``index`` (``cell_type`` code, markdown or raw; code when not given)."""
    return await _propose(call, "insert_cell", "insert", index, source, cell_type or "code")


async def edit_cell(call: ToolCall, index: int, source: str) -> str:
    """Propose replacing cell ``index``'s whole source with ``source``."""
    return await _propose(call, "edit_cell", "edit", index, source)


async def delete_cell(call: ToolCall, index: int) -> str:
    """Propose deleting cell ``index``."""
    return await _propose(call, "delete_cell", "delete", index)


async def _propose(
    call: ToolCall, tool: str, kind: Kind, index: object, source: object = None, cell_type: object = None
) -> str:
    at = cell_index(index)
    if at is None:
        return f"{tool} takes a cell index: a whole number from 0 (list_cells shows them)."
    change: dict[str, Any] = {"id": new_change_id(), "kind": kind, "index": at}
    if kind != "delete":
        if not isinstance(source, str):
            return f"{tool} needs the cell's `source` as text."
        if len(source) > MAX_SOURCE_CHARS:
            return (
                f"Refused: the source is {len(source):,} characters; at most {MAX_SOURCE_CHARS:,} can be "
                "proposed."
            )
        change["source"] = source
    if kind == "insert":
        if cell_type not in CELL_TYPES:
            return f"cell_type must be one of {', '.join(CELL_TYPES)}, not {str(cell_type)[:20]!r}."
        change["cell_type"] = cell_type
    answer = await call.document.request("propose", change=change)
    if not answer.ok:
        return failed(answer)
    shown_type = str(answer.data.get("cell_type") or change.get("cell_type") or "code")
    link: CellChangeDict = {"id": change["id"], "kind": kind, "index": at, "cell_type": shown_type}
    call.turn.link_cell_change(call.part_id, link)
    return _proposed(change, shown_type, answer.data)


def _proposed(change: Mapping[str, Any], cell_type: str, data: Mapping[str, Any]) -> str:
    added, removed = _count(data.get("added")), _count(data.get("removed"))
    what = {
        "insert": f"a new {cell_type} cell at index {change['index']}",
        "edit": f"an edit of cell {change['index']} (+{added} / -{removed} lines)",
        "delete": f"deleting cell {change['index']} ({cell_type})",
    }[change["kind"]]
    return (
        f"Proposed {what} as pending change {change['id']}. It shows on the notebook as a diff; the user "
        "keeps or discards it, and nothing runs. The notebook's cells and indexes stay as they are until the "
        "user keeps it; call list_cells to see what they decided."
    )


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0
