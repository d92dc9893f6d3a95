"""A kernel cell tool's part names the notebook change it proposed (``cell_change``), so views can link to it.

The change itself lives in the notebook's front end (a pending diff on a cell, kept or discarded by the user);
the turn only records which one its tool call made, through the folder's public vocabulary like any handler.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .changes import CellChangeDict, ChangeRecord
    from .vocabulary import FolderOps

__all__ = ["link_cell_change"]


def link_cell_change(ops: FolderOps, part_id: str, change: CellChangeDict) -> list[ChangeRecord]:
    """Set tool part ``part_id``'s ``cell_change``; ``[]`` when there is no such tool part."""
    part = ops.part(part_id)
    if part is None or part.kind != "tool":
        return []
    part.cell_change = change.copy()
    return [ops.patch(part, {"cell_change": change.copy()})]
