"""The cell edits' handlers: ``insert_cell``, ``edit_cell`` and ``delete_cell`` only *propose*.

The front-end extension shows each proposal as a pending change on its cell (a diff with Keep and Discard);
nothing in the notebook changes, and nothing runs, until the user keeps it, and a turn that ends leaves its
proposals pending. The tool part is linked to its change (``cell_change``), so the chat can show the cell. The
edit gate (``share_kernel(edit="off")`` refuses them) was checked before a handler runs (:mod:`.tools`).

Read before write (:mod:`.versions`): an edit or deletion carries what the agent last saw at its index, and
the page refuses it before showing anything when the cell differs; the refusal gives the agent the cell as it
is now (:mod:`.stale`). Every result names the notebook it went to (its path) and the cell's version.
"""

from __future__ import annotations

import itertools
import secrets
from collections.abc import Mapping
from typing import Any, Literal

from ..turns.changes import CellChangeDict
from .call import ToolCall
from .cells import cell_index, clip, failed
from .preview.proposed import PROPOSED, proposal_words
from .stale import stale_refusal
from .versions import cell_version, parse_version

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


async def insert_cell(
    call: ToolCall, index: int, source: str, cell_type: str | None = None, notebook: str | None = None
) -> str:
    """Propose a new cell at ``index`` (``cell_type`` code, markdown or raw; code when not given).
    ``notebook``: the path the agent means (refused when it is not this notebook's)."""
    return await _propose(
        call, "insert_cell", "insert", index, source, cell_type or "code", notebook=notebook
    )


async def edit_cell(
    call: ToolCall, index: int, source: str, version: str | None = None, notebook: str | None = None
) -> str:
    """Propose replacing cell ``index``'s whole source with ``source`` (``version``: the cell's version the
    edit is based on; by default the one the agent last read)."""
    return await _propose(call, "edit_cell", "edit", index, source, version=version, notebook=notebook)


async def delete_cell(
    call: ToolCall, index: int, version: str | None = None, notebook: str | None = None
) -> str:
    """Propose deleting cell ``index`` (``version`` as for :func:`edit_cell`)."""
    return await _propose(call, "delete_cell", "delete", index, version=version, notebook=notebook)


async def _propose(
    call: ToolCall,
    tool: str,
    kind: Kind,
    index: object,
    source: object = None,
    cell_type: object = None,
    version: object = None,
    notebook: object = None,
) -> str:
    at = cell_index(index)
    if at is None:
        return (
            f"{tool} takes a cell index: a whole number from 0 (list_cells shows them). Nothing was changed."
        )
    based_on = parse_version(version)
    if version is not None and based_on is None:
        return (
            f"{tool}: {str(version)[:20]!r} is not a cell version (8 hex digits, as list_cells shows them). "
            "Nothing was changed."
        )
    if notebook is not None and (not isinstance(notebook, str) or not notebook.strip()):
        return f"{tool}: `notebook` is the notebook's path as list_cells names it. Nothing was changed."
    change: dict[str, Any] = {"id": new_change_id(), "kind": kind, "index": at}
    if isinstance(notebook, str):
        change["notebook"] = notebook.strip()[:500]
    if not call.verified:
        change["unverified"] = True  # the diff says the caller could not be verified on this Hermes
    if kind != "insert":
        expect = call.seen.expectation(call.session_id, at, based_on).wire()
        if expect is not None:
            change["expect"] = expect
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
        stale = answer.data.get("stale")
        if isinstance(stale, Mapping):
            return stale_refusal(call, tool, at, stale, answer.data)
        return failed(answer)
    shown_type = str(answer.data.get("cell_type") or change.get("cell_type") or "code")
    if kind != "delete" and shown_type == "code":
        PROPOSED.remember(call.session_id, change["id"], change["source"], proposal_words(kind, at))
    link: CellChangeDict = {"id": change["id"], "kind": kind, "index": at, "cell_type": shown_type}
    call.turn.link_cell_change(call.part_id, link)
    cell_id, base = clip(answer.data.get("cell"), 100), parse_version(answer.data.get("version"))
    if kind != "insert" and cell_id and base is not None:
        call.seen.saw(call.session_id, at, cell_id, base)
        if kind == "edit":
            call.seen.wrote(call.session_id, cell_id, cell_version(change["source"]))
    return _proposed(change, shown_type, answer.data, base)


def _proposed(change: Mapping[str, Any], cell_type: str, data: Mapping[str, Any], base: str | None) -> str:
    added, removed = _count(data.get("added")), _count(data.get("removed"))
    at = change["index"]
    of = f" (version {base})" if base is not None else ""
    what = {
        "insert": f"a new {cell_type} cell at index {at}",
        "edit": f"an edit of cell {at}{of} (+{added} / -{removed} lines)",
        "delete": f"deleting cell {at} ({cell_type}{f', version {base}' if base is not None else ''})",
    }[change["kind"]]
    path = clip(data.get("path"), 200)
    where = f" in {path}" if path else ""
    replaced = " It replaces your earlier proposal for that cell." if data.get("replaced") else ""
    return (
        f"Proposed {what}{where} as pending change {change['id']}.{replaced} It shows on the notebook as "
        "a diff; the user keeps or discards it, and nothing runs. The notebook's cells and indexes stay as "
        "they are until the user keeps it; call list_cells to see what they decided. A code cell can be "
        "tried first with preview(change) in a copy of the kernel."
    )


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0
