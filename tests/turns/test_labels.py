"""A tool part's label (turns/labels.py): the readable name and the one line after it."""

from __future__ import annotations

from hermes_notebook.turns.labels import tool_label

BRIDGED = "mcp__notebook_3f2a__run_cells"


def test_a_part_named_for_its_one_bridged_call_shows_that_calls_arguments_not_its_name_again() -> None:
    """A newer Hermes calls MCP tools through its ``tool_call`` bridge: the part bears the inner tool's name
    and the bridge's arguments. The line after the name is the call's own arguments (the header read
    "notebook: restart_and_run_all  notebook: restart_and_run_all()", cut to a lone letter at 700 px)."""
    bridge = {"calls": [{"name": BRIDGED, "arguments": {"start": 2, "stop": 6}}]}
    label = tool_label(BRIDGED, None, bridge)
    assert label["detail"] == "start=2, stop=6" and label["name"].endswith(": run_cells")
    assert tool_label(BRIDGED, None, {"calls": [{"name": BRIDGED, "arguments": {}}]})["detail"] is None
    # The bridge itself (or a call of another tool) still names what it calls.
    assert tool_label("tool_call", None, bridge)["detail"] == f"{label['name']}(start=2, stop=6)"
