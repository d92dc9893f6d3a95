"""Reading a reply as a user would, in real JupyterLab + Chromium against the real Hermes 0.19.0.

The usage line under a reply, the session picker's labels and the sessions table's time column are read from
the page (what is on screen, not widget state); Esc in the prompt box stops a running turn.
"""

from __future__ import annotations

import re
import time
import uuid
from typing import Any

import pytest

pytestmark = pytest.mark.usefixtures("hermes")

TURN_TIMEOUT_MS = 90_000
STORED_ID = re.compile(r"\d{8}_\d{6}_[0-9a-f]{4,}")  # Hermes' stored session ids, e.g. 20261203_081500_ab12cd
CELLS = [
    "import hermes_notebook as hn\nhermes = hn.connect()\nchat = hermes.chat()\nchat",
    "hermes.sessions()",
]


def open_chat(open_notebook: Any) -> Any:
    nb = open_notebook(CELLS)
    nb.run_cell(0)
    nb.page.locator(".hn-chat").wait_for(state="visible")
    nb.wait_kernel("chat.ready.done() and chat.session is not None")
    return nb


def send(nb: Any, text: str) -> None:
    nb.page.get_by_role("textbox", name="Message to Hermes").fill(text)
    nb.page.locator(".hn-send").click()


def picker_labels(nb: Any) -> list[str]:
    return [t.strip() for t in nb.page.locator("select.hn-session-picker option").all_inner_texts()]


def test_usage_line_picker_label_and_sessions_time_read_as_words(open_notebook: Any) -> None:
    """Usage line, picker labels and the sessions table's started_at read as words on the page."""
    nb = open_chat(open_notebook)
    # A brand-new session has no title and no stored prompt yet: the picker says so, not its stored id.
    labels = picker_labels(nb)
    assert labels[0] == "New session", labels
    assert not any(STORED_ID.fullmatch(label) for label in labels), labels

    prompt = f"reading check {uuid.uuid4().hex[:6]}"
    send(nb, prompt)
    done = ".hn-message[data-role='assistant'][data-status='complete']"
    nb.page.locator(done).last.wait_for(timeout=TURN_TIMEOUT_MS)
    usage = nb.page.locator(done).last.locator(".hn-usage")
    usage.wait_for(state="visible")
    line = " ".join(usage.inner_text().split())  # as on screen: one line (innerText breaks at the gauge)
    # "10 in · 5 out tokens · context 10 / 200,000 (0%)": words, not the server's keys.
    assert re.fullmatch(r"[\d,]+ in · [\d,]+ out tokens · context [\d,]+ / [\d,]+ \(\d+%\)", line), line
    assert not re.search(r"context_used|context_max|compressions|active_subagents", line), line
    gauge = nb.page.get_by_role("meter", name="Context window used").last
    assert gauge.is_visible()
    assert "calls" in (usage.get_attribute("title") or "")  # the rest is on hover

    # Once the session is stored, the picker names it by its title or, until one arrives, its first prompt.
    nb.page.locator(".hn-refresh").click()
    nb.page.wait_for_function(
        "() => [...document.querySelectorAll('select.hn-session-picker option')].some("
        "o => o.selected && o.textContent !== 'New session')",
        timeout=30_000,
    )
    current = nb.page.locator("select.hn-session-picker option:checked").inner_text().strip()
    entry = nb.kernel_eval("next(s for s in chat.sessions if s['id'] == chat.session_id)")
    shown = " ".join((entry["title"] or entry["preview"] or "").split())
    assert shown and current == (shown if len(shown) <= 60 else shown[:59] + "\u2026"), (current, entry)
    if not entry["title"]:
        assert current.startswith("reading check"), current
    assert not any(STORED_ID.fullmatch(label) for label in picker_labels(nb)), picker_labels(nb)

    # The sessions table: started_at as local time and how long ago, never a raw epoch float.
    nb.run_cell(1)
    table = nb.page.locator(".jp-Cell").nth(1).locator(".jp-OutputArea-output table")
    table.wait_for(state="visible")
    headers = [h.strip() for h in table.locator("th").all_inner_texts()]
    column = headers.index("started_at")
    newest = [c.strip() for c in table.locator("tbody tr").first.locator("td").all_inner_texts()][column]
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d \((just now|\d+ min ago)\)", newest), newest
    assert not re.search(r"\d{9,}\.\d+", table.inner_text())


def test_escape_in_the_prompt_box_stops_a_running_turn(open_notebook: Any) -> None:
    """Esc pressed in the prompt box interrupts a slow turn, like the Stop button."""
    nb = open_chat(open_notebook)
    send(nb, "SLOW 200")
    nb.page.wait_for_function(
        "() => /tick 3 /.test(document.querySelector(\".hn-message[data-role='assistant']\")?.textContent "
        "|| '')",
        timeout=TURN_TIMEOUT_MS,
    )
    box = nb.page.get_by_role("textbox", name="Message to Hermes")
    box.focus()
    t0 = time.monotonic()
    nb.page.keyboard.press("Escape")
    nb.page.locator(".hn-message[data-role='assistant'][data-status='interrupted']").last.wait_for(
        timeout=30_000
    )
    assert time.monotonic() - t0 < 15
    nb.page.locator(".hn-stop").wait_for(state="hidden")
    assert nb.kernel_eval("chat.busy") is False
