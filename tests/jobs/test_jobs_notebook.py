"""notebooks/jobs.ipynb runs end to end with nbclient against the real Hermes (it waits for one real cron
run)."""

from __future__ import annotations

import os
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from tests.helpers import REPO

NOTEBOOK = REPO / "notebooks" / "jobs.ipynb"


def test_jobs_notebook_runs_against_real_hermes(
    hermes, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Every cell runs without error, including the triggered run's wait, and leaves no job behind."""
    monkeypatch.setenv("HERMES_API_URL", hermes.api_url)
    monkeypatch.setenv("HERMES_API_KEY", hermes.api_key)
    monkeypatch.setenv(
        "PYTHONPATH", os.pathsep.join(filter(None, [str(NOTEBOOK.parents[1]), os.environ.get("PYTHONPATH")]))
    )
    nb = nbformat.read(NOTEBOOK, as_version=4)
    NotebookClient(
        nb, timeout=240, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    ).execute()
    outputs = [o for cell in nb.cells if cell.cell_type == "code" for o in cell.get("outputs", [])]
    text = "\n".join(str(o.get("text", "")) + str(o.get("data", {})) for o in outputs)
    assert not [o for o in outputs if o.output_type == "error"]
    assert "refused: Day names" in text and "every weekday at 09:00" in text
    assert " ok" in text  # the run's status line
    assert hermes.api_key not in nbformat.writes(nb)
    import httpx

    jobs = httpx.get(
        f"{hermes.api_url}/api/jobs?include_disabled=true",
        headers={"Authorization": f"Bearer {hermes.api_key}"},
    ).json()["jobs"]
    assert not [j for j in jobs if j["name"].startswith("notebook demo")]
