"""Undo variables after an approved run, with the run's own code path (``run_source``) and real pickles:
offered only when every changed name was saved, exact when offered, refused with a reason otherwise."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from hermes_notebook.kernel.execute import run_source
from hermes_notebook.kernel.undo.savepoint import NOT_UNDONE, Savepoint


def _run(namespace: dict[str, Any], code: str) -> Any:
    point = Savepoint.take(namespace, code)
    report = run_source(namespace, code)
    assert report.error == "", report.error
    return point.after(namespace)


def test_undo_restores_df_after_a_drop_and_deletes_what_the_run_created() -> None:
    """``df = df.drop(columns='x')`` plus a new name: Undo restores ``df`` (its columns and values) and
    deletes ``n``, and says files and other effects were not undone; a second cell run on ``df`` since the run
    makes Undo refuse and change nothing."""
    namespace: dict[str, Any] = {"df": pd.DataFrame({"x": [1, 2], "y": [3, 4]})}
    offer = _run(namespace, "df = df.drop(columns='x')\nn = len(df)")
    assert offer.offered and offer.reason == ""
    said = offer.undo(namespace)
    assert list(namespace["df"].columns) == ["x", "y"] and namespace["df"]["x"].tolist() == [1, 2]
    assert "n" not in namespace
    assert said == f"Undone: restored df; deleted n. {NOT_UNDONE}"
    again = _run(namespace, "df = df.drop(columns='x')")
    run_source(namespace, "df['w'] = 0")  # the user's own cell, after the run
    refused = again.undo(namespace)
    assert refused.startswith("Undo refused: df changed after the run") and "w" in namespace["df"].columns


def test_undo_is_not_offered_after_a_run_that_touched_an_open_file(tmp_path: Path) -> None:
    """A run that writes to an open file (an object that cannot be saved) is not offered Undo, and the
    reason names it; so is a run that changed an object through a name it does not mention."""
    path = tmp_path / "log.txt"
    with path.open("w") as handle:
        namespace: dict[str, Any] = {"f": handle, "rows": [1]}
        offer = _run(namespace, "f.write('x')\nrows.append(2)\ncount = 1")
        assert not offer.offered
        assert offer.reason == "Undo is not offered: f: an open file (TextIOWrapper) cannot be saved."
        assert offer.undo(namespace) == offer.reason and namespace["count"] == 1
    alias: dict[str, Any] = {"a": [1], "b": None}
    alias["b"] = alias["a"]
    hidden = _run(alias, "b.append(2)")
    assert (
        hidden.reason == "Undo is not offered: a: it changed but was not saved (the code does not name it)."
    )


def test_a_cell_between_a_runs_cells_is_told_apart_from_the_run() -> None:
    """Two cells of one run with another cell between them: the names that cell changed which the run's code
    names are reported (Undo would undo that cell too); the others stay out of the offer, so Undo neither
    deletes nor restores them, and restores and deletes exactly the run's own."""
    namespace: dict[str, Any] = {"x": 0, "kept": [1]}
    point = Savepoint.take(namespace, ["a = 1", "x = x + 1"])
    run_source(namespace, "a = 1")
    assert point.after(namespace).created == ["a"]
    run_source(namespace, "other = 5\nkept = kept + [2]")  # the user's cell, between the run's cells
    assert point.touched_since(namespace) == []
    run_source(namespace, "x = x + 1")
    offer = point.after(namespace)
    assert (offer.changed, offer.created, offer.offered) == (["x"], ["a"], True)
    assert offer.undo(namespace) == f"Undone: restored x; deleted a. {NOT_UNDONE}"
    assert namespace["x"] == 0 and namespace["other"] == 5 and namespace["kept"] == [1, 2]
    again = Savepoint.take(namespace, ["a = 1", "x = x + 1"])
    run_source(namespace, "a = 1")
    again.after(namespace)
    run_source(namespace, "x = 10")  # the user's cell sets a name the run's next cell changes
    assert again.touched_since(namespace) == ["x"]
