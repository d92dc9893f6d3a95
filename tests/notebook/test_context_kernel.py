"""Prompt context in a REAL kernel (nbclient + ipykernel) against the real Hermes: ``%hermes fix`` and
``{df}``."""

from __future__ import annotations

import uuid
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from hermes_notebook._demo.local_hermes import LocalHermes
from hermes_notebook._demo.scripted_model import ScriptedModel
from tests.helpers import agent_requests


def _outputs(cell: nbformat.NotebookNode) -> str:
    chunks = []
    for output in cell.get("outputs", []):
        chunks.append(output.get("text", "") if output.get("output_type") == "stream" else "")
        chunks.append(output.get("data", {}).get("text/plain", ""))
        chunks.append(output.get("ename", "") + ": " + output.get("evalue", "") if "ename" in output else "")
    return "".join(chunks)


def test_fix_and_dataframe_context_in_a_real_kernel(
    hermes: LocalHermes, scripted_model: ScriptedModel, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After a failing cell, ``%hermes fix`` sends its source and traceback tail and the reply shows in the
    cell; a filled prompt is saved with the cell's transcript, collapsed and scrubbed of the connection's
    key."""
    for name, value in {
        "HERMES_API_URL": hermes.api_url,
        "HERMES_API_KEY": hermes.api_key,
        "HERMES_DASHBOARD_URL": hermes.dashboard_url,
        "HERMES_DASHBOARD_TOKEN": hermes.dashboard_token,
        "HERMES_NOTEBOOK_UNATTENDED": "1",
    }.items():
        monkeypatch.setenv(name, value)
    marker = f"mean_{uuid.uuid4().hex[:8]}"
    cells = [
        "%load_ext hermes_notebook",
        "import pandas as pd\ndf = pd.DataFrame({'city': ['Oslo', 'Lima'], 'temp': [3.5, 19.0]})",
        f"def {marker}(rows):\n    return sum(rows) / len(rows)\n\n{marker}([])",
        "%hermes fix --new",
        "%hermes --dry-run which city is warmer in {df}?",
        "import os\ncfg = {'key': os.environ['HERMES_API_KEY'], 'city': 'Oslo'}",
        f"%hermes --new cfg-{uuid.uuid4().hex[:8]} what is in {{cfg}}?",
    ]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    NotebookClient(
        nb,
        timeout=180,
        kernel_name="python3",
        allow_errors=True,
        resources={"metadata": {"path": str(tmp_path)}},
    ).execute()
    assert "ZeroDivisionError: division by zero" in _outputs(nb.cells[2])
    fix_output = _outputs(nb.cells[3])
    assert "Hello from the scripted model" in fix_output, fix_output  # the reply shows in the cell
    sent = next(
        text
        for body in reversed(agent_requests(scripted_model))
        for text in [str([m for m in body.get("messages", []) if m.get("role") == "user"][-1:])]
        if marker in text
    )
    assert f"{marker}([])" in sent and "ZeroDivisionError: division by zero" in sent
    assert "return sum(rows) / len(rows)" in sent
    preview = _outputs(nb.cells[4])
    assert "dry run, nothing sent" in preview and "DataFrame: 2 rows × 2 columns" in preview
    assert "temp: float64" in preview
    saved = nb.cells[6].get("outputs", [])
    html = "".join(o.get("data", {}).get("text/html", "") for o in saved)
    assert '<details class="hn-sent"><summary>prompt as sent (1 value filled)</summary>' in html, saved
    assert "&#x27;key&#x27;: &#x27;********&#x27;" in html and "Hello from the scripted model" in html
    assert hermes.api_key not in nbformat.writes(nb)
