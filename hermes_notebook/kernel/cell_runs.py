"""The ``run_cell`` tool's handler: a notebook cell run for the agent, only as the user allows.

``run_cell`` is approved like ``run_code`` (a Run card with the cell's whole source, unless runs are allowed
for the session: :mod:`.runs`) and then shown with Stop and a time limit. Where it runs:

- the kernel is idle: the notebook runs the cell (its output shows there, as if the user ran it), and only if
  its source is still what the card showed;
- a user's cell is running: it waits for that cell to end (queued behind it, never interrupting it), then the
  same. This needs the page's replies while the kernel is busy (kernel subshells, ipykernel >= 7): on
  ipykernel 6 the notebook cannot be read meanwhile, and the tool says so at once
  (:func:`.cells.unavailable`);
- a ``%hermes`` cell is waiting for the turn (the kernel is busy with that wait, which takes approved runs):
  the kernel runs the cell's source itself on the main thread, and the notebook writes its outputs into the
  cell. The notebook would only queue the cell behind the ``%hermes`` cell, which waits for this very run.
"""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..turns.changes import RunUndoDict
from . import runs
from .call import ToolCall
from .cells import cell_index, clip, failed
from .document import Answer
from .execute import run_source
from .images import ToolAnswer
from .outputs import OutputLog
from .proposals import MAX_SOURCE_CHARS
from .reading import bounded
from .undo.cell_hooks import CellRunUndo
from .undo.last_run import LAST_RUN

__all__ = [
    "REINTERRUPT_S",
    "TRACEBACK_CHARS",
    "CellToRun",
    "NotebookRun",
    "error_output",
    "error_text",
    "run_cell",
    "run_in_notebook",
    "run_report",
]

#: Characters of a traceback the agent gets (its end: where it failed).
TRACEBACK_CHARS = 4000

#: Seconds between interrupts while a stopped run's cell still runs (see :func:`_interrupt_when_stopped`).
REINTERRUPT_S = 0.5


async def run_cell(call: ToolCall, index: int) -> str | ToolAnswer:
    """Run code cell ``index`` once the user allows it; its outputs, or how the run ended."""
    at = cell_index(index)
    if at is None:
        return "run_cell takes a cell index: a whole number from 0 (list_cells shows them)."
    found = await call.document.request("cell", index=at)
    if not found.ok:
        return failed(found)
    cell = found.data.get("cell") if isinstance(found.data.get("cell"), Mapping) else {}
    assert isinstance(cell, Mapping)
    source, cell_id = clip(cell.get("source"), MAX_SOURCE_CHARS + 1), clip(cell.get("id"), 100)
    if cell.get("type") != "code":
        return f"Cell {at} is a {clip(cell.get('type'), 20) or 'non-code'} cell; only code cells run."
    if not source.strip():
        return f"Cell {at} is empty; there is nothing to run."
    if len(source) > MAX_SOURCE_CHARS:
        return f"Refused: cell {at} has over {MAX_SOURCE_CHARS:,} characters, too many to show on a card."
    refusal = await runs.approve(
        call.turn,
        call.part_id,
        call.share.grants,
        call.session_id,
        source,
        f"It runs cell {at} of this notebook, where its output shows",
        call.answer_timeout,
        f"cell {at}",
        verified=call.verified,
    )
    if refusal is not None:
        return refusal
    allowed = call.share.grants.modes.runs == "allow"
    if call.jobs.serving and call.outputs.busy:  # a %hermes cell waits for this turn: it takes the run
        return await _run_here(at, cell_id, source, call, allowed)
    return await _run_in_notebook(at, cell_id, source, call, allowed)


