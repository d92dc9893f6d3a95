"""0.19.0's blind calls: a cell tool's arguments have no preview key, so its ``tool.start`` shows nothing that
tells one session's call from another's. Such a call is bound only when every fitting running part is in one
conversation, and then as unverified: the proposal's diff and the Run card say the caller could not be
verified, and a session's "allow" does not skip the card. The real 0.19.0 server's previews are pinned in
tests/kernel/test_kernel_tools.py (hermes_preview)."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

from hermes_notebook.kernel.binding import Claims, find_call
from hermes_notebook.kernel.document import DocumentLink
from hermes_notebook.kernel.runs import UNVERIFIED
from hermes_notebook.kernel.tools import answer, tool_named
from hermes_notebook.kernel.versions import SeenCells
from tests.kernel.test_cell_tools import FakeTurn, Policy, _bound, _page
from tests.kernel.test_kernel_tools import FakeDashboard

SERVER = "notebook_0a1b2c3d"


def _find(shares: list[Any], tool: str, arguments: dict[str, Any], claims: Claims) -> Any:
    return asyncio.run(find_call(shares, SERVER, tool, arguments, claims, wait=0.1))


def test_a_blind_call_binds_only_when_unambiguous_and_then_unverified() -> None:
    """One conversation running a blind edit_cell: bound, unverified; a newer part with its arguments:
    verified; two conversations each running one: refused, with a notice in both turns."""
    one, two = FakeDashboard(), FakeDashboard()
    share_one, share_two = SimpleNamespace(conversation=one), SimpleNamespace(conversation=two)
    arguments = {"index": 2, "source": "print(1)"}
    one.start_tool("t1", "k1", {"name": f"mcp__{SERVER}__edit_cell", "context": ""})
    bound = _find([share_one, share_two], "edit_cell", arguments, Claims())
    assert bound is not None and bound.share is share_one and not bound.verified and not bound.exact

    newer = FakeDashboard()
    newer.start_tool("t2", "k2", {"name": f"mcp__{SERVER}__edit_cell", "args": arguments})
    exact = _find([SimpleNamespace(conversation=newer)], "edit_cell", arguments, Claims())
    assert exact is not None and exact.verified and exact.exact

    claims = Claims()
    a = one.start_tool("t3", "k3", {"name": f"mcp__{SERVER}__delete_cell", "context": ""})
    b = two.start_tool("t4", "k4", {"name": f"mcp__{SERVER}__delete_cell", "context": ""})
    assert _find([share_one, share_two], "delete_cell", {"index": 0}, claims) is None
    for turn in (a, b):
        [note] = [p.text for p in turn.message.parts if p.kind == "marker"]
        assert "could not be told whose it was" in note
    assert not claims.claimed("t3", "tool:k3")  # nothing was taken: nothing changed


def test_an_unverified_call_says_so_on_the_diff_and_the_run_card() -> None:
    """An unverified proposal reaches the page marked so (its diff says it); an unverified run_cell gets a
    Run card saying the caller could not be verified even where runs are allowed for the session."""
    link = DocumentLink()
    page = _page(link)
    turn = FakeTurn("deny")
    row = tool_named("insert_cell")
    assert row is not None
    call = _bound(link, Policy(), turn, seen=SeenCells(), verified=False)
    text = asyncio.run(answer(row, call, {"index": 0, "source": "x = 1"})).text
    assert text.startswith("Proposed a new code cell")
    [change] = page.pending.values()
    assert change["unverified"] is True
    run = tool_named("run_cell")
    assert run is not None
    allowed = _bound(link, Policy(run="allow"), turn, seen=SeenCells(), verified=False)
    result = asyncio.run(answer(run, allowed, {"index": 0})).text
    assert "NOT run" in result
    [card] = turn.asked
    assert card.kind == "code" and card.description is not None and card.description.endswith(UNVERIFIED)
