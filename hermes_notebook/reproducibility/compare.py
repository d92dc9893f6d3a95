"""Each code cell's verdict: its saved outputs against a fresh run's, masked (pure: no I/O).

A run stops at the first error, so a check's cells fall into four: ``same`` (the masked outputs are equal),
``changed`` (they differ: a unified diff, saved then new), ``error`` (the cell raised: its error, its
traceback without colour codes) and ``not reached`` (after the error). Markdown and raw cells are not checked.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Literal

from .masking import ANSI, Mask, cell_lines

__all__ = ["DIFF_LINES", "STATUSES", "CellCheck", "Status", "check_cell", "check_cells", "diff_lines"]

Status = Literal["same", "changed", "error", "not reached"]
STATUSES: tuple[Status, ...] = ("same", "changed", "error", "not reached")

#: A diff longer than this is cut, and says how many lines it left out.
DIFF_LINES = 80


@dataclass(frozen=True)
class CellCheck:
    """One code cell's verdict. ``index`` is its position in the notebook (0-based, every cell counted),
    ``number`` its place among the code cells (1-based, as a reader counts them)."""

    index: int
    number: int
    cell_id: str
    status: Status
    source: str
    diff: str = ""
    error: str = ""
    traceback: tuple[str, ...] = field(default=())

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able data (the traceback as a list)."""
        data = asdict(self)
        data["traceback"] = list(self.traceback)
        return data


def diff_lines(saved: Sequence[str], ran: Sequence[str], limit: int = DIFF_LINES) -> str:
    """A unified diff of two masked outputs (empty when equal), cut to ``limit`` lines."""
    lines = list(difflib.unified_diff(saved, ran, "saved", "this run", lineterm="", n=2))
    if len(lines) > limit:
        lines = [*lines[:limit], f"... {len(lines) - limit} more diff lines"]
    return "\n".join(lines)


def _error_of(outputs: Sequence[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    return next((out for out in outputs if out.get("output_type") == "error"), None)


def check_cell(
    saved: Mapping[str, Any],
    ran: Mapping[str, Any] | None,
    *,
    index: int,
    number: int,
    masks: Sequence[Mask] = (),
) -> CellCheck:
    """The verdict on one code cell: ``ran`` is the cell after this run, None when the run stopped before."""
    unreached = CellCheck(
        index=index,
        number=number,
        cell_id=str(saved.get("id") or ""),
        status="not reached",
        source=_text(saved.get("source")),
    )
    if ran is None:
        return unreached
    saved_outputs = list(saved.get("outputs") or [])
    new_outputs = list(ran.get("outputs") or [])
    error = _error_of(new_outputs)
    if error is not None:
        return replace(
            unreached,
            status="error",
            error=f"{error.get('ename', '')}: {error.get('evalue', '')}",
            traceback=tuple(ANSI.sub("", str(line)) for line in error.get("traceback") or []),
            diff=diff_lines(cell_lines(saved_outputs, masks), cell_lines(new_outputs, masks)),
        )
    if _unmasked(saved_outputs) == _unmasked(new_outputs):
        return replace(unreached, status="same")  # identical as saved: nothing to mask (the common case)
    diff = diff_lines(cell_lines(saved_outputs, masks), cell_lines(new_outputs, masks))
    return replace(unreached, status="changed" if diff else "same", diff=diff)


def _unmasked(outputs: Sequence[Mapping[str, Any]]) -> list[tuple[Any, ...]]:
    """The compared parts of outputs as they are (no execution count, no metadata): equal need no mask."""
    return [
        (out.get("output_type"), out.get("name"), out.get("text"), out.get("data"), out.get("evalue"))
        for out in outputs
    ]


def check_cells(
    saved_cells: Sequence[Mapping[str, Any]],
    ran_cells: Mapping[int, Mapping[str, Any]],
    masks: Sequence[Mask] = (),
) -> list[CellCheck]:
    """Every code cell's verdict; ``ran_cells`` maps a cell's index to the cell after this run (the cells
    the run reached, the erring one last)."""
    checks: list[CellCheck] = []
    for index, saved in enumerate(saved_cells):
        if saved.get("cell_type") != "code":
            continue
        checks.append(
            check_cell(saved, ran_cells.get(index), index=index, number=len(checks) + 1, masks=masks)
        )
    return checks


def _text(value: Any) -> str:
    return "".join(value) if isinstance(value, list) else str(value or "")
