"""Browser test of the agent's task list, a subagent and a tool diff: real JupyterLab, headless Chromium, real
Hermes.

One chat, three scripted turns: ``PLAN`` (two todo tool runs), ``DELEGATE RUN echo …`` (a background subagent
that runs a terminal command) and ``EDIT <file> two TWO`` (a ``patch`` whose completion carries a diff).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.usefixtures("hermes"), pytest.mark.servers("newer")]

CHAT_CELLS = ["from hermes_notebook.widgets import Chat", "chat = Chat()\nchat"]
TURN_TIMEOUT_MS = 90_000
DONE = ".hn-message[data-role='assistant'][data-status='complete']"


def _turn(nb: Any, prompt: str, count: int) -> Any:
    nb.page.get_by_role("textbox", name="Message to Hermes").fill(prompt)
    nb.page.locator(".hn-send").click()
    nb.page.locator(DONE).nth(count - 1).wait_for(timeout=TURN_TIMEOUT_MS)
    return nb.page.locator(DONE).nth(count - 1)


def test_checklist_subagent_card_and_coloured_diff(open_notebook: Any, workdir: Path) -> None:
    """The plan is a read-only checklist (done item struck through), the subagent a collapsible card holding
    its tool call, the diff one row per line with added and removed lines on different backgrounds."""
    workdir.mkdir(parents=True)
    target = workdir / "notes.txt"
    target.write_text("one\ntwo\n")
    nb = open_notebook(CHAT_CELLS)
    nb.run_all()
    nb.page.locator(".hn-chat").wait_for(state="visible")
    nb.wait_kernel("chat.ready.done() and chat.session is not None")

    plan = _turn(nb, "PLAN", 1).locator(".hn-part[data-kind='todo']")
    rows = plan.locator(".hn-todo-item")
    assert rows.evaluate_all("els => els.map(e => e.dataset.status)") == ["completed", "in_progress"]
    assert (
        rows.first.locator("input[type=checkbox]").is_checked() and rows.first.locator("input").is_disabled()
    )
    assert (
        rows.first.locator(".hn-todo-text").evaluate("el => getComputedStyle(el).textDecorationLine")
        == "line-through"
    )
    assert plan.locator(".hn-todo-count").inner_text() == "1/2 done"

    sub = _turn(nb, "DELEGATE RUN echo from-the-child", 2).locator(".hn-part[data-kind='subagent'] details")
    assert sub.locator(".hn-subagent-goal").inner_text() == "RUN echo from-the-child"
    assert sub.get_attribute("data-status") == "completed"
    assert not sub.locator(".hn-subagent-tools").is_visible()  # collapsed until opened
    sub.locator("summary").click()
    assert sub.locator(".hn-subagent-tools li").inner_text() == "terminal echo from-the-child"

    # The subagent's result comes back as a turn of its own (the server's, not ours): wait for the diff
    # itself.
    nb.page.get_by_role("textbox", name="Message to Hermes").fill(f"EDIT {target} two TWO")
    nb.page.locator(".hn-send").click()
    diff = nb.page.locator(".hn-part[data-kind='tool'] .hn-tool-diff:not([hidden])").last
    diff.locator(".hn-diff-add").first.wait_for(timeout=TURN_TIMEOUT_MS)
    lines = diff.locator(".hn-diff-line")
    texts = lines.evaluate_all("els => els.map(e => e.textContent)")
    assert "-two" in texts and "+TWO" in texts
    added = diff.locator(".hn-diff-add").first.evaluate("el => getComputedStyle(el).backgroundColor")
    removed = diff.locator(".hn-diff-del").first.evaluate("el => getComputedStyle(el).backgroundColor")
    assert added != removed and "rgba(0, 0, 0, 0)" not in (added, removed)
    ours = [e for e in nb.page_errors if "chat.js" in e or "hn-" in e or "anywidget" in e]
    assert not ours, ours
