"""The cell tools: Hermes reads the notebook's outline and proposes cell changes the user keeps or discards.

``list_cells`` is a read (off unless the session may read the kernel). ``insert_cell``, ``edit_cell`` and
``delete_cell`` only *propose*: the front-end extension shows each as a pending change on its cell (a diff with
Keep and Discard); nothing in the notebook changes, and nothing runs, until the user keeps it, and a turn that
ends leaves its proposals pending. The tool part is linked to its change (``cell_change``), so the chat can
show the cell. ``run_cell`` asks on the same Run/Deny card as ``run_code``, with the cell's whole source; Run
runs that cell in the notebook (its output shows there), and only if its source is still what the card showed.

All of them need the notebook's front end (:mod:`.document`): they are offered only while one is attached.
Everything the front end sends back is bounded here before it reaches the agent (and scrubbed by the caller).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from ..turns import CODE_CHOICES, READS_CHOICE, Interaction
from ..turns.changes import CellChangeDict
from .document import DOCUMENT, Answer, DocumentLink
from .grants import ReadGrants
from .reading import bounded

__all__ = [
    "CELL_READ_TOOLS",
    "CELL_TOOLS",
    "CELL_TYPES",
    "DESCRIPTIONS",
    "MAX_SOURCE_CHARS",
    "SHELL",
    "Caller",
    "CellTurn",
    "SharePolicy",
    "ShellActivity",
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
    "list_cells": "The notebook's cells as an outline: index (from 0), type, first line, execution count and the "
                  "kinds of output, plus changes still waiting for the user. Use the indexes with the other cell "
                  "tools.",
    "insert_cell": "Propose a new cell at `index` (0 = first; the number of cells = at the end) with `source`; "
                   "`cell_type` is code, markdown or raw. The user sees it as a pending change and keeps or "
                   "discards it; nothing runs. Indexes do not change until the user keeps it.",
    "edit_cell": "Propose replacing the whole source of cell `index` with `source`. The user sees the diff on the "
                 "cell and keeps or discards it; nothing runs.",
    "delete_cell": "Propose deleting cell `index`. The user keeps (deletes) or discards it.",
    "run_cell": "Run code cell `index` in the notebook, its output shown there. The user sees the cell's whole "
                "source and must click Run first; returns the cell's outputs.",
}

_change_ids = itertools.count(1)
_run_ids = itertools.count(1)


class SharePolicy(Protocol):
    """What the cell tools need to know of a share (:class:`~hermes_notebook.kernel.share.KernelShare`)."""

    run: str
    grants: ReadGrants

    def may_read(self, session_id: str) -> bool: ...


class CellTurn(Protocol):
    """The turn a call came from (:class:`~hermes_notebook.client.dashboard.Turn`): its card and its tool part."""

    async def ask(self, part_id: str, interaction: Interaction, timeout: float) -> str | None: ...

    def link_cell_change(self, part_id: str, change: CellChangeDict) -> bool: ...


@dataclass(frozen=True)
class Caller:
    """Who a call belongs to: the sharing connection's policy, its turn, the call's tool part, the session."""

    share: SharePolicy
    turn: CellTurn
    part_id: str
    session_id: str
    #: Seconds the Run/Deny card of ``run_cell`` waits, and the cell may run.
    answer_timeout: float
    run_timeout: float


class ToolsChanged(Protocol):
    """The tool server, told when the offered tools change (:meth:`~.server.ToolServer.tools_changed`)."""

    def tools_changed(self) -> None: ...


class ShellActivity:
    """Whether the kernel's shell is running a cell now (IPython's ``pre_execute`` / ``post_execute`` events).

    Why: ``run_cell`` runs the cell through the notebook, which queues it behind a running cell. Behind a
    ``%hermes`` cell that waits for this very turn it would wait for ever (then run after the agent was told it did
    not), so a busy kernel is refused before the user is asked."""

    def __init__(self) -> None:
        self._running = 0
        self._shells: list[Any] = []

    @property
    def busy(self) -> bool:
        return self._running > 0

    def follow(self, shell: Any) -> None:
        """Count ``shell``'s cells from now on (once per shell; None: not in IPython)."""
        if shell is None or any(s is shell for s in self._shells) or not hasattr(shell, "events"):
            return
        shell.events.register("pre_execute", self._started)
        shell.events.register("post_execute", self._ended)
        self._shells.append(shell)

    def _started(self) -> None:
        self._running += 1

    def _ended(self) -> None:
        self._running = max(0, self._running - 1)


#: The kernel shell's activity, followed from the first share.
SHELL = ShellActivity()

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
    from ..notebook.shell import ipython

    SHELL.follow(ipython())


def offered(attached: bool | None = None) -> tuple[str, ...]:
    """The cell tools to offer now: all of them while a front end with the extension is attached, else none."""
    return CELL_TOOLS if (DOCUMENT.attached if attached is None else attached) else ()


