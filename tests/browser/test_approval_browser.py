"""An approval card cannot hide what runs: real JupyterLab, headless Chromium, real Hermes.

The model asks to run ``ls -la ./build`` + 400 spaces + ``; rm -rf ./<dir>``. Before the fix the card showed
only ``ls -la ./build`` above the Allow buttons (the rest was off to the right of a non-wrapping ``<pre>``).
Then ``API_KEY=$(echo${IFS}x) rm -rf ./<dir>``, which Hermes itself sends masked (``API_KEY=*** rm -rf ...``)
and would run as written: the card says in words that part of it is hidden and offers only Allow once and
Deny.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.usefixtures("hermes")

CHAT_CELLS = ["from hermes_notebook.widgets import Chat", "chat = Chat()\nchat"]
TURN_TIMEOUT_MS = 90_000
CARD = ".hn-interaction[data-kind='approval']"


def test_padded_command_shows_its_tail_and_deny_blocks_it(open_notebook: Any, workdir: Path) -> None:
    """The dangerous tail is on screen inside the card, the padding is a visible marker, and deny keeps the
    files."""
    workdir.mkdir(parents=True)
    (workdir / "keep.txt").write_text("still here")
    nb = open_notebook(CHAT_CELLS)
    nb.run_all()
    nb.page.locator(".hn-chat").wait_for(state="visible")
    nb.wait_kernel("chat.ready.done() and chat.session is not None")

    tail = f"; rm -rf ./{workdir.name}"
    nb.page.get_by_role("textbox", name="Message to Hermes").fill("RUN ls -la ./build" + " " * 400 + tail)
    nb.page.locator(".hn-send").click()
    card = nb.page.locator(f"{CARD}[data-status='pending']")
    card.wait_for(timeout=TURN_TIMEOUT_MS)

    command = card.locator(".hn-interaction-command")
    expect(command).to_have_text(f"ls -la ./build \u27e6400 spaces\u27e7 {tail}")
    # Nothing of it is scrolled away: the block wraps, and the tail's box lies inside the card, above the
    # buttons.
    geometry = command.evaluate(
        """(pre) => {
            const code = pre.querySelector("code");
            const text = code.firstChild;
            const range = document.createRange();
            const at = text.data.indexOf("rm -rf");
            range.setStart(text, at);
            range.setEnd(text, text.data.length);
            const tail = range.getBoundingClientRect();
            const card = pre.closest(".hn-interaction").getBoundingClientRect();
            const deny = pre.closest(".hn-interaction").querySelector("button[data-choice='deny']")
                .getBoundingClientRect();
            return {scroll: pre.scrollWidth - pre.clientWidth, tailRight: tail.right, tailBottom: tail.bottom,
                    cardRight: card.right, cardLeft: card.left, tailLeft: tail.left, denyTop: deny.top,
                    width: tail.width};
        }"""
    )
    assert geometry["scroll"] <= 1, geometry
    assert geometry["width"] > 0 and geometry["cardLeft"] <= geometry["tailLeft"], geometry
    assert geometry["tailRight"] <= geometry["cardRight"] and geometry["tailBottom"] <= geometry["denyTop"], (
        geometry
    )
    nb.screenshot("approval-padded-command")

    card.locator("button[data-choice='deny']").click()
    nb.page.locator(".hn-message[data-role='assistant'][data-status='complete']").last.wait_for(
        timeout=TURN_TIMEOUT_MS
    )
    expect(nb.page.locator(f"{CARD}").last).to_have_attribute("data-status", "answered")
    assert (workdir / "keep.txt").read_text() == "still here"

    # A command Hermes partly hid: said in words, no session or permanent grant offered.
    nb.page.get_by_role("textbox", name="Message to Hermes").fill(
        f"RUN API_KEY=$(echo${{IFS}}x) rm -rf ./{workdir.name}"
    )
    nb.page.locator(".hn-send").click()
    card = nb.page.locator(f"{CARD}[data-status='pending']")
    card.wait_for(timeout=TURN_TIMEOUT_MS)
    expect(card.locator(".hn-interaction-command")).to_have_text(f"API_KEY=*** rm -rf ./{workdir.name}")
    expect(card.locator(".hn-interaction-masked")).to_have_text(
        "Hermes hid part of this command (the *** or ... parts): what runs is not fully shown."
    )
    expect(card.locator("button.hn-choice")).to_have_text(["Allow once", "Deny"])
    nb.screenshot("approval-masked-command")
    card.locator("button[data-choice='deny']").click()
    nb.page.locator(".hn-message[data-role='assistant'][data-status='complete']").nth(1).wait_for(
        timeout=TURN_TIMEOUT_MS
    )
    assert (workdir / "keep.txt").read_text() == "still here"
