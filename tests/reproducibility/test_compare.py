"""Each code cell's verdict (reproducibility/compare.py) and the report's forms (report.py): pure."""

from __future__ import annotations

import json
from typing import Any

from hermes_notebook.reproducibility import ReproReport
from hermes_notebook.reproducibility.compare import check_cells, diff_lines


def _code(source: str, *outputs: dict[str, Any], cell_id: str = "") -> dict[str, Any]:
    return {"cell_type": "code", "id": cell_id, "source": source, "outputs": list(outputs)}


def _out(text: str) -> dict[str, Any]:
    return {"output_type": "stream", "name": "stdout", "text": text}


SAVED = [
    {"cell_type": "markdown", "id": "m", "source": "# title"},
    _code("x = 1\nprint(x)", _out("1\n"), cell_id="a"),
    _code("print(x + 1)", _out("2\n"), cell_id="b"),
    _code("print(y)", _out("5\n"), cell_id="c"),
    _code("print('end')", _out("end\n"), cell_id="d"),
]
NAME_ERROR = {
    "output_type": "error",
    "ename": "NameError",
    "evalue": "name 'y' is not defined",
    "traceback": ["\x1b[0;31mNameError\x1b[0m Traceback", "----> 1 print(y)"],
}


def test_cells_are_same_changed_error_or_not_reached() -> None:
    """Markdown is skipped; equal masked outputs are same; different ones changed with a saved-then-new diff;
    the erring cell is error with its name, message and colourless traceback; cells after it are not reached
    (the run stopped, whatever their saved outputs)."""
    ran = {1: _code("", _out("1\n")), 2: _code("", _out("3\n")), 3: _code("", NAME_ERROR)}
    checks = check_cells(SAVED, ran)
    assert [(c.index, c.number, c.cell_id, c.status) for c in checks] == [
        (1, 1, "a", "same"),
        (2, 2, "b", "changed"),
        (3, 3, "c", "error"),
        (4, 4, "d", "not reached"),
    ]
    assert checks[0].diff == ""
    assert "-2" in checks[1].diff.splitlines() and "+3" in checks[1].diff.splitlines()
    assert checks[2].error == "NameError: name 'y' is not defined"
    assert checks[2].traceback == ("NameError Traceback", "----> 1 print(y)")
    assert checks[3].diff == checks[3].error == ""


def test_long_diffs_are_cut_and_say_so() -> None:
    """A diff beyond its limit ends with how many lines it left out."""
    diff = diff_lines([str(n) for n in range(100)], [str(n + 1000) for n in range(100)], limit=10)
    assert len(diff.splitlines()) == 11 and diff.endswith("more diff lines")


def test_report_is_inert_readable_and_exportable() -> None:
    """Notebook text in the report is never markup: the HTML escapes it, the text shows control characters
    instead of obeying them, the Markdown fences it; the dict and JSON carry every verdict and the counts."""
    hostile = _code('print("<img src=x onerror=alert(1)>")\x1b]0;t\x07', _out("<script>alert(1)</script>\n"))
    ran = {0: _code("", _out("<b>new</b>\n")), 1: _code("", NAME_ERROR)}
    report = ReproReport("/nb/a.ipynb", "python3", 1.5, tuple(check_cells([hostile, SAVED[3]], ran)))
    assert not report.reproduces
    assert report.counts == {"same": 0, "changed": 1, "error": 1, "not reached": 0}
    html = report._repr_html_()
    assert "<img" not in html and "<script" not in html and "<b>new" not in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html and "&lt;script&gt;" in html
    assert "\x1b" not in str(report) and "⟦U+001B⟧" in str(report)
    assert "a.ipynb does not reproduce: 1 changed, 1 error" in str(report)
    markdown = report.to_markdown()
    assert "```\n--- saved" in markdown and "## Cell 2: error" in markdown
    data = json.loads(report.to_json())
    assert data["counts"]["changed"] == 1 and data["reproduces"] is False
    assert [cell["status"] for cell in data["cells"]] == ["changed", "error"]
    assert data["cells"][1]["traceback"] == ["NameError Traceback", "----> 1 print(y)"]
    assert report.cells_with("error")[0].number == 2
    same = ReproReport(
        "/nb/b.ipynb", "python3", 0.1, tuple(check_cells(SAVED[:3], {1: SAVED[1], 2: SAVED[2]}))
    )
    assert same.reproduces and same.summary().startswith("b.ipynb reproduces: 2 same")
