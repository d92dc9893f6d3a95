"""The Run/Deny card of a kernel tool in real JupyterLab: the model asks to run code in the notebook's kernel,
the card shows all of it, and only a click on Run runs it, in the user's namespace. (Newer Hermes registers
the kernel's tool server from the notebook; 0.19.0 needs a restart, see test_kernel_tools_old.py.)"""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser.test_chat_browser import TURN_TIMEOUT_MS, last_assistant, open_chat, send

pytestmark = [pytest.mark.usefixtures("hermes"), pytest.mark.servers("newer")]

CELLS = [
    "import hermes_notebook as hn\nh = hn.connect()\nshare = h.share_kernel()\ntotal = 1",
    "chat = h.chat()\nchat",
]
CARD = ".hn-interaction[data-kind='code']"


def test_chat_card_shows_the_code_and_run_runs_it_in_the_kernel(open_notebook: Any) -> None:
    """The card shows the whole code before anything runs; Run runs it in the user's namespace (``total``
    changes) and the model gets its output; a second card answered Deny leaves the namespace as it was."""
    nb = open_chat(open_notebook, cells=CELLS)
    code = "total = total + 41; print('total is', total)"
    send(nb, f"KERNEL run_code {code}")
    card = nb.page.locator(f"{CARD}[data-status='pending']")
    card.wait_for(timeout=TURN_TIMEOUT_MS)
    expect(card.locator(".hn-interaction-command")).to_have_text(code)
    expect(card.locator(".hn-interaction-title")).to_have_text("Hermes wants to run code in your kernel")
    assert nb.kernel_eval("total") == 1  # shown, not run
    nb.screenshot("kernel-code-card")
    card.get_by_role("button", name="Run", exact=True).click()
    message = last_assistant(nb, "complete")
    assert "total is 42" in message.inner_text()
    # After Run the part shows the run itself: the same code, and how it ended (Stop while it ran)
    run = message.locator(".hn-interaction[data-kind='run']")
    expect(run).to_have_attribute("data-status", "answered")
    expect(run.locator(".hn-interaction-command")).to_have_text(code)
    expect(run.locator(".hn-interaction-outcome")).to_have_text("Finished")
    expect(run.get_by_role("button", name="Stop")).to_have_count(0)  # nothing left to stop
    expect(run).not_to_contain_text("Running in the kernel")
    assert nb.kernel_eval("total") == 42
    _undo_puts_total_back(nb, message)

    send(nb, "KERNEL run_code total = 0")
    card = nb.page.locator(f"{CARD}[data-status='pending']")
    card.wait_for(timeout=TURN_TIMEOUT_MS)
    card.get_by_role("button", name="Deny", exact=True).click()
    nb.page.locator(".hn-message[data-role='assistant'][data-status='complete']").nth(1).wait_for(
        timeout=TURN_TIMEOUT_MS
    )
    assert "the code was NOT run" in last_assistant(nb, "complete").inner_text()
    assert nb.kernel_eval("total") == 1

    # Code after ``token=`` is code, not a key: the card shows it as it would run (it used to say
    # token=********).
    sneaky = (
        "import json\ntoken=exec(chr(116)+chr(111)+chr(116)+chr(97)+chr(108)+chr(61)+chr(48))\n"
        "json.dumps(total)"
    )
    send(nb, f"KERNEL run_code {sneaky}")
    card = nb.page.locator(f"{CARD}[data-status='pending']")
    card.wait_for(timeout=TURN_TIMEOUT_MS)
    expect(card.locator(".hn-interaction-command")).to_have_text(sneaky)
    card.get_by_role("button", name="Deny", exact=True).click()
    nb.page.locator(".hn-message[data-role='assistant'][data-status='complete']").nth(2).wait_for(
        timeout=TURN_TIMEOUT_MS
    )
    assert nb.kernel_eval("total") == 1


def _undo_puts_total_back(nb: Any, message: Any) -> None:
    """The finished run's part offers Undo variables (what it puts back; files are not undone); a click puts
    ``total`` back in the kernel and the part then says what was done, with no button, as does the chat's
    static transcript output (what the saved notebook keeps). Screenshots of both, at 1400 px light and 700 px
    dark."""
    nb.page.set_viewport_size({"width": 1400, "height": 900})
    undo = message.locator(".hn-run-undo")
    expect(undo.locator(".hn-run-undo-note")).to_have_text(
        "Puts back total, as before this run. Files and other effects are not undone."
    )
    shots = nb.screenshot("run-undo-offered").parent
    message.screenshot(path=str(shots / "run-undo-offered-light-1400.png"))
    nb.page.set_viewport_size({"width": 700, "height": 900})
    nb.set_theme("JupyterLab Dark")
    message.screenshot(path=str(shots / "run-undo-offered-dark-700.png"))
    undo.get_by_role("button", name="Undo variables").click()
    expect(undo.locator(".hn-run-undo-note")).to_contain_text("Undone: restored total.")
    expect(undo.get_by_role("button")).to_have_count(0)
    assert nb.kernel_eval("total") == 1
    # what the saved notebook keeps: the chat's static transcript output says it too
    expect(nb.page.locator("[data-hn-transcript]")).to_contain_text("Undone: restored total.")
    message.screenshot(path=str(shots / "run-undo-done-dark-700.png"))
    nb.set_theme("JupyterLab Light")
    nb.page.set_viewport_size({"width": 1400, "height": 900})
    message.screenshot(path=str(shots / "run-undo-done-light-1400.png"))
    nb.page.set_viewport_size({"width": 1280, "height": 900})
