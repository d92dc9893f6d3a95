"""Browser tests of the notebook-native features: a REALLY triggered cron run listed and opened in the Jobs
widget; the chat Export button."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from playwright.sync_api import expect

from hermes_notebook import connect

pytestmark = pytest.mark.usefixtures("hermes")


def test_a_triggered_run_is_listed_and_opens_read_only(open_notebook: Any, hermes: Any) -> None:
    """Trigger a job, wait for its run (scheduler tick), then Runs -> row (ok, duration) -> Open ->
    transcript."""
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


def test_chat_export_button_writes_a_file_next_to_the_notebook(open_notebook: Any, hermes: Any) -> None:
    """Export (Notebook format, by keyboard) writes the conversation beside the notebook; the notice names
    it."""
    nb = open_notebook(["import hermes_notebook as hn", "chat = hn.Chat()\nchat"])
    nb.run_all()
    page = nb.page
    page.locator(".hn-chat").wait_for(state="visible")
    nb.wait_kernel("chat.ready.done() and chat.session is not None")
    marker = f"export-browser-{uuid.uuid4().hex[:8]}"
    page.get_by_role("textbox", name="Message to Hermes").fill(marker)
    page.locator(".hn-send").click()
    reply = page.locator(".hn-message[data-role='assistant'][data-status='complete']")
    expect(reply).to_contain_text(marker, timeout=90_000)  # the first turn builds the agent
    page.get_by_role("combobox", name="Export format").select_option("ipynb")
    page.get_by_role("button", name="Export the conversation to a file next to the notebook").focus()
    page.keyboard.press("Enter")
    notice = page.locator(".hn-notice")
    expect(notice).to_contain_text("Exported to ")
    path = notice.inner_text().removeprefix("Exported to ").strip()
    assert path.endswith(".ipynb")
    info = nb.kernel_eval(
        f"(lambda p: [str(p.parent) == __import__('os').getcwd(), {marker!r} in p.read_text(), "
        f"{hermes.dashboard_token!r} in p.read_text()])(__import__('pathlib').Path({path!r}))"
    )
    assert info == [True, True, False]
