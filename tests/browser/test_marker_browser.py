"""Browser test of the compression marker: real JupyterLab, headless Chromium, real Hermes.

A ``BIGCONTEXT`` turn makes Hermes compact the context between the tool call and the reply; the chat shows the
marker as a centered separator between the tool card and the reply text, named for screen readers.
"""

from __future__ import annotations

from typing import Any

import pytest

pytestmark = [pytest.mark.usefixtures("hermes"), pytest.mark.both_servers]

CHAT_CELLS = ["from hermes_notebook.widgets import Chat", "chat = Chat()\nchat"]
TURN_TIMEOUT_MS = 90_000


def test_mid_turn_compaction_marker_sits_between_tool_and_reply(open_notebook: Any) -> None:
    """The marker is a role=separator line with the text as its name, centered, between tool and text
    parts."""
    nb = open_notebook(CHAT_CELLS)
    nb.run_all()
    nb.page.locator(".hn-chat").wait_for(state="visible")
    nb.wait_kernel("chat.ready.done() and chat.session is not None")
    nb.page.get_by_role("textbox", name="Message to Hermes").fill("BIGCONTEXT echo squeezed")
    nb.page.locator(".hn-send").click()
    done = ".hn-message[data-role='assistant'][data-status='complete']"
    nb.page.locator(done).last.wait_for(timeout=TURN_TIMEOUT_MS)
    message = nb.page.locator(done).last
    kinds = message.locator(".hn-part").evaluate_all("els => els.map(e => e.dataset.kind)")
    assert kinds == ["tool", "marker", "text"]
    separator = message.get_by_role("separator")
    name = separator.get_attribute("aria-label") or ""
    assert name.startswith("Context compress") and separator.inner_text() == name
    assert separator.evaluate("el => getComputedStyle(el).display") == "flex"
    box, line = message.bounding_box(), separator.locator(".hn-marker-text").bounding_box()
    assert box is not None and line is not None
    middle = line["x"] + line["width"] / 2 - box["x"]
    assert abs(middle - box["width"] / 2) < box["width"] * 0.1  # centered
    assert "squeezed" in message.locator(".hn-part[data-kind='text']").inner_text()
    ours = [e for e in nb.page_errors if "chat.js" in e or "hn-" in e or "anywidget" in e]
    assert not ours, ours
