"""The cell tools: Hermes reads the notebook's outline and proposes cell changes the user keeps or discards.

``list_cells`` is a read (off unless the session may read the kernel). ``insert_cell``, ``edit_cell`` and
``delete_cell`` only *propose*: the front-end extension shows each as a pending change on its cell (a diff
with Keep and Discard); nothing in the notebook changes, and nothing runs, until the user keeps it, and a turn
that ends leaves its proposals pending. The tool part is linked to its change (``cell_change``), so the chat
can show the cell. ``run_cell`` is approved like ``run_code`` (a Run card with the cell's whole source, unless
runs are allowed for the session: :mod:`.runs`) and then shown with Stop and a time limit. Where it runs:

- the kernel is idle: the notebook runs the cell (its output shows there, as if the user ran it), and only if
  its source is still what the card showed;
- a user's cell is running: it waits for that cell to end (queued behind it, never interrupting it), then the
  same. This needs the page's replies while the kernel is busy (kernel subshells, ipykernel >= 7): on
  ipykernel 6 the notebook cannot be read meanwhile, and the tool says so at once;
- a ``%hermes`` cell is waiting for the turn (the kernel is busy with that wait, which takes approved runs):
  the kernel runs the cell's source itself on the main thread, and the notebook writes its outputs into the
  cell. The notebook would only queue the cell behind the ``%hermes`` cell, which waits for this very run.

Edits follow the session's ``edits`` mode (``off`` refuses them); ``list_cells`` is a read.

All of them need the notebook's front end (:mod:`.document`): they are offered only while one is attached.
Everything the front end sends back is bounded here before it reaches the agent (and scrubbed by the caller).
"""

from __future__ import annotations

import asyncio
import itertools
import os
import secrets
import signal
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from ..turns.changes import CellChangeDict
from . import runs
from .document import DOCUMENT, Answer, DocumentLink
from .execute import JOBS, MainThreadJobs, run_source
from .grants import Grants
from .images import ToolAnswer
from .outputs import OUTPUTS, OutputLog
from .reading import bounded

__all__ = [
    "CELL_READ_TOOLS",
    "CELL_TOOLS",
    "CELL_TYPES",
    "DESCRIPTIONS",
    "MAX_SOURCE_CHARS",
    "Caller",
    "CellTurn",
    "SharePolicy",
    "call",
    "follow_front_end",
    "offered",
    "outline",
    "run_report",
]

#: The cell tools, in the order the server lists them.
CELL_TOOLS = ("list_cells", "insert_cell", "edit_cell", "delete_cell", "run_cell")
#: The ones that only read (gated like the kernel's read tools).
CELL_READ_TOOLS = ("list_cells",)
#: Cell types ``insert_cell`` accepts.
CELL_TYPES = ("code", "markdown", "raw")
#: Characters of source a proposal may carry (the same bound as ``run_code``).
MAX_SOURCE_CHARS = 20_000
#: Characters of a cell's first line in the outline.
FIRST_LINE_CHARS = 120
#: Cells the outline lists at most.
MAX_OUTLINE_CELLS = 300

DESCRIPTIONS = {
    "list_cells": "The notebook's cells as an outline: index (from 0), type, first line, execution count "
    "and the "
    "kinds of output, plus changes still waiting for the user. Use the indexes with the other cell "
    "tools.",
    "insert_cell": "Propose a new cell at `index` (0 = first; the number of cells = at the end) with "
    "`source`; "
    "`cell_type` is code, markdown or raw. The user sees it as a pending change and keeps or "
    "discards it; nothing runs. Indexes do not change until the user keeps it.",
    "edit_cell": "Propose replacing the whole source of cell `index` with `source`. The user sees the diff "
    "on the "
    "cell and keeps or discards it; nothing runs.",
    "delete_cell": "Propose deleting cell `index`. The user keeps (deletes) or discards it.",
    "run_cell": "Run code cell `index` in the notebook, its output shown there. The user sees the cell's "
    "whole "
    "source and must click Run first (unless runs are allowed for this session); while a cell runs it "
    "waits for it. Returns the cell's outputs, plots as images.",
}

