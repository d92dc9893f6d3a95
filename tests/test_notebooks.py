"""The example notebooks run top to bottom with nbclient against the real Hermes (policies answer for
nobody)."""

from __future__ import annotations

import json
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


#: What CI-only code in a cell would look like: a branch on the environment, a polling loop, a fixed wait.
CI_ONLY_CODE = ("UNATTENDED", "os.environ", "getenv", "while ", "time.sleep")


def _no_ci_code(nb: nbformat.NotebookNode) -> None:
    """What a person reads holds no code of CI's own: CI answers from outside, by the environment."""
    shown = [
        c.source[:60]
        for c in nb.cells
        if "CI" in c.source.replace(".", " ").split()
        or (c.cell_type == "code" and any(marker in c.source for marker in CI_ONLY_CODE))
    ]
    assert shown == [], shown


def test_quickstart_runs_top_to_bottom(kernel_env: None, hermes: LocalHermes, tmp_path: Path) -> None:
    """quickstart.ipynb executes without errors, answered from outside (HERMES_NOTEBOOK_UNATTENDED: Allow
    once, the first choice); its saved outputs are static transcripts without secrets."""
    nb = nbformat.read(NOTEBOOKS / "quickstart.ipynb", as_version=4)
    _no_ci_code(nb)
    (hermes.workdir / "quickstart-scratch").mkdir(exist_ok=True)
    NotebookClient(
        nb, timeout=180, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    ).execute()
    code = [c for c in nb.cells if c.cell_type == "code"]

    def out(snippet: str) -> str:
        return _text(next(c for c in code if snippet in c.source))

    assert "Hello from the scripted model" in out('hermes.ask("Hello! Who are you?")')
    assert "protocol features" in out("hermes.status()") and "features: " not in out("hermes.status()")
    assert "('terminal', 'completed')" in out("r.tools]")
    assert "Dangerous command ran (exit code 0)." in out('hermes.ask("DANGER quickstart-scratch")')
    assert "You chose: A" in out("CLARIFY Which option")
    assert "Let me think about this" in out("thought.reasoning")
    sessions = out("%hermes sessions")
    assert "Run echo hello from a tool" in sessions and "not offered" not in sessions  # plain titles
    # The live views were replaced by static transcripts (what GitHub/nbviewer show).
    magic = next(c for c in code if c.source == "%hermes --approve deny DANGER quickstart-scratch")
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
    """working_with_data.ipynb runs on the newer Hermes, answered from outside: the {sales} summary is sent
    as context with the question, the agent reads the DataFrame through the kernel tools (its result shown as
    text), its code runs once the Run card is answered, the cell changes are proposed (nbclient has no page to
    show them, so the tools say so), a plan, a diff, an undo in words, an export."""
    nb = nbformat.read(NOTEBOOKS / "working_with_data.ipynb", as_version=4)
    _no_ci_code(nb)
    NotebookClient(
        nb, timeout=180, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    ).execute()
    code = [c for c in nb.cells if c.cell_type == "code"]

    def out(snippet: str) -> str:
        return _text(next(c for c in code if snippet in c.source))

    preview = out("preview=True")
    assert "`sales` (DataFrame: 4 rows × 3 columns):" in preview and "What stands out in `sales`?" in preview
    assert "You said: What stands out in `sales`?" in out("asked = %hermes")
    described = out("KERNEL describe sales")
    assert "Kernel tool result:" in described and "revenue: float64" in described
    assert "untrusted_tool_result" not in described and '{"result"' not in described
    ran = _text(next(c for c in code if c.source == "sales"))
    assert (
        "price" in ran and "0.292" in ran
    )  # the card was answered Run: the new column, in the user's namespace
    assert "insert_cell" in out("KERNEL insert_cell") and "edit_cell" in out("KERNEL edit_cell")
    assert "Read the data" in out('hermes.ask("PLAN")')
    diff = out("EDIT sales-report.md")
    assert "-revenue: 31.85" in diff and "+revenue: 31.90" in diff and "a/sales-report.md" in diff
    assert "//" not in diff.split("a/sales-report.md")[0][-3:]  # no machine path before it
    assert "Undid the last exchange" in out("hermes.undo()")
    exported = tmp_path / "sales-analysis.md"
    assert (
        exported.is_file()
        and "KERNEL describe sales" in exported.read_text()
        and "PLAN" in exported.read_text()
    )
    assert "What was the revenue in 1999" not in exported.read_text()  # undone
    assert "&#" not in exported.read_text()  # summaries read as written
    assert hermes.api_key not in json.dumps(nb) and hermes.dashboard_token not in json.dumps(nb)
    assert not [
        c.source[:40] for c in code if "HTTP Request:" in _text(c)
    ]  # no library log lines in the cells
