"""The agent's ``preview`` tool over the tool table, in this process (a stand-in Dashboard, real turns): it
previews only a code cell its own session proposed, runs it in a copy (the namespace is untouched), shows it
on the tool part as a run, and its result carries the card's summary."""

from __future__ import annotations

from typing import Any

from hermes_notebook.client.dashboard.session import SessionRef
from hermes_notebook.client.dashboard.turn import Turn
from hermes_notebook.client.dashboard.turn_state import TurnState
from hermes_notebook.kernel.document import DOCUMENT
from hermes_notebook.kernel.preview.proposed import PROPOSED, proposal_words
from hermes_notebook.kernel.preview.report import CARD_SENTENCE
from hermes_notebook.kernel.preview.tool import RUN_TITLE
from hermes_notebook.turns import TurnFolder
from hermes_notebook.turns.events import Event
from tests.kernel.test_kernel_tools import FakeDashboard, _drive, _share, tools  # noqa: F401
from tests.scripted_front_end import ScriptedFrontEnd


def test_the_agent_previews_its_own_proposal_and_gets_the_summary(tools: Any) -> None:  # noqa: F811
    """With runs allowed: the summary has the printed line, ``df`` changed in place and the card's sentence,
    while the kernel's ``df`` is unchanged; its card is titled as a preview in a copy and shows the limit the
    user set (30 s by default, not the internal margin), and its label names the proposed cell, not the change
    id; another session's change id runs nothing."""
    page = ScriptedFrontEnd(DOCUMENT)  # the tool is offered with the notebook's front end, as the cell tools
    page.hello()
    try:
        _preview(tools)
    finally:
        page.bye()
        DOCUMENT.closed()


def _preview(tools: Any) -> None:  # noqa: F811
    conn = FakeDashboard()
    _share(tools, conn, run="allow")
    source = "df.append(4)\nprint('sum', sum(df))"
    PROPOSED.remember("stored-t1", "c1-test", source, proposal_words("insert", 1))
    PROPOSED.remember("stored-other", "c2-test", "print('not yours')")
    name = f"mcp__{tools.name}__preview"
    turn = conn.start_tool("t1", "k1", {"name": name, "args": {"change": "c1-test"}})
    text = _drive(tools, tools.call("preview", {"change": "c1-test"}), turn, conn)
    assert text.startswith("Preview finished in"), text
    assert CARD_SENTENCE in text and "sum 10" in text
    assert "- df: changed in place (list, len 4)" in text
    assert tools._namespace["df"] == [1, 2, 3]
    part = next(p for p in turn.message.parts if p.kind == "tool")
    assert part.interaction is not None and part.interaction.response == "finished"
    assert part.interaction.to_dict().get("title") == RUN_TITLE
    assert part.label == {"name": "notebook: preview", "detail": "the proposed new cell at index 1"}
    assert (part.interaction.description or "").endswith("Time limit: 30 s."), part.interaction.description
    other = conn.start_tool("t2", "k2", {"name": name, "args": {"change": "c2-test"}})
    refused = _drive(tools, tools.call("preview", {"change": "c2-test"}), other, conn)
    assert "is not one. Nothing ran." in refused


def test_a_named_call_keeps_its_name_when_the_arguments_arrive_later() -> None:
    """``Turn.name_call`` sets the part's label detail (a patch views apply); 0.19.0's ``tool.complete``
    bringing the arguments later does not turn it back into ``change=c5-43bb``; the proposals' words for an
    edit; a finished turn names nothing."""
    folder = TurnFolder("t1")
    state = TurnState(SessionRef("live", "stored"), "t1", "hi", folder)
    turn = Turn(state)
    folder.apply(Event("tool.start", {"tool_id": "k1", "name": "mcp__notebook_0a1b2c3d__preview"}))
    assert turn.name_call("tool:k1", proposal_words("edit", 2))
    label = {"name": "notebook: preview", "detail": "the proposed edit of cell 2"}
    assert state.records[-1]["fields"] == {"label": label}  # type: ignore[typeddict-item]
    state.push(folder.apply(Event("tool.complete", {"tool_id": "k1", "args": {"change": "c5-43bb"}})))
    assert turn.message.parts[-1].arguments == {"change": "c5-43bb"}  # the arguments did arrive
    assert turn.message.parts[-1].to_dict()["label"] == label
    assert not turn.name_call("tool:nope", "x")
    state.end("complete")
    assert not turn.name_call("tool:k1", "x")
