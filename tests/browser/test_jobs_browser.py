"""Browser tests of the Jobs widget: real JupyterLab 4, headless Chromium, real Hermes 0.19.0 and its
scheduler."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import ARTIFACTS
from tests.browser.lab import in_each_look
from tests.browser.test_notebook_edits_browser import luminance

pytestmark = pytest.mark.usefixtures("hermes")

RUN_TIMEOUT_MS = 90_000  # a triggered job starts on the scheduler's next 60 s tick


def open_jobs(open_notebook: Any, auto_refresh: float = 0) -> Any:
    """Open a notebook showing a Jobs widget and wait until it has loaded the jobs."""
    nb = open_notebook(
        ["from hermes_notebook.widgets import Jobs", f"w = Jobs(auto_refresh={auto_refresh})\nw"]
    )
    nb.run_all()
    expect(nb.page.get_by_test_id("jobs-health")).to_have_attribute("data-status", "connected")
    return nb


def row(nb: Any, name: str) -> Any:
    return nb.page.locator(f'[data-testid="job-row"][data-job-name="{name}"]')


def server_names(nb: Any) -> list[str]:
    """Job names as Hermes reports them right now (asked from the kernel, paused jobs included)."""
    nb.kernel_exec(
        "from hermes_notebook import runtime as _rt\nfrom hermes_notebook.client.jobs import JobsClient as "
        "_JC\n"
        "_c = _JC()\n_names = [j.name for j in _rt.run_sync(_c.list(include_disabled=True))]\n"
        "_rt.run_sync(_c.aclose())"
    )
    return nb.kernel_eval("_names")


def test_jobs_widget_create_pause_resume_run_edit_delete(open_notebook: Any, hermes: Any) -> None:
    """Through the form and the row buttons: create with a preset, pause, resume, run, edit, delete."""
    nb = open_jobs(open_notebook)
    page = nb.page
    name = f"browser job {uuid.uuid4().hex[:6]}"

    page.get_by_role("button", name="New job").click()
    page.get_by_test_id("job-form-name").fill(name)
    page.get_by_test_id("job-form-preset").select_option("weekdays")
    page.get_by_test_id("job-form-preset-at").fill("07:30")
    expect(page.get_by_test_id("job-form-schedule")).to_have_value("30 7 * * 1-5")
    check = page.get_by_test_id("job-form-schedule-check")
    expect(check).to_contain_text("every weekday at 07:30")
    expect(check).to_contain_text("Next runs:")
    page.get_by_test_id("job-form-prompt").fill("RUN echo first")
    page.get_by_role("button", name="Save job").click()
    expect(row(nb, name)).to_be_visible()
    expect(row(nb, name).get_by_test_id("job-schedule")).to_contain_text("every weekday at 07:30")
    expect(page.get_by_test_id("jobs-form")).to_be_hidden()

    # Pause: hidden while "include paused/disabled" is off, shown as paused when it is on.
    row(nb, name).get_by_role("button", name=f"Pause {name}").click()
    expect(row(nb, name)).to_have_count(0)
    page.get_by_test_id("jobs-include-disabled").check()
    expect(row(nb, name)).to_have_attribute("data-state", "paused")

    row(nb, name).get_by_role("button", name=f"Resume {name}").click()
    expect(row(nb, name)).to_have_attribute("data-state", "scheduled")

    row(nb, name).get_by_role("button", name=f"Run {name} now").click()
    expect(page.get_by_test_id("jobs-notice")).to_contain_text("next tick")

    # Edit the prompt (keyboard: the form submits with Enter in a text field).
    row(nb, name).get_by_role("button", name=f"Edit {name}").click()
    expect(page.get_by_test_id("job-form-name")).to_have_value(name)
    page.get_by_test_id("job-form-prompt").fill("RUN echo edited")
    page.get_by_test_id("job-form-deliver").press("Enter")
    expect(page.get_by_test_id("jobs-form")).to_be_hidden()
    # The rows hold no prompt (they are saved with the notebook): the form asks the kernel for it.
    row(nb, name).get_by_role("button", name=f"Edit {name}").click()
    expect(page.get_by_test_id("job-form-prompt")).to_have_value("RUN echo edited")
    page.get_by_test_id("job-form-prompt").press("Escape")
    expect(page.get_by_test_id("jobs-form")).to_be_hidden()

    # Delete asks first; Cancel keeps the job, Confirm deletes it.
    row(nb, name).get_by_role("button", name=f"Delete {name}").click()
    row(nb, name).get_by_test_id("job-delete-cancel").click()
    expect(row(nb, name)).to_be_visible()
    row(nb, name).get_by_role("button", name=f"Delete {name}").click()
    row(nb, name).get_by_role("button", name="Confirm delete").click()
    expect(row(nb, name)).to_have_count(0)
    assert name not in server_names(nb)

    # The static table output beside the live view (for viewers without widget JS) is hidden while it is live.
    expect(page.locator(".hn-jobs-static-wrap").first).to_be_hidden()
    # The saved notebook (widget state and static table included) never holds the key.
    saved = nb.save().read_text()
    assert hermes.api_key not in saved
    assert "hn-jobs-static-wrap" in saved


def test_invalid_schedule_shows_inline_and_a_reproducibility_check_is_created(open_notebook: Any) -> None:
    """A schedule Hermes would refuse is explained inline, with an example, and no job is created. Then the
    Reproducibility check form: a notebook that is not there is named under the form; this notebook's own file
    name (beside the kernel) creates the scheduled check's job, listed under its name."""
    nb = open_jobs(open_notebook)
    page = nb.page
    name = f"bad schedule {uuid.uuid4().hex[:6]}"
    page.get_by_role("button", name="New job").click()
    page.get_by_test_id("job-form-name").fill(name)
    page.get_by_test_id("job-form-schedule").fill("0 9 * * MON")
    check = page.get_by_test_id("job-form-schedule-check")
    expect(check).to_contain_text("Day names like 'MON' are not accepted")
    expect(check).to_contain_text("'0 9 * * 1'")
    expect(check).to_have_attribute("data-ok", "false")
    page.get_by_role("button", name="Save job").click()
    expect(page.get_by_test_id("job-form-error")).to_contain_text("fix the schedule")
    expect(page.get_by_test_id("jobs-form")).to_be_visible()
    assert name not in server_names(nb)
    page.get_by_test_id("job-form-schedule").fill("every 90m")
    expect(check).to_contain_text("every 90 minutes")
    page.get_by_role("button", name="Cancel").click()
    assert name not in server_names(nb)

    page.get_by_role("button", name="Reproducibility check", exact=True).click()
    form = page.get_by_test_id("jobs-reproduce-form")
    expect(form).to_be_visible()
    expect(page.get_by_test_id("reproduce-schedule-check")).to_contain_text("every day at 06:00")
    page.get_by_test_id("reproduce-notebook").fill("gone.ipynb")
    page.get_by_role("button", name="Create check", exact=True).click()
    # Named as typed, never as the server's machine path.
    expect(page.get_by_test_id("reproduce-error")).to_have_text(
        "There is no notebook gone.ipynb beside this notebook."
    )
    page.screenshot(path=str(ARTIFACTS / "jobs-reproduce-form.png"))
    fits_narrow_and_dark(nb, form)
    saved = nb.save()
    page.get_by_test_id("reproduce-notebook").fill(saved.name)
    page.get_by_test_id("reproduce-notebook").press("Enter")
    check = row(nb, f"Reproduce {saved.name}")
    expect(check).to_be_visible()
    expect(form).to_be_hidden()
    check.get_by_role("button", name=f"Delete Reproduce {saved.name}").click()
    check.get_by_role("button", name="Confirm delete").click()
    expect(check).to_have_count(0)


