"""What a kernel tool's part records beside the server's events: what its call is about in the user's words
(``label``: a preview names the proposal it ran, not its change id), the notebook change a cell tool proposed
(``cell_change``, so views can link to it) and the images its result sent to the model (``sent_images``, so
views show exactly what the model was given), and whether an approved run's variables can be undone
(``run_undo``, so views offer Undo variables or say why not).

The change itself lives in the notebook's front end (a pending diff on a cell, kept or discarded by the user);
the turn only records which one its tool call made, through the folder's public vocabulary like any handler.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .labels import display_name

if TYPE_CHECKING:
    from .changes import CellChangeDict, ChangeRecord, RunUndoDict, SentImageDict, ToolLabelDict
    from .vocabulary import FolderOps

__all__ = ["link_cell_change", "link_run_undo", "link_sent_images", "name_call"]


def link_cell_change(ops: FolderOps, part_id: str, change: CellChangeDict) -> list[ChangeRecord]:
    """Set tool part ``part_id``'s ``cell_change``; ``[]`` when there is no such tool part."""
    part = ops.part(part_id)
    if part is None or part.kind != "tool":
        return []
    part.cell_change = change.copy()
    return [ops.patch(part, {"cell_change": change.copy()})]


def name_call(ops: FolderOps, part_id: str, detail: str) -> list[ChangeRecord]:
    """Name tool part ``part_id``'s call in the user's words (its label's detail: "the proposed new cell at
    index 1", not an id its arguments carry); ``[]`` when there is no such tool part."""
    part = ops.part(part_id)
    if part is None or part.kind != "tool":
        return []
    part.named = detail
    label: ToolLabelDict = {"name": display_name(part.name), "detail": detail}
    part.label = label.copy()
    return [ops.patch(part, {"label": label})]


def link_sent_images(ops: FolderOps, part_id: str, images: list[SentImageDict]) -> list[ChangeRecord]:
    """Set tool part ``part_id``'s ``sent_images``; ``[]`` when there is no such tool part."""
    part = ops.part(part_id)
    if part is None or part.kind != "tool":
        return []
    part.sent_images = [image.copy() for image in images]
    return [ops.patch(part, {"sent_images": [image.copy() for image in images]})]


def link_run_undo(ops: FolderOps, part_id: str, undo: RunUndoDict) -> list[ChangeRecord]:
    """Set tool part ``part_id``'s ``run_undo``; ``[]`` when there is no such tool part."""
    part = ops.part(part_id)
    if part is None or part.kind != "tool":
        return []
    part.run_undo = undo.copy()
    return [ops.patch(part, {"run_undo": undo.copy()})]
