"""Browser test of the Jobs widget's run list: a REALLY triggered run appears and opens as a transcript."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from playwright.sync_api import expect

from hermes_notebook import connect

pytestmark = pytest.mark.usefixtures("hermes")


def test_a_triggered_run_is_listed_and_opens_read_only(open_notebook: Any, hermes: Any) -> None:
    """Trigger a job, wait for its run (scheduler tick), then Runs -> row (ok, duration) -> Open -> transcript."""
    client = connect(hermes.settings())
    marker = f"browser-run-{uuid.uuid4().hex[:8]}"
    job = client.jobs.create(name=marker, schedule="every 1h", prompt=f"RUN echo {marker}")
    try:
        client.jobs.run_and_wait(job, timeout=150, poll=1.0)
        nb = open_notebook(["from hermes_notebook.widgets import Jobs", "w = Jobs(auto_refresh=0)\nw"])
        nb.run_all()
        page = nb.page
        expect(page.get_by_test_id("jobs-health")).to_have_attribute("data-status", "connected")
        page.get_by_role("button", name=f"Runs of {marker}").click()
        panel = page.get_by_test_id("job-runs")
        expect(panel).to_contain_text(f"Runs of “{marker}”")
        run_row = panel.get_by_test_id("job-run-row")
        expect(run_row).to_have_count(1)
        expect(run_row).to_have_attribute("data-status", "ok")
        expect(run_row).to_contain_text(" s")  # the duration
        run_row.get_by_test_id("job-run-open").focus()
        page.keyboard.press("Enter")  # by keyboard
        transcript = page.get_by_test_id("job-run-transcript")
        expect(transcript).to_be_visible()
        expect(transcript).to_contain_text(f"RUN echo {marker}")
        expect(transcript).to_contain_text("Command output:")
        expect(transcript.locator(".hn-run-tool")).to_contain_text("terminal")
        expect(transcript.locator("button")).to_have_count(0)  # read-only: nothing to answer or send
        panel.get_by_test_id("job-runs-close").click()
        expect(panel).to_be_hidden()
    finally:
        client.jobs.delete(job.id)
        client.close()
