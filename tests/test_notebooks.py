"""The example notebooks run top to bottom with nbclient against the real Hermes (policies answer for
nobody)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from hermes_notebook._demo.local_hermes import LocalHermes

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"


def _text(cell: nbformat.NotebookNode) -> str:
    chunks = []
    for output in cell.get("outputs", []):
        if output.get("output_type") == "stream":
            chunks.append(output.get("text", ""))
        chunks.append(output.get("data", {}).get("text/plain", ""))
    return "".join(chunks)


def test_quickstart_runs_top_to_bottom(kernel_env: None, hermes: LocalHermes, tmp_path: Path) -> None:
    """quickstart.ipynb executes without errors; its saved outputs are static transcripts without secrets."""
    nb = nbformat.read(NOTEBOOKS / "quickstart.ipynb", as_version=4)
    (hermes.workdir / "quickstart-scratch").mkdir(exist_ok=True)
    NotebookClient(
        nb, timeout=180, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    ).execute()
    code = [c for c in nb.cells if c.cell_type == "code"]
    by_source = {c.source.splitlines()[0]: c for c in code}
    assert "Hello from the scripted model" in _text(by_source['reply = hermes.ask("Hello! Who are you?")'])
    assert "terminal completed -> Command output:" in _text(by_source["tool = r.tools[0]"])
    assert "'response': 'once'" in _text(
        by_source['danger = hermes.ask("DANGER quickstart-scratch", approve=APPROVE)']
    )
    assert "You chose: B" in _text(
        by_source['choice = hermes.ask("CLARIFY Which option do you want?", clarify=CLARIFY)']
    )
    assert "answer:    I thought about it" in _text(
        by_source['thought = hermes.ask("THINK What is six times seven?")']
    )
    # The live views were replaced by static transcripts (what GitHub/nbviewer show).
    magic = by_source["%hermes --approve deny DANGER quickstart-scratch"]
    bundles = [
        o.get("data", {}) for o in magic.outputs if o.get("output_type") in ("display_data", "execute_result")
    ]
    assert any("Dangerous command was blocked" in b.get("text/plain", "") for b in bundles)
    assert not any("application/vnd.jupyter.widget-view+json" in b for b in bundles)
    saved = json.dumps(nb)
    # Named, not `x not in saved`: pytest's diff of a miss in a large notebook takes minutes.
    leaked = [
        name
        for name, value in (("API key", hermes.api_key), ("Dashboard token", hermes.dashboard_token))
        if value in saved
    ]
    assert leaked == [], f"the saved notebook holds the {', '.join(leaked)}"


@pytest.mark.servers("newer")
def test_working_with_data_runs_top_to_bottom(kernel_env: None, hermes: LocalHermes, tmp_path: Path) -> None:
    """working_with_data.ipynb runs on the newer Hermes: the {sales} summary is sent, the agent reads the
    DataFrame through the kernel tools, its code runs once the Run/Deny card is answered, a plan, a diff, an
    undo, an export."""
    nb = nbformat.read(NOTEBOOKS / "working_with_data.ipynb", as_version=4)
    NotebookClient(
        nb, timeout=180, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    ).execute()
    code = [c for c in nb.cells if c.cell_type == "code"]

    def out(snippet: str) -> str:
        return _text(next(c for c in code if snippet in c.source))

    assert "revenue" in out("preview=True")
    assert "DataFrame: 4 rows × 3 columns" in out("asked = %hermes")
    described = out("KERNEL describe sales")
    assert "Kernel tool result:" in described and "revenue: float64" in described
    ran = out("KERNEL run_code")
    assert (
        "price" in ran and "0.292" in ran
    )  # the card was answered Run: the new column, in the user's namespace
    assert "Read the data" in out('hermes.ask("PLAN")')
    diff = out("EDIT sales-report.md")
    assert "-revenue: 31.85" in diff and "+revenue: 31.90" in diff
    undo = re.search(
        r"undo removed (\d+) stored rows; the transcript went from (\d+) to (\d+) messages",
        out("hermes.undo()"),
    )
    assert (
        undo is not None and int(undo[1]) >= 2 and int(undo[2]) - int(undo[3]) == 2
    )  # one exchange: prompt and reply
    exported = tmp_path / "sales-analysis.md"
    assert (
        exported.is_file()
        and "KERNEL describe sales" in exported.read_text()
        and "PLAN" in exported.read_text()
    )
    assert hermes.api_key not in json.dumps(nb) and hermes.dashboard_token not in json.dumps(nb)
    assert not [
        c.source[:40] for c in code if "HTTP Request:" in _text(c)
    ]  # no library log lines in the cells