async def _run_here(index: int, cell_id: str, source: str, call: ToolCall, allowed: bool) -> str | ToolAnswer:
    """Run the cell's source on the main thread (the ``%hermes`` wait takes it) and show its outputs in the
    cell."""
    namespace, shell = call.namespace, call.shell
    cards: list[RunUndoDict] = []  # the run's Undo offer, for its tool part
    said: list[str] = []  # and what the agent hears of it (read on the main thread, right after the run)

    def offered(card: RunUndoDict) -> None:
        cards.append(card)
        said.append(LAST_RUN.line)

    job = call.jobs.submit(
        lambda: LAST_RUN.guard(
            namespace,
            source,
            shell,
            lambda: run_source(namespace, source, shell, label=f"cell {index}", format_result=True),
            offered,
        )
    )
    work = runs.Work.of_job(job)
    outcome = await runs.supervise(
        call.turn,
        call.part_id,
        source,
        work,
        waiting=lambda: "",
        allowed=allowed,
        limit=call.run_limit,
    )
    for card in cards:
        call.turn.link_run_undo(call.part_id, card)
    if outcome != "finished" or job.future.cancelled() or job.future.exception() is not None:
        return f"Cell {index}: the run {outcome}" + (
            " before it started: nothing ran."
            if not job.started.done()
            else "; what it changed so far stays."
        )
    report = job.future.result()
    shown = await call.document.request(
        "outputs", cell=cell_id, source=source, outputs=report.notebook_outputs()
    )
    answer = report.answer()
    where = (
        "Its outputs are shown in the cell."
        if shown.ok
        else f"Its outputs could not be shown in the cell ({shown.error})."
    )
    return ToolAnswer(
        bounded(
            f"Ran cell {index} in the kernel while a %hermes cell waited for this turn (no "
            f"execution count). {where}\n\n{answer.text}"
        )
        + "".join(f"\n\n{line}" for line in said),
        answer.images,
    )


@dataclass(frozen=True)
class CellToRun:
    """A code cell an approved run covers: its index, id and the source the card showed."""

    index: int
    id: str
    source: str


@dataclass
class NotebookRun:
    """How a run of cells in the notebook went: its outcome (:func:`.runs.supervise`), whether it started, and
    each cell the notebook ran with its answer, in order (the last one's error stopped it, if any)."""

    outcome: str
    started: bool
    ran: list[tuple[CellToRun, Answer]]
    #: What the agent hears of Undo variables for the cells that ran (offered, or why not); "" when none of
    #: them ran here.
    undo: str = ""

    def undo_line(self) -> str:
        """The run's Undo, as the agent's answer ends: what it would do, or why it is not offered."""
        return f"\n\n{self.undo}" if self.undo else ""


async def _run_in_notebook(
    index: int, cell_id: str, source: str, call: ToolCall, allowed: bool
) -> str | ToolAnswer:
    """The notebook runs the cell once no other cell runs (a user's cell: queued behind it, never
    interrupted)."""
    run = await run_in_notebook(call, [CellToRun(index, cell_id, source)], source, allowed)
    if run.outcome != "finished" or not run.ran:
        return f"Cell {index} was not run to the end: the run {run.outcome}" + (
            "." if run.started else " before it started; nothing ran."
        )
    ran = run.ran[0][1]
    if not ran.ok:
        return f"Cell {index} was not run: {ran.error}."
    count = ran.data.get("execution_count")
    record = call.outputs.cell(count) if isinstance(count, int) and not isinstance(count, bool) else None
    return ToolAnswer(
        run_report(index, ran.data) + run.undo_line(), tuple(record.images) if record is not None else ()
    )


async def run_in_notebook(
    call: ToolCall, cells: Sequence[CellToRun], code: str, allowed: bool
) -> NotebookRun:
    """The notebook runs ``cells`` in order once no other cell runs (a user's cell: queued behind it, never
    interrupted), each only if its source is still what the card showed (``code``); the first cell that
    fails or shows an error ends the run, so later cells keep their outputs. Stop and the time limit
    interrupt only the cell this run is running. The cells run between a savepoint and an Undo offer
    (:mod:`.undo.cell_hooks`), which goes on the call's tool part."""
    outputs, link = call.outputs, call.document
    loop = asyncio.get_running_loop()
    deadline = loop.time() + call.run_limit
    started: asyncio.Future[None] = loop.create_future()
    stopping = False
    current = ""
    ran: list[tuple[CellToRun, Answer]] = []
    undo = CellRunUndo([(cell.id, cell.source) for cell in cells], call.namespace, call.shell)

    async def run() -> None:
        nonlocal current
        while outputs.busy:  # behind the user's cell; the card says so
            await asyncio.sleep(0.05)
        started.set_result(None)  # the kernel is free: the notebook runs them now
        undo.arm()  # from now on (a user's run of the same cell before this one is not the agent's run)
        watch = asyncio.ensure_future(_interrupt_when_stopped(outputs, lambda: current, lambda: stopping))
        try:
            for cell in cells:
                if stopping:
                    return
                current = cell.id
                answer = await link.request(
                    "run", timeout=max(1.0, deadline - loop.time()), cell=cell.id, source=cell.source
                )
                ran.append((cell, answer))
                if not answer.ok or error_output(answer.data) is not None:
                    return
        finally:
            watch.cancel()

    finished: asyncio.Future[None] = asyncio.ensure_future(run())

    def stop() -> None:
        nonlocal stopping
        stopping = True
        if not started.done():
            finished.cancel()  # still waiting for the user's cell: never sent

    work = runs.Work(started, finished, stop)  # type: ignore[arg-type]
    waiting = runs.waiting_for(lambda: outputs.busy, lambda: getattr(outputs.running(), "count", None))
    try:
        outcome = await runs.supervise(
            call.turn, call.part_id, code, work, waiting=waiting, allowed=allowed, limit=call.run_limit
        )
    finally:
        settled = undo.disarm()
    if settled is not None:
        call.turn.link_run_undo(call.part_id, settled[0])
    if finished.cancelled() and outcome == "finished":
        outcome = "stopped"
    return NotebookRun(outcome, started.done(), ran, settled[1] if settled is not None else "")