_change_numbers = itertools.count(1)
_PROCESS_TAG = secrets.token_hex(2)


def new_change_id() -> str:
    """A pending change's id, unique across kernel processes: the page keeps pending changes across a kernel
    restart and a page reload (js/src/notebook/shelf.ts), so a restarted kernel's first change must not meet
    the one still waiting there under the same id."""
    return f"c{next(_change_numbers)}-{_PROCESS_TAG}"


class SharePolicy(Protocol):
    """What the cell tools need to know of a share (:class:`~hermes_notebook.kernel.share.KernelShare`)."""

    @property
    def grants(self) -> Grants: ...

    def may_read(self, session_id: str) -> bool: ...


class CellTurn(runs.RunTurn, Protocol):
    """The turn a call came from (:class:`~hermes_notebook.client.dashboard.Turn`): a run's turn that also
    links the cell change a tool part proposed."""

    def link_cell_change(self, part_id: str, change: CellChangeDict) -> bool: ...


@dataclass(frozen=True)
class Caller:
    """Who a call belongs to: the sharing connection's policy, its turn, the call's tool part, the session."""

    share: SharePolicy
    turn: CellTurn
    part_id: str
    session_id: str
    #: Seconds the Run/Deny card of ``run_cell`` waits, and the cell may take (waiting included).
    answer_timeout: float
    run_timeout: float
    #: Where the cell's source runs when the kernel runs it itself (under a ``%hermes`` wait).
    namespace: dict[str, Any] = field(default_factory=dict)
    shell: Any = None


class ToolsChanged(Protocol):
    """The tool server, told when the offered tools change (:meth:`~.server.ToolServer.tools_changed`)."""

    def tools_changed(self) -> None: ...


_following: dict[int, ToolsChanged] = {}  # id(link) -> the server it tells (the newest)


def follow_front_end(server: ToolsChanged, link: DocumentLink = DOCUMENT) -> None:
    """Open the comm to the notebook's front end and tell ``server`` (the newest one only) when the cell tools
    come or go; a cell calls this when it shares the kernel."""
    key = id(link)
    if key not in _following:

        def changed(_attached: bool) -> None:
            _following[key].tools_changed()

        link.on_change(changed)
    _following[key] = server
    link.open()


def offered(attached: bool | None = None) -> tuple[str, ...]:
    """The cell tools to offer now: all of them while a front end with the extension is attached, else
    none."""
    return CELL_TOOLS if (DOCUMENT.attached if attached is None else attached) else ()


