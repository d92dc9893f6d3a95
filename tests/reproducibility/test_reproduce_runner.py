"""The reproducibility check on real kernels (reproducibility/runner.py through ``%hermes reproduce`` and
``hermes_notebook.reproducibility.reproduce``): nbclient runs the saved notebook in a fresh ipykernel.

No Hermes server is involved: the check is the kernel's and the notebook's alone.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import nbformat
import pytest
from IPython.core.interactiveshell import InteractiveShell
from nbclient import NotebookClient
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from hermes_notebook.errors import HermesUsageError
from hermes_notebook.notebook.magics import load_ipython_extension
from hermes_notebook.reproducibility import ReproReport, reproduce
from tests.helpers import FIXTURES


@pytest.fixture
def shell() -> Iterator[InteractiveShell]:
    """The process-wide IPython shell with %hermes loaded (its connection, never used here, closed after)."""
    ip = InteractiveShell.instance()
    load_ipython_extension(ip)
    yield ip
    magics = ip.magics_manager.registry["HermesMagics"]
    if magics._hermes is not None:
        magics._hermes.close()
        magics._hermes = None


def test_a_drifted_notebook_names_the_changed_cell_and_the_error(
    shell: InteractiveShell, tmp_path: Path
) -> None:
    """``%hermes reproduce PATH`` on the fixture: cells 1-3 are same (an object's address and ``%time``'s
    timings masked), cell 4 changed (saved 41, now 42: the diff), cell 5 an error (it uses a variable whose
    cell was deleted: NameError, by its id), cell 6 not reached; the notebook file is not written."""
    path = tmp_path / "drifted.ipynb"
    shutil.copy(FIXTURES / "reproduce_drift.ipynb", path)
    before = path.read_bytes()
    result = shell.run_cell(f"%hermes reproduce {path}")
    result.raise_error()
    report = result.result
    assert isinstance(report, ReproReport)
    assert [(cell.number, cell.status) for cell in report.cells] == [
        (1, "same"),
        (2, "same"),
        (3, "same"),
        (4, "changed"),
        (5, "error"),
        (6, "not reached"),
    ]
    changed, error = report.cells_with("changed")[0], report.cells_with("error")[0]
    assert ["-41", "+42"] == [line for line in changed.diff.splitlines() if line in ("-41", "+42")]
    assert (error.cell_id, error.index, error.error) == (
        "cell-5",
        5,
        "NameError: name 'scale' is not defined",
    )
    assert any("print(scale * value)" in line for line in error.traceback)
    assert report.kernel == "python3" and report.path == str(path) and not report.reproduces
    assert "NameError" in report._repr_html_() and "## Cell 4: changed" in report.to_markdown()
    assert path.read_bytes() == before


def test_an_unchanged_notebook_reproduces_every_cell(tmp_path: Path) -> None:
    """A notebook saved by a plain nbclient run, checked again: every cell same, though addresses, timings
    and ``%timeit``'s numbers differ between the runs; it runs in the notebook's folder (a relative data
    file reads). A missing path or a file that is no notebook is a usage error naming it."""
    (tmp_path / "data.csv").write_text("a,b\n1,2\n")
    notebook = new_notebook(
        cells=[
            new_markdown_cell("volatile outputs"),
            new_code_cell("class Box:\n    pass\n\nBox()"),
            new_code_cell("%time total = sum(range(100))"),
            new_code_cell("%timeit -n 5 -r 2 sum(range(100))"),
            new_code_cell("print(open('data.csv').read())"),
        ],
        metadata={"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
    )
    NotebookClient(notebook, resources={"metadata": {"path": str(tmp_path)}}).execute()
    path = tmp_path / "clean.ipynb"
    nbformat.write(notebook, path)
    report = reproduce(path)
    assert [cell.status for cell in report.cells] == ["same"] * 4, str(report)
    assert report.reproduces and report.counts["same"] == 4
    with pytest.raises(HermesUsageError, match="no notebook at .*missing.ipynb"):
        reproduce(tmp_path / "missing.ipynb")
    with pytest.raises(HermesUsageError, match="data.csv is not a notebook"):
        reproduce(tmp_path / "data.csv")
