"""``run_cells`` and ``restart_and_run_all``: many notebook cells behind one Run card.

Why its own module: a run of many cells is one approval, not one card per cell. The card lists every cell it
covers (``# ── cell 3 ──`` and that cell's whole source, in order), so what the user approves is exactly what
runs. Once approved, the notebook runs them in order through :func:`.cell_runs.run_in_notebook` (the same
queueing behind a user's cell, Stop and time limit as ``run_cell``) and stops at the first cell that shows an
error: the agent gets that cell's id, index and traceback; the cells after it are not run and keep their
outputs.

``restart_and_run_all`` asks on a card that says the kernel's state will be lost. This tool server lives in
the kernel being restarted, so its answer goes back first and the page restarts the kernel and runs every
cell a moment later; the run's outcome cannot come back in this call (the agent reads it afterwards, once the
notebook shares the kernel again). Before it goes, it leaves a hint (:mod:`.chat_resume`) so that the
re-run chat cell comes back on the session that asked. Deny runs nothing and leaves every variable as it was.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

from . import runs
from .call import ToolCall
from .cell_runs import CellToRun, NotebookRun, error_output, error_text, run_in_notebook, run_report
from .cells import cell_index, clip, failed
from .chat_resume import notebook_of
from .images import ToolAnswer
from .proposals import MAX_SOURCE_CHARS
from .reading import bounded

__all__ = [
    "MAX_CARD_CHARS",
    "MAX_RUN_CELLS",
    "RESTART_DELAY",
    "card_listing",
    "restart_and_run_all",
    "run_cells",
]

#: Code cells one card covers at most.
MAX_RUN_CELLS = 200
#: Characters of all the cells' sources one card shows at most.
MAX_CARD_CHARS = 5 * MAX_SOURCE_CHARS
#: Seconds between answering ``restart_and_run_all`` and asking the page to restart (the answer must reach
#: Hermes before the kernel that serves it goes).
RESTART_DELAY = 1.0


async def run_cells(call: ToolCall, first: int = 0, last: int | None = None) -> str | ToolAnswer:
    """Run code cells ``first`` to ``last`` (both included; all from ``first`` when ``last`` is left out) in
    order once the user allows it, stopping at the first error."""
    start, end = cell_index(first), None if last is None else cell_index(last)
    if start is None or (last is not None and end is None):
        return "run_cells takes cell indexes: whole numbers from 0 (list_cells shows them)."
    if end is not None and end < start:
        return f"run_cells: last ({end}) comes before first ({start}); nothing was run."
    cells = await _code_cells(call, start, end)
    if isinstance(cells, str):
        return cells
    span = f"cells {cells[0].index}-{cells[-1].index}" if len(cells) > 1 else f"cell {cells[0].index}"
    listing = card_listing(cells)
    refusal = await runs.approve(
        call.turn,
        call.part_id,
        call.share.grants,
        call.session_id,
        listing,
        f"It runs {_count(cells)} of this notebook in order ({span}), stopping at the first error; their "
        "output shows in the notebook",
        call.answer_timeout,
        span,
        verified=call.verified,
    )
    if refusal is not None:
        return refusal
    if call.jobs.serving and call.outputs.busy:
        return (
            "The user allowed it, but a %hermes cell is waiting for this turn, so the notebook cannot run "
            "cells now (it would queue them behind that cell). Nothing was run; run_cell runs one cell there."
        )
    allowed = call.share.grants.modes.runs == "allow"
    run = await run_in_notebook(call, cells, listing, allowed)
    return _report(cells, run, call)


async def restart_and_run_all(call: ToolCall) -> str:
    """Restart the kernel and run every cell, once the user allows it on a card that says the kernel's state
    is lost."""
    cells = await _code_cells(call, 0, None)
    if isinstance(cells, str):
        return cells
    refusal = await runs.approve(
        call.turn,
        call.part_id,
        call.share.grants,
        call.session_id,
        card_listing(cells),
        f"It RESTARTS the kernel: every variable, import and loaded data in it is lost. Then the notebook "
        f"runs all {_count(cells)} in order in the fresh kernel, stopping at the first error",
        call.answer_timeout,
        "the restart",
        verified=call.verified,
        always_ask=True,
        terms="with your files",  # not its variables: the restart loses them
    )
    if refusal is not None:
        return refusal
    link = call.document
    # the re-run chat cell comes back on this session (.chat_resume)
    call.resume.leave(notebook_of(link), call.share.profile, call.session_id)
    asyncio.get_running_loop().call_later(
        RESTART_DELAY, lambda: asyncio.ensure_future(link.request("restart_run_all", timeout=5.0))
    )
    return (
        "The user allowed it: the kernel restarts in a moment and the notebook then runs all "
        f"{_count(cells)} in order, stopping at the first error. These tools live in that kernel, so this "
        "call cannot return the run's outcome, and they are gone until the notebook shares the kernel "
        "again; then list_cells and read_output show what each cell did."
    )


async def _code_cells(call: ToolCall, start: int, end: int | None) -> list[CellToRun] | str:
    """The code cells from ``start`` to ``end`` (None: the last) with their whole sources, or why not."""
    found = await call.document.request("outline")
    if not found.ok:
        return failed(found)
    outline = found.data.get("cells")
    listed: list[Any] = outline if isinstance(outline, list) else []
    if start >= len(listed) or (end is not None and end >= len(listed)):
        missing = end if end is not None and end >= len(listed) else start
        return f"There is no cell {missing}; the notebook has {len(listed)} cells."
    last = len(listed) - 1 if end is None else end
    wanted = [
        index
        for index in range(start, last + 1)
        if isinstance(listed[index], Mapping) and listed[index].get("type") == "code"
    ]
    if not wanted:
        return "There are no code cells there; nothing was run."
    if len(wanted) > MAX_RUN_CELLS:
        return f"Refused: that is {len(wanted)} code cells, more than one card shows ({MAX_RUN_CELLS})."
    cells: list[CellToRun] = []
    total = 0
    for index in wanted:
        answer = await call.document.request("cell", index=index)
        if not answer.ok:
            return failed(answer)
        cell = answer.data.get("cell")
        if not isinstance(cell, Mapping):
            return f"Nothing was run: cell {index} could not be read."
        source = clip(cell.get("source"), MAX_CARD_CHARS + 1)
        total += len(source)
        if total > MAX_CARD_CHARS:
            return (
                f"Refused: those cells hold over {MAX_CARD_CHARS:,} characters, too many to show on a card."
            )
        if source.strip():
            cells.append(CellToRun(index, clip(cell.get("id"), 100), source))
    return cells or "Those code cells are empty; there is nothing to run."


def card_listing(cells: Sequence[CellToRun]) -> str:
    """What the card shows: each cell's index as a comment line, then its whole source, in run order."""
    return "\n\n".join(f"# ── cell {cell.index} ──\n{cell.source}" for cell in cells)


