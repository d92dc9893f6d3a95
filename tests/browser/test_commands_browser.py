"""Browser test of the chat's model label and ``/`` menu: real JupyterLab, headless Chromium, real Hermes.

Typing ``/`` in the composer asks the kernel for Hermes' command catalog and lists it; the arrows and Enter
pick a command, Escape closes the menu, and sending ``/model`` shows what Hermes printed; ``/reproduce`` shows
the check of the saved notebook as plain text. The header names the session's model, and follows a switch made
from the kernel.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.browser.conftest import ARTIFACTS

pytestmark = [pytest.mark.usefixtures("hermes"), pytest.mark.both_servers]

CHAT_CELLS = ["from hermes_notebook.widgets import Chat", "chat = Chat()\nchat"]
TIMEOUT_MS = 60_000


def test_slash_menu_and_model_label(open_notebook: Any) -> None:
    """The / menu lists the server's commands, is driven by the keyboard, and runs the picked command; the
    header shows the model and follows ``chat.set_model``; ``/reproduce`` shows its report as plain text."""
    nb = open_notebook(CHAT_CELLS)
    nb.run_all()
    page = nb.page
    page.locator(".hn-chat").wait_for(state="visible")
    nb.wait_kernel("chat.ready.done() and chat.session is not None")
    label = page.locator(".hn-header .hn-model")
    label.wait_for(state="visible", timeout=TIMEOUT_MS)
    assert label.inner_text() == "model: fake-model"

    box = page.get_by_role("textbox", name="Message to Hermes")
    box.fill("")
    box.press_sequentially("/mod")
    menu = page.get_by_role("listbox", name="Hermes commands")
    menu.wait_for(state="visible")
    option = menu.get_by_role("option").filter(has_text="/model").first
    option.wait_for(timeout=TIMEOUT_MS)  # the catalog came from the kernel
    assert nb.kernel_eval("'commands' in chat.get_state()") is False  # never widget state
    names = menu.locator(".hn-slash-name").all_inner_texts()
    assert names and all(n.startswith("/mod") for n in names)
    box.press("ArrowDown")
    box.press("ArrowUp")
    assert menu.locator("[aria-selected='true'] .hn-slash-name").inner_text() == names[0]
    box.press("Escape")
    assert menu.is_hidden()
    box.fill("")
    box.press_sequentially("/model")
    menu.get_by_role("option").filter(has_text="/model").first.wait_for()
    while menu.locator("[aria-selected='true'] .hn-slash-name").inner_text() != "/model":
        box.press("ArrowDown")
    box.press("Enter")
    assert box.input_value() == "/model " and menu.is_hidden()
    box.press("Control+Enter")
    output = page.locator(".hn-command-output")
    output.wait_for(state="visible", timeout=TIMEOUT_MS)
    assert output.locator(".hn-command-name").inner_text() == "/model"
    shown = output.locator(".hn-command-text").inner_text()
    assert shown.startswith("Current model:"), shown  # "(unknown)" before the session's first turn

    # /reproduce checks this page's saved notebook in a fresh kernel (nothing goes to Hermes) and shows the
    # report in the same panel as plain text: a summary line, then one line per cell.
    saved = nb.save()
    box.fill("/reproduce")
    box.press("Control+Enter")
    output.locator(".hn-command-name", has_text="/reproduce").wait_for(timeout=TIMEOUT_MS)
    report = output.locator("pre.hn-command-text").inner_text().splitlines()
    assert report[0].startswith(f"{saved.name} "), report  # "... reproduces" or "... does not reproduce: ..."
    assert any("cell 1" in line and "from hermes_notebook.widgets import Chat" in line for line in report)
    assert output.locator("pre.hn-command-text *").count() == 0  # text, never markup
    page.screenshot(path=str(ARTIFACTS / f"chat-reproduce-{saved.stem}.png"))

    nb.kernel_exec("chat.set_model('browser-model').result(30)")
    page.locator(".hn-header .hn-model", has_text="model: browser-model").wait_for(timeout=TIMEOUT_MS)
    ours = [e for e in nb.page_errors if "chat.js" in e or "hn-" in e or "anywidget" in e]
    assert not ours, ours