#: Widths by which an element's content runs past its box (0 when it fits).
JS_OVERFLOW = "el => Math.max(0, el.scrollWidth - el.clientWidth)"


def fits_narrow_and_dark(nb: Any, form: Any) -> None:
    """The Reproducibility check form and the widget around it, light and dark, at 1400 and 700 px: nothing
    runs past the widget (its ten-column table scrolls in its own box), every label is whole, and the form's
    text follows the theme. Pictures in the artifacts dir."""
    page = nb.page
    widget = page.get_by_test_id("jobs-widget")

    def look(tag: str, width: int) -> None:
        form.scroll_into_view_if_needed()
        assert widget.evaluate(JS_OVERFLOW) <= 1, (tag, width)
        assert form.evaluate(JS_OVERFLOW) <= 1, (tag, width)
        for label in form.locator("label").all():
            assert label.evaluate(JS_OVERFLOW) <= 1, (tag, width, label.inner_text())
        # Text and fields follow the theme: light on dark in Dark, dark on light in Light.
        background = luminance(page.evaluate("getComputedStyle(document.body).backgroundColor"))
        for part in ("label", ".hn-sub", "input"):
            text = luminance(form.locator(part).first.evaluate("el => getComputedStyle(el).color"))
            assert (text > background) == (tag == "dark"), (tag, part, text, background)
        form.screenshot(path=str(ARTIFACTS / f"jobs-reproduce-form-{tag}-{width}.png"))
        nb.screenshot(f"jobs-reproduce-page-{tag}-{width}")

    in_each_look(nb, look)


def test_triggered_run_updates_last_status_in_the_table(open_notebook: Any) -> None:
    """Run now on a job prompting the fake model: last status and last run appear within the scheduler
    tick."""
    nb = open_jobs(open_notebook, auto_refresh=2)
    page = nb.page
    name = f"browser run {uuid.uuid4().hex[:6]}"
    page.get_by_role("button", name="New job").click()
    page.get_by_test_id("job-form-name").fill(name)
    page.get_by_test_id("job-form-preset").select_option("daily")
    page.get_by_test_id("job-form-prompt").fill("RUN echo from-the-browser")
    page.get_by_role("button", name="Save job").click()
    expect(row(nb, name)).to_be_visible()
    expect(row(nb, name).get_by_test_id("job-last-run")).to_contain_text("—")

    row(nb, name).get_by_role("button", name=f"Run {name} now").click()
    expect(row(nb, name).get_by_test_id("job-last-status")).to_contain_text("ok", timeout=RUN_TIMEOUT_MS)
    expect(row(nb, name).get_by_test_id("job-last-run")).not_to_contain_text("—")
    expect(row(nb, name).get_by_test_id("job-repeat")).to_contain_text("1 run")

    row(nb, name).get_by_role("button", name=f"Delete {name}").click()
    row(nb, name).get_by_role("button", name="Confirm delete").click()
    expect(row(nb, name)).to_have_count(0)
