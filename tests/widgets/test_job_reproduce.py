"""The jobs widget's "Reproducibility check" question (``reproduce``) refuses a wrong notebook or schedule
with the field it belongs to, before any request reaches Hermes. That it creates the job through
``hermes.jobs.reproduce`` on the real servers, and shows the checks' runs, is in
tests/reproducibility/test_watch.py (one setup)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import nbformat
import pytest

from tests.helpers import offline_jobs_widget


def _ask(widget: Any, sent: list[dict[str, Any]], notebook: str, schedule: str) -> dict[str, Any]:
    future = widget.handle_message(
        {"type": "reproduce", "request": len(sent) + 1, "notebook": notebook, "schedule": schedule}
    )
    assert future is not None
    future.result(30)
    return sent[-1]


def test_a_wrong_notebook_or_schedule_is_refused_on_its_field_and_nothing_is_sent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Not an .ipynb, a notebook that is not there (a relative path is the kernel's folder's), a schedule
    Hermes would refuse: each answered once with ``ok: false`` and its field, and no request made; a message
    without a schedule is refused by the inbound check."""
    monkeypatch.chdir(tmp_path)
    nbformat.write(nbformat.v4.new_notebook(), tmp_path / "analysis.ipynb")
    with offline_jobs_widget() as (widget, requests):
        sent: list[dict[str, Any]] = []
        widget.send = lambda content, buffers=None: sent.append(content)
        wrong = _ask(widget, sent, "analysis.py", "every 1d")
        assert wrong == {
            "type": "save_result",
            "request": 1,
            "ok": False,
            "field": "notebook",
            "message": "Name a notebook file (a path ending in .ipynb).",
            "job": None,
        }
        gone = _ask(widget, sent, "gone.ipynb", "every 1d")
        # Named as the user typed it, not as a machine path.
        assert (
            gone["field"] == "notebook"
            and gone["message"] == "There is no notebook gone.ipynb beside this notebook."
        )
        far = _ask(widget, sent, str(tmp_path / "x" / "far.ipynb"), "every 1d")["message"]
        assert far == f"There is no notebook {tmp_path / 'x' / 'far.ipynb'}."
        bad = _ask(widget, sent, "analysis.ipynb", "0 9 * * MON")
        assert bad["ok"] is False and bad["field"] == "schedule" and bad["request"] == 4
        assert widget.handle_message({"type": "reproduce", "request": 5, "notebook": "a.ipynb"}) is None
        assert "schedule" in widget.notice["text"] and len(sent) == 4
        assert requests == []  # nothing reached Hermes