def _count(cells: Sequence[CellToRun]) -> str:
    return f"{len(cells)} code cell{'s' if len(cells) != 1 else ''}"


def _report(cells: Sequence[CellToRun], run: NotebookRun, call: ToolCall) -> str | ToolAnswer:
    """What the agent gets: each cell that ran (as ``run_cell`` reports it), then how the run ended; at an
    error, that cell's index, id and traceback, and the cells not run."""
    parts: list[str] = []
    images: list[Any] = []
    for cell, answer in run.ran:
        if not answer.ok:
            parts.append(f"Cell {cell.index} (id {cell.id}) was not run: {answer.error}.")
            continue
        parts.append(run_report(cell.index, answer.data))
        count = answer.data.get("execution_count")
        record = call.outputs.cell(count) if isinstance(count, int) and not isinstance(count, bool) else None
        images.extend(record.images if record is not None else ())
    left = [cell.index for cell in cells[len(run.ran) :]]
    not_run = f" Not run (they keep their outputs): cells {', '.join(map(str, left))}." if left else ""
    last = run.ran[-1] if run.ran else None
    error = error_output(last[1].data) if last is not None and last[1].ok else None
    if last is not None and error is not None:
        cell = last[0]
        head = (
            f"Stopped at the first error: cell {cell.index} (id {cell.id}) raised "
            f"{error_text(error)}\n{not_run.strip()}"
        )
    elif run.outcome != "finished":
        head = (
            f"The run {run.outcome}"
            + (
                f" after {len(run.ran)} of {len(cells)} cells."
                if run.started
                else " before it started; nothing ran."
            )
            + not_run
        )
    elif last is not None and not last[1].ok:
        head = f"Stopped: cell {last[0].index} could not be run.{not_run}"
    else:
        head = f"Ran all {_count(cells)} in order without an error."
    return ToolAnswer(bounded("\n\n".join([head.strip(), *parts])) + run.undo_line(), tuple(images))
