"""Browser test of the message buttons: real JupyterLab, headless Chromium, real Hermes.

Edit shows on the last prompt, Regenerate / Undo on the last reply, Branch on every reply; all are keyboard
reachable and disabled while a turn runs. Undo leaves the history without the last exchange; Branch opens a
copy holding the conversation up to that reply, in the same widget (round trip: the kernel's
``chat.session_id``). On 0.19.0 a click shows the one-line "not offered by this Hermes" notice and changes
nothing.
"""

from __future__ import annotations

from typing import Any

import pytest

pytestmark = [pytest.mark.usefixtures("hermes"), pytest.mark.both_servers]

CHAT_CELLS = ["from hermes_notebook.widgets import Chat", "chat = Chat()\nchat"]
TURN_TIMEOUT_MS = 90_000
DONE = ".hn-message[data-role='assistant'][data-status='complete']"


def _send(nb: Any, text: str, replies: int) -> None:
    nb.page.get_by_role("textbox", name="Message to Hermes").fill(text)
    nb.page.locator(".hn-send").click()
    nb.page.locator(DONE).nth(replies - 1).wait_for(timeout=TURN_TIMEOUT_MS)
    nb.wait_kernel("not chat.busy")


def _visible(nb: Any, selector: str) -> int:
    return int(
        nb.page.locator(selector).evaluate_all("els => els.filter(e => e.offsetParent !== null).length")
    )


def test_message_buttons_undo_and_branch(open_notebook: Any, hermes_server: str) -> None:
    """Buttons show where they act and are disabled during a turn; Undo and Branch reach the kernel and the
    widget shows the re-fetched conversation (0.19.0: the refusal notice)."""
    nb = open_notebook(CHAT_CELLS)
    nb.run_all()
    nb.page.locator(".hn-chat").wait_for(state="visible")
    nb.wait_kernel("chat.ready.done() and chat.session is not None")
    _send(nb, "first branch-browser prompt", 1)
    _send(nb, "second branch-browser prompt", 2)
    assert _visible(nb, ".hn-act-edit") == 1 and _visible(nb, ".hn-act-undo") == 1
    assert _visible(nb, ".hn-act-regenerate") == 1 and _visible(nb, ".hn-act-branch") == 2
    last = nb.page.locator(".hn-message[data-role='assistant']").last
    undo = last.get_by_role("button", name="Undo", exact=True)  # named by its label (WCAG 2.5.3)
    undo.focus()
    assert undo.evaluate("el => el === document.activeElement")  # keyboard reachable
    if hermes_server != "newer":
        undo.press("Enter")
        nb.page.locator(".hn-notice", has_text="not offered by this Hermes").wait_for()
        assert nb.page.locator(".hn-message").count() == 4
        return
    nb.page.get_by_role("textbox", name="Message to Hermes").fill("third branch-browser prompt")
    nb.page.locator(".hn-send").click()
    nb.wait_kernel("chat.busy")
    assert nb.page.locator(".hn-msg-action").evaluate_all("els => els.every(e => e.disabled)")
    nb.page.locator(DONE).nth(2).wait_for(timeout=TURN_TIMEOUT_MS)
    nb.wait_kernel("not chat.busy")
    nb.page.locator(".hn-message[data-role='assistant']").last.get_by_role(
        "button", name="Undo", exact=True
    ).press("Enter")
    nb.wait_kernel("chat.notice == 'Undid the last exchange.'")
    nb.page.locator(".hn-message").nth(3).wait_for()
    assert nb.page.locator(".hn-message").count() == 4
    parent = nb.kernel_eval("chat.session_id")
    nb.page.locator(".hn-message[data-role='assistant']").first.get_by_role(
        "button", name="Branch", exact=True
    ).click()
    nb.wait_kernel("chat.notice.startswith('Branched')", 60)
    assert nb.kernel_eval("chat.session_id") != parent
    nb.page.locator(".hn-notice", has_text="Branched").wait_for()
    assert nb.page.locator(".hn-message").count() == 2
    assert (
        "first branch-browser prompt" in nb.page.locator(".hn-message[data-role='user']").first.inner_text()
    )
    ours = [e for e in nb.page_errors if "chat.js" in e or "hn-" in e or "anywidget" in e]
    assert not ours, ours