async def call(
    tool: str,
    arguments: Mapping[str, Any],
    caller: Caller,
    link: DocumentLink = DOCUMENT,
    outputs: OutputLog = OUTPUTS,
    jobs: MainThreadJobs = JOBS,
) -> str | ToolAnswer:
    """Answer one cell tool call for ``caller`` (who found the call's tool part, and scrubs the text)."""
    if not link.attached:
        return (
            "The notebook's front end is not attached: cell tools need the notebook open in JupyterLab 4 or "
            "Notebook 7 with the hermes-notebook extension. Nothing was changed."
        )
    if outputs.busy and not jobs.serving and not link.answers_while_busy:
        return (
            "The notebook cannot be read while a cell runs in this kernel (ipykernel 6 handles no message "
            "from the page meanwhile; ipykernel 7 does). Nothing was asked or changed; try when the cell has "
            "finished. list_variables and read_output work meanwhile."
        )
    if tool == "list_cells":
        if not caller.share.may_read(caller.session_id):
            return (
                "Reading the notebook is off for this session. The user can turn it on with "
                "hermes.share_kernel(read=True) or %hermes --kernel read."
            )
        answer = await link.request("outline")
        return outline(answer.data) if answer.ok else _failed(answer)
    index = _index(arguments.get("index"))
    if index is None:
        return f"{tool} takes a cell index: a whole number from 0 (list_cells shows them)."
    if tool == "run_cell":
        return await _run(index, caller, link, outputs, jobs)
    if caller.share.grants.modes.edits == "off":
        return (
            "Refused: editing this notebook is off for this session (share_kernel(edit='off')). Nothing was "
            "proposed; show the user the change in your reply instead."
        )
    kind: Literal["insert", "edit", "delete"] = (
        "insert" if tool == "insert_cell" else "edit" if tool == "edit_cell" else "delete"
    )
    change: dict[str, Any] = {"id": new_change_id(), "kind": kind, "index": index}
    if kind != "delete":
        source = arguments.get("source")
        if not isinstance(source, str):
            return f"{tool} needs the cell's `source` as text."
        if len(source) > MAX_SOURCE_CHARS:
            return (
                f"Refused: the source is {len(source):,} characters; at most {MAX_SOURCE_CHARS:,} can be "
                "proposed."
            )
        change["source"] = source
    if kind == "insert":
        cell_type = arguments.get("cell_type") or "code"
        if cell_type not in CELL_TYPES:
            return f"cell_type must be one of {', '.join(CELL_TYPES)}, not {str(cell_type)[:20]!r}."
        change["cell_type"] = cell_type
    answer = await link.request("propose", change=change)
    if not answer.ok:
        return _failed(answer)
    cell_type = str(answer.data.get("cell_type") or change.get("cell_type") or "code")
    link_to: CellChangeDict = {"id": change["id"], "kind": kind, "index": index, "cell_type": cell_type}
    caller.turn.link_cell_change(caller.part_id, link_to)
    return _proposed(change, cell_type, answer.data)


