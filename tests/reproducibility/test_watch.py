"""The scheduled check: ``python -m hermes_notebook.reproducibility.watch`` speaks only when the verdict moved
(a real fresh kernel runs a notebook that reads a data file: unchanged, then the file changed, then unchanged
again), and ``hermes.jobs.reproduce`` creates the Hermes cron job whose agent runs it: on both real servers,
runs triggered by run now deliver one report for a changed data file and none for unchanged ones; the jobs
widget's Reproducibility check form creates that job and shows each run's report."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbclient import NotebookClient

import hermes_notebook as hn
from hermes_notebook._demo.local_hermes import LocalHermes
from hermes_notebook.errors import HermesUsageError
from hermes_notebook.jobs.reproduce_job import reproduce_prompt
from hermes_notebook.reproducibility import reproduce
from hermes_notebook.reproducibility.watch import SILENT, changes_since_last_run, state_file
from hermes_notebook.widgets.jobs import Jobs


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
    """A job created by the jobs widget's Reproducibility check form (its ``reproduce`` message, through
    ``hermes.jobs.reproduce``), triggered by the real server's run now (the scheduler's next tick): the first
    run reproduces and the data file then changes, so the second run's answer names cell 1 as changed; a third
    run, nothing new, answers [SILENT]: the scheduler skipped delivering runs 1 and 3 (its log says so), so
    one report was delivered. The widget's transcript of the second run holds the report line by line."""
    path = _saved_notebook(tmp_path)
    h = hn.connect(hermes.settings())
    with pytest.raises(HermesUsageError, match="no notebook at"):
        h.jobs.reproduce(tmp_path / "gone.ipynb", "every 1d")  # refused before any request
    widget = Jobs(h.jobs, auto_refresh=0, refresh=False)
    sent: list[dict[str, Any]] = []
    widget.send = lambda content, buffers=None: sent.append(content)  # type: ignore[method-assign]
    _ask(widget, {"type": "reproduce", "request": 1, "notebook": str(path), "schedule": "every 1d"})
    created = next(m for m in sent if m.get("request") == 1)
    assert created["type"] == "save_result" and created["ok"], created
    job = h.jobs.get(created["job"]["id"])
    assert job.name == "Reproduce analysis.ipynb" and created["job"]["schedule_kind"] == "interval"
    assert (
        job.prompt.strip() == reproduce_prompt(path).strip()
    )  # hermes.jobs.reproduce's, as the server keeps it
    answers: list[str] = []
    run_ids: list[str] = []
    try:
        for change in (None, "rows: 12\n", None):
            if change is not None:
                (tmp_path / "data.txt").write_text(change)
            ran = h.jobs.wait_for_run(h.jobs.run(job.id), timeout=180, poll=1.0)
            assert ran.last_status == "ok", (ran.last_status, ran.last_error)
            latest = h.jobs.runs(job.id)[0]
            run_ids.append(latest.id)
            said = [m for m in h.jobs.transcript(latest) if m.get("role") == "assistant"]
            answers.append(str(said[-1]) if said else "")
        assert all("WARNING" not in a for a in answers), answers  # the kernel's own stderr stays out
        assert f"'text': '{SILENT}'" in answers[0] and f"'text': '{SILENT}'" in answers[2], answers
        assert "'text': \"Changed since the last check: cell 1 (changed)." in answers[1], answers[1]
        assert "+rows: 12" in answers[1]
        logs = "".join(p.read_text(errors="replace") for p in hermes.home.rglob("*.log"))
        skipped = f"Job '{job.id}': agent returned {SILENT}"
        assert logs.count(skipped) == 2  # the scheduler delivered only the second run's report

        _ask(widget, {"type": "transcript", "request": 2, "run_id": run_ids[1]})
        opened = next(m for m in sent if m.get("request") == 2)
        assert opened["type"] == "transcript_result" and opened["ok"], opened
        texts = [p["text"] for p in opened["messages"][-1]["parts"] if p["kind"] == "text"]
        report = texts[-1].splitlines()  # the view shows it as text, line by line (js/src/jobs/runs.ts)
        assert report[0] == "Changed since the last check: cell 1 (changed).", report
        assert "-rows: 10" in report and "+rows: 12" in report and "## Cell 1: changed" in report
        assert hermes.api_key not in str(sent)
    finally:
        widget.close()
        h.jobs.delete(job.id)
        h.close()


def _ask(widget: Jobs, message: dict[str, Any]) -> None:
    """Hand the widget one view message and wait for its answer."""
    future = widget.handle_message(message)
    assert future is not None
    future.result(60)
