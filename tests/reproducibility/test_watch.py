"""The scheduled check: ``python -m hermes_notebook.reproducibility.watch`` speaks only when the verdict moved
(a real fresh kernel runs a notebook that reads a data file: unchanged, then the file changed, then unchanged
again), and ``hermes.jobs.reproduce`` creates the Hermes cron job whose agent runs it: on both real servers,
runs triggered by run now deliver one report for a changed data file and none for unchanged ones."""

from __future__ import annotations

import subprocess
import sys
import uuid
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

import hermes_notebook as hn
from hermes_notebook._demo.local_hermes import LocalHermes
from hermes_notebook.errors import HermesUsageError
from hermes_notebook.jobs.reproduce_job import reproduce_command
from hermes_notebook.reproducibility import reproduce
from hermes_notebook.reproducibility.watch import SILENT, changes_since_last_run, state_file


def _saved_notebook(folder: Path) -> Path:
    """A notebook saved by a plain nbclient run: cell 1 reads data.txt, cell 2 prints a constant."""
    (folder / "data.txt").write_text("rows: 10\n")
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell("print(open('data.txt').read().strip())"),
        nbformat.v4.new_code_cell("print('fixed')"),
    ]
    NotebookClient(nb, resources={"metadata": {"path": str(folder)}}, kernel_name="python3").execute()
    path = folder / "analysis.ipynb"
    nbformat.write(nb, path)
    return path


def test_the_watch_reports_only_when_the_verdict_moved(tmp_path: Path) -> None:
    """First run reproduces: [SILENT]. The data file changes: one report naming cell 1 as changed, with the
    diff. The next run, nothing new: [SILENT]. The command line prints the same (its own state file)."""
    path, state = _saved_notebook(tmp_path), tmp_path / "state" / "last.json"
    assert changes_since_last_run(reproduce(path), state) == SILENT
    (tmp_path / "data.txt").write_text("rows: 12\n")
    said = changes_since_last_run(reproduce(path), state)
    assert said.startswith("Changed since the last check: cell 1 (changed)."), said
    assert "-rows: 10" in said and "+rows: 12" in said and "cell 2" not in said.split("\n")[0]
    assert changes_since_last_run(reproduce(path), state) == SILENT

    env = {"XDG_CACHE_HOME": str(tmp_path / "cache")}
    assert state_file(path, env).parent == tmp_path / "cache" / "hermes-notebook" / "reproduce"
    command = [
        sys.executable,
        "-m",
        "hermes_notebook.reproducibility.watch",
        str(path),
        "--state",
        str(state),
    ]
    ran = subprocess.run(command, capture_output=True, text=True, timeout=120, check=True)
    assert ran.stdout.strip() == SILENT


@pytest.mark.both_servers
def test_a_scheduled_check_delivers_one_report_when_a_data_file_changed(
    hermes: LocalHermes, tmp_path: Path
) -> None:
    """A job from ``jobs.reproduce``, triggered by the real server's run now (the scheduler's next tick):
    the first run reproduces and the data file then changes, so the second run's answer names cell 1 as
    changed; a third run, nothing new, answers [SILENT]: the scheduler skipped delivering runs 1 and 3 (its
    log says so), so one report was delivered."""
    path = _saved_notebook(tmp_path)
    h = hn.connect(hermes.settings())
    with pytest.raises(HermesUsageError, match="no notebook at"):
        h.jobs.reproduce(tmp_path / "gone.ipynb", "every 1d")  # refused before any request
    job = h.jobs.reproduce(path, "every 1d", name=f"repro-{uuid.uuid4().hex[:6]}")
    assert reproduce_command(path) in job.prompt  # the server accepted the prompt as written
    answers: list[str] = []
    try:
        for change in (None, "rows: 12\n", None):
            if change is not None:
                (tmp_path / "data.txt").write_text(change)
            ran = h.jobs.wait_for_run(h.jobs.run(job.id), timeout=180, poll=1.0)
            assert ran.last_status == "ok", (ran.last_status, ran.last_error)
            latest = h.jobs.runs(job.id)[0]
            said = [m for m in h.jobs.transcript(latest) if m.get("role") == "assistant"]
            answers.append(str(said[-1]) if said else "")
        assert all("WARNING" not in a for a in answers), answers  # the kernel's own stderr stays out
        assert f"'text': '{SILENT}'" in answers[0] and f"'text': '{SILENT}'" in answers[2], answers
        assert "'text': \"Changed since the last check: cell 1 (changed)." in answers[1], answers[1]
        assert "+rows: 12" in answers[1]
        logs = "".join(p.read_text(errors="replace") for p in hermes.home.rglob("*.log"))
        skipped = f"Job '{job.id}': agent returned {SILENT}"
        assert logs.count(skipped) == 2  # the scheduler delivered only the second run's report
    finally:
        h.jobs.delete(job.id)
        h.close()