def _index(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if value >= 0 else None
    if isinstance(value, str) and value.strip().isdigit():
        return int(value)
    return None


def _failed(answer: Answer) -> str:
    return f"Nothing was changed: {answer.error}."


def _proposed(change: Mapping[str, Any], cell_type: str, data: Mapping[str, Any]) -> str:
    added, removed = _count(data.get("added")), _count(data.get("removed"))
    what = {
        "insert": f"a new {cell_type} cell at index {change['index']}",
        "edit": f"an edit of cell {change['index']} (+{added} / -{removed} lines)",
        "delete": f"deleting cell {change['index']} ({cell_type})",
    }[change["kind"]]
    return (
        f"Proposed {what} as pending change {change['id']}. It shows on the notebook as a diff; the user "
        "keeps "
        "or discards it, and nothing runs. The notebook's cells and indexes stay as they are until the user "
        "keeps it; call list_cells to see what they decided."
    )


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def _text(value: object, limit: int) -> str:
    return value[:limit] if isinstance(value, str) else ""


def outline(data: Mapping[str, Any]) -> str:
    """The ``list_cells`` text from the front end's outline: one line per cell, then the pending changes."""
    raw = data.get("cells")
    cells: list[Any] = raw if isinstance(raw, list) else []
    name = _text(data.get("path"), 200) or "the notebook"
    lines = [f"{name}: {len(cells)} cell{'s' if len(cells) != 1 else ''}" + (":" if cells else ".")]
    for index, cell in enumerate(cells[:MAX_OUTLINE_CELLS]):
        if not isinstance(cell, Mapping):
            continue
        kind = _text(cell.get("type"), 20) or "code"
        count = cell.get("execution_count")
        head = f"[{index}] {kind}"
        if kind == "code":
            head += (
                f" In[{count}]" if isinstance(count, int) and not isinstance(count, bool) else " (not run)"
            )
        source = _text(cell.get("source"), 100_000)
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
        kinds = [_text(k, 60) for k in cell.get("outputs") or [] if isinstance(k, str)][:8]
        if kinds:
            head += " -> " + ", ".join(kinds)
        lines.append(head)
    if len(cells) > MAX_OUTLINE_CELLS:
        lines.append(f"… and {len(cells) - MAX_OUTLINE_CELLS} more cells")
    pending = [p for p in data.get("pending") or [] if isinstance(p, Mapping)]
    if pending:
        lines.append("Pending changes (waiting for the user to keep or discard):")
        for change in pending[:50]:
            kind, at = _text(change.get("kind"), 10), change.get("index")
            where = "at the end" if at is None else f"at index {at}" if kind == "insert" else f"on cell {at}"
            lines.append(f"- {_text(change.get('id'), 20)}: {kind} {where}")
    return bounded("\n".join(lines))


async def _run(
    index: int, caller: Caller, link: DocumentLink, outputs: OutputLog, jobs: MainThreadJobs
) -> str | ToolAnswer:
    share, session_id = caller.share, caller.session_id
    if share.grants.modes.runs == "never":
        return "Refused: running code in this notebook is off (share_kernel(run='never'))."
    found = await link.request("cell", index=index)
    if not found.ok:
        return _failed(found)
    cell = found.data.get("cell") if isinstance(found.data.get("cell"), Mapping) else {}
    assert isinstance(cell, Mapping)
    source, cell_id = _text(cell.get("source"), MAX_SOURCE_CHARS + 1), _text(cell.get("id"), 100)
    if cell.get("type") != "code":
        return f"Cell {index} is a {_text(cell.get('type'), 20) or 'non-code'} cell; only code cells run."
    if not source.strip():
        return f"Cell {index} is empty; there is nothing to run."
    if len(source) > MAX_SOURCE_CHARS:
        return f"Refused: cell {index} has over {MAX_SOURCE_CHARS:,} characters, too many to show on a card."
    refusal = await runs.approve(
        caller.turn,
        caller.part_id,
        share.grants,
        session_id,
        source,
        f"It runs cell {index} of this notebook, where its output shows",
        caller.answer_timeout,
        f"cell {index}",
    )
    if refusal is not None:
        return refusal
    allowed = share.grants.modes.runs == "allow"
    if (
        jobs.serving and outputs.busy
    ):  # a %hermes cell waits for this turn: the kernel runs the source in that wait
        return await _run_here(index, cell_id, source, caller, link, jobs, allowed)
    return await _run_in_notebook(index, cell_id, source, caller, link, outputs, allowed)


async def _run_here(
    index: int,
    cell_id: str,
    source: str,
    caller: Caller,
    link: DocumentLink,
    jobs: MainThreadJobs,
    allowed: bool,
) -> str | ToolAnswer:
    """Run the cell's source on the main thread (the ``%hermes`` wait takes it) and show its outputs in the
    cell."""
    namespace, shell = caller.namespace, caller.shell
    job = jobs.submit(lambda: run_source(namespace, source, shell, label=f"cell {index}", format_result=True))
    work = runs.Work(asyncio.wrap_future(job.started), asyncio.wrap_future(job.future), job.stop)
    outcome = await runs.supervise(
        caller.turn,
        caller.part_id,
        source,
        work,
        waiting=lambda: "",
        allowed=allowed,
        limit=caller.run_timeout,
    )
    if outcome != "finished" or job.future.cancelled() or job.future.exception() is not None:
        return f"Cell {index}: the run {outcome}" + (
            " before it started: nothing ran."
            if not job.started.done()
            else "; what it changed so far stays."
        )
    report = job.future.result()
    shown = await link.request("outputs", cell=cell_id, source=source, outputs=report.notebook_outputs())
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
        ),
        answer.images,
    )


