"""``run_cells`` and ``restart_and_run_all`` without Hermes, against a scripted front end: one card lists
every cell it covers, the cells run in order and stop at the first error (its cell's index, id and traceback
for the agent; later cells not run), Deny runs nothing, and a restart always asks and answers before the page
restarts. tests/browser/test_run_cells_browser.py has the real page, kernel and Hermes."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from hermes_notebook.kernel import cell_sequences
from hermes_notebook.kernel.call import ToolCall
from hermes_notebook.kernel.chat_resume import RESUME_HINTS, ChatResumeHints, notebook_of
from hermes_notebook.kernel.document import DocumentLink
from hermes_notebook.kernel.tools import answer, tool_named
from hermes_notebook.kernel.versions import SeenCells
from tests.kernel.test_cell_tools import FakeTurn, Policy
from tests.scripted_front_end import ScriptedFrontEnd, code_cell

SOURCES = ["a = 1", "print('two', a)", "print(missing)", "print('four')", "print('five')"]
TRACEBACK = [
    "Traceback (most recent call last):",
    "  Cell In[3], line 1\n    print(missing)",
    "NameError: missing",
]


def _page(link: DocumentLink) -> ScriptedFrontEnd:
    """Five code cells and a markdown one between them; cell 3 (index 3) raises."""
    cells = [code_cell(f"c{i}", source) for i, source in enumerate(SOURCES)]
    cells.insert(2, {**code_cell("md", "# Notes"), "type": "markdown"})
    page = ScriptedFrontEnd(link, cells=cells)
    page.run_outputs = [{"output_type": "stream", "name": "stdout", "text": "ok\n"}]
    page.outputs_by_cell["c2"] = [
        {
            "output_type": "error",
            "ename": "NameError",
            "evalue": "name 'missing' is not defined",
            "traceback": TRACEBACK,
        }
    ]
    page.hello()
    return page


def _run(
    tool: str,
    arguments: dict[str, Any],
    link: DocumentLink,
    turn: FakeTurn,
    policy: Policy | None = None,
    hints: ChatResumeHints = RESUME_HINTS,
) -> str:
    call = ToolCall(
        policy or Policy(),
        turn,
        "tool:t1",
        "stored-1",
        answer_timeout=5.0,
        document=link,
        seen=SeenCells(),
        resume=hints,
    )  # type: ignore[arg-type]
    row = tool_named(tool)
    assert row is not None
    return asyncio.run(answer(row, call, arguments)).text


def test_run_cells_lists_every_cell_on_one_card_and_stops_at_the_first_error() -> None:
    """One card lists the code cells of the range (headers and whole sources, markdown skipped); Deny runs
    nothing; Run runs them in order until cell 3's error, whose index, id and traceback the agent gets, and
    cells 4 and 5 are not run."""
    link = DocumentLink()
    page = _page(link)
    denied = FakeTurn("deny")
    assert "The user denied it: cells 0-5 was NOT run" in _run("run_cells", {}, link, denied)
    [card] = denied.asked
    assert card.kind == "code" and card.command == (
        "# ── cell 0 ──\na = 1\n\n# ── cell 1 ──\nprint('two', a)\n\n# ── cell 3 ──\nprint(missing)\n\n"
        "# ── cell 4 ──\nprint('four')\n\n# ── cell 5 ──\nprint('five')"
    )
    assert "It runs 5 code cells of this notebook in order (cells 0-5), stopping at the first error" in (
        card.description or ""
    )
    assert not any(r["op"] == "run" for r in page.requests)

    turn = FakeTurn("run")
    text = _run("run_cells", {}, link, turn)
    assert [r["cell"] for r in page.requests if r["op"] == "run"] == ["c0", "c1", "c2"]
    assert text.startswith(
        "Stopped at the first error: cell 3 (id c2) raised NameError: name 'missing' is not defined\n"
        + "\n".join(TRACEBACK)
        + "\nNot run (they keep their outputs): cells 4, 5."
    ), text
    assert "Ran cell 0 (In[1]).\n\nstdout:\nok" in text
    [run] = [i for i in turn.asked if i.kind == "run"]  # the one run card shows the same listing
    assert run.command == turn.asked[0].command and turn.settled[run.request_id] == "finished"

    page.requests.clear()
    text = _run("run_cells", {"first": 4, "last": 5}, link, FakeTurn("run"))
    assert text.startswith("Ran all 2 code cells in order without an error."), text
    assert [r["cell"] for r in page.requests if r["op"] == "run"] == ["c3", "c4"]
    assert "There is no cell 9; the notebook has 6 cells." == _run(
        "run_cells", {"first": 1, "last": 9}, link, turn
    )
    assert "last (1) comes before first (4)" in _run("run_cells", {"first": 4, "last": 1}, link, turn)
    assert "no code cells there" in _run("run_cells", {"first": 2, "last": 2}, link, turn)


def test_restart_always_asks_says_the_state_is_lost_and_deny_restarts_nothing(tmp_path: Path) -> None:
    """restart_and_run_all asks even where runs are allowed for the session, its card saying the kernel's
    state is lost; Deny sends nothing to the page and leaves no resume hint; Run leaves the hint that brings
    the re-run chat back on the asking session, answers first and asks the page to restart a moment later."""
    link = DocumentLink()
    hints = ChatResumeHints(tmp_path, pid=lambda: -1)  # the restarted kernel is another process
    page = _page(link)
    denied = FakeTurn("deny")
    allowed = Policy(run="allow")
    assert "The user denied it: the restart was NOT run" in _run(
        "restart_and_run_all", {}, link, denied, allowed, hints
    )
    [card] = denied.asked
    assert "RESTARTS the kernel: every variable, import and loaded data in it is lost" in (
        card.description or ""
    )
    assert "with your variables" not in (card.description or "")  # they are gone once it restarts
    assert card.command is not None and card.command.startswith("# ── cell 0 ──\na = 1")
    assert not hints.path.exists()

    async def approved() -> str:
        call = ToolCall(
            Policy(), FakeTurn("run"), "tool:t1", "stored-1", answer_timeout=5.0, document=link, resume=hints
        )  # type: ignore[arg-type]
        row = tool_named("restart_and_run_all")
        assert row is not None
        said = (await answer(row, call, {})).text
        assert page.restarts == 0  # the answer goes first
        await asyncio.sleep(cell_sequences.RESTART_DELAY + 0.5)
        return said

    said = asyncio.run(approved())
    assert "the kernel restarts in a moment" in said and "cannot return the run's outcome" in said
    assert page.restarts == 1
    restarted = ChatResumeHints(tmp_path)  # this process: not the one that left the hint
    assert restarted.take(None, notebook_of(link, {})) == "stored-1"  # the page's notebook, default profile