def error_text(output: Mapping[str, Any]) -> str:
    """An error output as the agent reads it: ``Name: value``, then its traceback (the page sends it without
    colour codes), bounded."""
    head = f"{clip(output.get('ename'), 200)}: {clip(output.get('evalue'), 2000)}"
    lines = output.get("traceback")
    trace = (
        "\n".join(clip(line, 2000) for line in lines[-40:] if isinstance(line, str))
        if isinstance(lines, list)
        else ""
    )
    return head + (f"\n{trace[-TRACEBACK_CHARS:]}" if trace.strip() else "")


def error_output(data: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The error among the outputs a run reply carries (``output_type`` error), None when it has none."""
    outputs = data.get("outputs")
    for output in outputs if isinstance(outputs, list) else []:
        if isinstance(output, Mapping) and output.get("output_type") == "error":
            return output
    return None


async def _interrupt_when_stopped(
    outputs: OutputLog, cell_id: Callable[[], str], stopping: Callable[[], bool]
) -> None:
    """Once Stop (or the time limit) came, interrupt the kernel while our cell (``cell_id()``: the one this
    run is at) runs (IPython's ``pre_run_cell`` names its cell id; JupyterLab sends it), and again every
    :data:`REINTERRUPT_S` while it still runs: an interrupt that lands in one of IPython's cell hooks (the
    Undo savepoint is taken in ``pre_run_cell``) is caught there and lost. A cell the page has not started
    yet is interrupted once it starts. The run cancels this when it ends."""
    while not stopping():
        await asyncio.sleep(0.02)
    while True:
        await asyncio.sleep(REINTERRUPT_S if _interrupt_if_running(outputs, cell_id()) else 0.02)


def _interrupt_if_running(outputs: OutputLog, cell_id: str) -> bool:
    """Interrupt the kernel (as its Interrupt button does) only while our cell is the one running."""
    running = outputs.running()
    if running is None or running.cell_id != cell_id:
        return False
    os.kill(os.getpid(), signal.SIGINT)
    return True


def run_report(index: int, data: Mapping[str, Any]) -> str:
    """What the agent gets after a cell ran: its execution count, then each output, bounded."""
    count = data.get("execution_count")
    parts = [f"Ran cell {index}" + (f" (In[{count}])." if isinstance(count, int) else ".")]
    outputs = data.get("outputs")
    for output in outputs[:20] if isinstance(outputs, list) else []:
        if not isinstance(output, Mapping):
            continue
        kind = clip(output.get("output_type"), 40)
        if kind == "stream":
            parts.append(
                f"{clip(output.get('name'), 10) or 'stdout'}:\n{clip(output.get('text'), 4000).rstrip()}"
            )
        elif kind == "error":
            parts.append(f"error:\n{error_text(output)}")
        elif kind in ("execute_result", "display_data"):
            text = clip(output.get("text"), 4000).rstrip()
            mimes = ", ".join(clip(m, 60) for m in output.get("mimes") or [] if isinstance(m, str))
            label = "result" if kind == "execute_result" else "display"
            parts.append(
                f"{label} ({mimes or 'no data'}):\n{text}" if text else f"{label} ({mimes or 'no data'})"
            )
    if len(parts) == 1:
        parts.append("It printed nothing and returned nothing.")
    return bounded("\n\n".join(parts))
