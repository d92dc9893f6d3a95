"""Read before write, against a scripted front end that checks as the page does: the
outline carries each cell's version, an edit or deletion of a cell changed since the agent read it is refused
before anything is shown (with the cell as it is now), a never-seen cell is proposed against the cell as it is
now, and bad input (a version that does not parse, an index past the end, another notebook's path) gets one
line and changes nothing. The page's own half is js/tests/notebook_safety.test.ts."""

from __future__ import annotations

import json

from hermes_notebook.kernel.document import DocumentLink
from hermes_notebook.kernel.stale import fence
from hermes_notebook.kernel.versions import SeenCells, cell_version, parse_version
from tests.helpers import FIXTURES
from tests.kernel.test_cell_tools import FakeTurn, _call, _page


def test_cell_versions_match_the_front_end_and_parse_strictly() -> None:
    """The kernel's versions equal the page's (the shared fixture the vitest twin reads); a version parses
    with or without its ``v`` and anything else does not."""
    cases = json.loads((FIXTURES / "cell_versions.json").read_text())["cases"]
    assert len(cases) >= 5
    for case in cases:
        assert cell_version(case["source"]) == case["version"]
    assert parse_version("v1A2b3C4d") == parse_version(" 1a2b3c4d ") == "1a2b3c4d"
    assert [parse_version(v) for v in ("1a2b3c4", "zz", 12345678, None, "v1a2b3c4d5")] == [None] * 5
    assert fence("a ```` b") == "`````\na ```` b\n`````"


def test_a_stale_edit_is_refused_with_the_cell_as_it_is_now_and_the_users_text_stays() -> None:
    """The user types in a cell after the agent read it: edit_cell is refused before the page shows anything,
    the refusal carries the current source and version, and the next edit (from what it now saw) goes through;
    a deletion after cells moved is refused as another cell; the agent's own kept edit is not stale."""
    link, seen, turn = DocumentLink(), SeenCells(), FakeTurn()
    page = _page(link)
    assert "v" + cell_version("print(x)") in _call("list_cells", {}, link, seen=seen)
    page.cells[2]["source"] = "print(x)  # typed by the user"
    text = _call("edit_cell", {"index": 2, "source": "print(2 * x)"}, link, seen=seen, turn=turn)
    assert text.startswith(
        "Refused: cell 2 changed since you last read it (the user typed in it, or another change was kept); "
        "nothing was shown to the user and nothing was changed."
    )
    assert (
        f"(version {cell_version('print(x)  # typed by the user')}):\n```\nprint(x)  # typed by the user\n```"
        in text
    )
    assert page.pending == {} and turn.links == []
    assert page.cells[2]["source"] == "print(x)  # typed by the user"
    # What the refusal showed counts as read: proposing again from it goes through.
    text = _call("edit_cell", {"index": 2, "source": "print(2 * x)  # typed by the user"}, link, seen=seen)
    assert text.startswith("Proposed an edit of cell 2") and len(page.pending) == 1
    # The user keeps it: the cell is what the agent wrote, so a further edit is not stale.
    page.cells[2]["source"] = "print(2 * x)  # typed by the user"
    assert _call("edit_cell", {"index": 2, "source": "print(3 * x)"}, link, seen=seen).startswith("Proposed")
    # Cells moved: index 1 now names the code cell, not the markdown the agent read there.
    _call("list_cells", {}, link, seen=seen)
    page.cells[1], page.cells[2] = page.cells[2], page.cells[1]
    text = _call("delete_cell", {"index": 1}, link, seen=seen)
    assert text.startswith("Refused: index 1 now names another cell (cells moved since you read them)")
    assert len(page.pending) == 2


def test_never_seen_cells_and_given_versions_and_bad_input() -> None:
    """A cell the agent never read is proposed against the cell as it is now; a given version that matches
    goes through and one that does not is refused; a version that does not parse, an index past the end and
    another notebook's path each get one line, and the page is asked nothing or changes nothing."""
    link = DocumentLink()
    page = _page(link)
    fresh = SeenCells()
    assert _call("edit_cell", {"index": 2, "source": "print(1)"}, link, seen=fresh).startswith(
        f"Proposed an edit of cell 2 (version {cell_version('print(x)')})"
    )
    now = cell_version("print(x)")
    assert _call("delete_cell", {"index": 2, "version": f"v{now}"}, link).startswith("Proposed deleting")
    assert _call("delete_cell", {"index": 2, "version": "0badf00d"}, link).startswith(
        "Refused: cell 2 changed"
    )
    asked = len(page.requests)
    bad = _call("edit_cell", {"index": 2, "source": "x", "version": "yesterday"}, link)
    assert bad == (
        "edit_cell: 'yesterday' is not a cell version (8 hex digits, as list_cells shows them). "
        "Nothing was changed."
    )
    assert len(page.requests) == asked  # refused before the page was asked
    past = _call("edit_cell", {"index": 9, "source": "x"}, link)
    assert past == "Nothing was changed: there is no cell 9; the notebook has 3 cells."
    other = _call("insert_cell", {"index": 0, "source": "x", "notebook": "other.ipynb"}, link)
    assert other == "Nothing was changed: this is scripted.ipynb, not other.ipynb."
    assert "\n" not in bad + past + other
    assert len(page.pending) == 2 and [c["source"] for c in page.cells][2] == "print(x)"