async def call(
    tool: str, arguments: Mapping[str, Any], caller: Caller, link: DocumentLink = DOCUMENT, shell: ShellActivity = SHELL,
) -> str:
    """Answer one cell tool call for ``caller`` (who found the call's tool part, and scrubs the text)."""
    if not link.attached:
        return ("The notebook's front end is not attached: cell tools need the notebook open in JupyterLab 4 or "
                "Notebook 7 with the hermes-notebook extension. Nothing was changed.")
    if tool == "list_cells":
        if not caller.share.may_read(caller.session_id):
            return ("Reading the notebook is off for this session. The user can turn it on with "
                    "hermes.share_kernel(read=True) or %hermes --kernel read.")
        answer = await link.request("outline")
        return outline(answer.data) if answer.ok else _failed(answer)
    index = _index(arguments.get("index"))
    if index is None:
        return f"{tool} takes a cell index: a whole number from 0 (list_cells shows them)."
    if tool == "run_cell":
        return await _run(index, caller, link, shell)
    kind: Literal["insert", "edit", "delete"] = (
        "insert" if tool == "insert_cell" else "edit" if tool == "edit_cell" else "delete")
    change: dict[str, Any] = {"id": f"c{next(_change_ids)}", "kind": kind, "index": index}
    if kind != "delete":
        source = arguments.get("source")
        if not isinstance(source, str):
            return f"{tool} needs the cell's `source` as text."
        if len(source) > MAX_SOURCE_CHARS:
            return f"Refused: the source is {len(source):,} characters; at most {MAX_SOURCE_CHARS:,} can be proposed."
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
    return (f"Proposed {what} as pending change {change['id']}. It shows on the notebook as a diff; the user keeps "
            "or discards it, and nothing runs. The notebook's cells and indexes stay as they are until the user "
            "keeps it; call list_cells to see what they decided.")


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
            head += f" In[{count}]" if isinstance(count, int) and not isinstance(count, bool) else " (not run)"
        source = _text(cell.get("source"), 100_000)
        first = next((line.strip() for line in source.splitlines() if line.strip()), "")
        if len(first) > FIRST_LINE_CHARS:
            first = first[:FIRST_LINE_CHARS] + "…"
        count_of_lines = cell.get("lines")
        total = (count_of_lines if isinstance(count_of_lines, int) and not isinstance(count_of_lines, bool)
                 else len(source.splitlines()))
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


async def _run(index: int, caller: Caller, link: DocumentLink, shell: ShellActivity) -> str:
    share, session_id = caller.share, caller.session_id
    if share.run == "never":
        return "Refused: running code in this notebook is off (share_kernel(run='never'))."
    if shell.busy:
        return (f"Cell {index} was not run: the kernel is running a cell (perhaps a %hermes cell waiting for this "
                "turn), and the notebook runs one cell at a time. Nothing was asked or run; try when it is idle.")
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
    choices = [*CODE_CHOICES, *([] if share.may_read(session_id) else [READS_CHOICE])]
    interaction = Interaction(
        "code", f"cell-run-{next(_run_ids)}", command=source, choices=choices,
        description=f"It runs cell {index} of this notebook, where its output shows, only if you click Run.",
    )
    answer = await caller.turn.ask(caller.part_id, interaction, caller.answer_timeout)
    if answer == READS_CHOICE:
        share.grants.grant(session_id)
        return ("The user did not run the cell, but allowed the read tools for this session. "
                "The notebook and the kernel are unchanged.")
    if answer != "run":
        why = "denied it" if answer == "deny" else f"did not answer within {caller.answer_timeout:g} s"
        return (f"The user {why}: cell {index} was NOT run and the kernel is unchanged. "
                "Do not retry without asking the user.")
    ran = await link.request("run", timeout=caller.run_timeout, cell=cell_id, source=source)
    if not ran.ok:
        return f"Cell {index} was not run: {ran.error}."
    return run_report(index, ran.data)


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
            parts.append(f"{_text(output.get('name'), 10) or 'stdout'}:\n{_text(output.get('text'), 4000).rstrip()}")
        elif kind == "error":
            parts.append(f"error:\n{_text(output.get('ename'), 200)}: {_text(output.get('evalue'), 2000)}")
        elif kind in ("execute_result", "display_data"):
            text = _text(output.get("text"), 4000).rstrip()
            mimes = ", ".join(_text(m, 60) for m in output.get("mimes") or [] if isinstance(m, str))
            label = "result" if kind == "execute_result" else "display"
            parts.append(f"{label} ({mimes or 'no data'}):\n{text}" if text else f"{label} ({mimes or 'no data'})")
    if len(parts) == 1:
        parts.append("It printed nothing and returned nothing.")
    return bounded("\n\n".join(parts))