async def _run_in_notebook(
    index: int,
    cell_id: str,
    source: str,
    caller: Caller,
    link: DocumentLink,
    outputs: OutputLog,
    allowed: bool,
) -> str | ToolAnswer:
    """The notebook runs the cell once no other cell runs (a user's cell: queued behind it, never
    interrupted)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + caller.run_timeout
    started: asyncio.Future[None] = loop.create_future()
    stopping = False

    async def run() -> Answer:
        while outputs.busy:  # behind the user's cell; the card says so
            await asyncio.sleep(0.05)
        started.set_result(None)  # the kernel is free: the notebook runs it now
        watch = asyncio.ensure_future(_interrupt_when_stopped(outputs, cell_id, lambda: stopping))
        try:
            return await link.request(
                "run", timeout=max(1.0, deadline - loop.time()), cell=cell_id, source=source
            )
        finally:
            watch.cancel()

    finished: asyncio.Future[Answer] = asyncio.ensure_future(run())

    def stop() -> None:
        nonlocal stopping
        stopping = True
        if not started.done():
            finished.cancel()  # still waiting for the user's cell: never sent

    work = runs.Work(started, finished, stop)  # type: ignore[arg-type]
    waiting = runs.waiting_for(lambda: outputs.busy, lambda: getattr(outputs.running(), "count", None))
    outcome = await runs.supervise(
        caller.turn, caller.part_id, source, work, waiting=waiting, allowed=allowed, limit=caller.run_timeout
    )
    if outcome != "finished" or finished.cancelled():
        return f"Cell {index} was not run to the end: the run {outcome}" + (
            "." if started.done() else " before it started; nothing ran."
        )
    ran = finished.result()
    if not ran.ok:
        return f"Cell {index} was not run: {ran.error}."
    count = ran.data.get("execution_count")
    record = outputs.cell(count) if isinstance(count, int) and not isinstance(count, bool) else None
    return ToolAnswer(run_report(index, ran.data), tuple(record.images) if record is not None else ())


async def _interrupt_when_stopped(outputs: OutputLog, cell_id: str, stopping: Any) -> None:
    """Once Stop (or the time limit) came, interrupt the kernel while our cell runs (IPython's
    ``pre_run_cell`` names its cell id; JupyterLab sends it)."""
    while True:
        if stopping():
            _interrupt_if_running(outputs, cell_id)
            return
        await asyncio.sleep(0.02)


def _interrupt_if_running(outputs: OutputLog, cell_id: str) -> None:
    """Interrupt the kernel (as its Interrupt button does) only while our cell is the one running."""
    running = outputs.running()
    if running is not None and running.cell_id == cell_id:
        os.kill(os.getpid(), signal.SIGINT)


def run_report(index: int, data: Mapping[str, Any]) -> str:
    """What the agent gets after a cell ran: its execution count, then each output, bounded."""
    count = data.get("execution_count")
    parts = [f"Ran cell {index}" + (f" (In[{count}])." if isinstance(count, int) else ".")]
    outputs = data.get("outputs")
    for output in outputs[:20] if isinstance(outputs, list) else []:
        if not isinstance(output, Mapping):
            continue
        kind = _text(output.get("output_type"), 40)
        if kind == "stream":
            parts.append(
                f"{_text(output.get('name'), 10) or 'stdout'}:\n{_text(output.get('text'), 4000).rstrip()}"
            )
        elif kind == "error":
            parts.append(f"error:\n{_text(output.get('ename'), 200)}: {_text(output.get('evalue'), 2000)}")
        elif kind in ("execute_result", "display_data"):
            text = _text(output.get("text"), 4000).rstrip()
            mimes = ", ".join(_text(m, 60) for m in output.get("mimes") or [] if isinstance(m, str))
            label = "result" if kind == "execute_result" else "display"
            parts.append(
                f"{label} ({mimes or 'no data'}):\n{text}" if text else f"{label} ({mimes or 'no data'})"
            )
    if len(parts) == 1:
        parts.append("It printed nothing and returned nothing.")
    return bounded("\n\n".join(parts))
