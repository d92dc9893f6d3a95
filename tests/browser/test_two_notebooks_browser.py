"""Two notebooks side by side in one JupyterLab page, each with its own kernel and chat, on one newer
Hermes: Hermes offers both kernels' tools to every session of the profile, yet each notebook's proposals land
only there.

Both chats run a turn at once, each proposing 25 cells through its own kernel's tools: the proposals
interleave at the two kernels, and every one must show in its own panel (0 misrouted of 50). A turn of B
that calls A's server is refused, with a reason, and nothing changes in either. Each header names its own.
Then the tab is duplicated (the copy gets the tab's sessionStorage, the shelf of pending changes with it): the
copy offers none of the first tab's changes, and a new proposal shows in exactly one of the two tabs.
"""

from __future__ import annotations

import dataclasses
import json
import os
import uuid
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser.lab import JS_KERNEL_READY, TURN_TIMEOUT_MS, write_notebook
from tests.browser.test_chat_browser import open_chat
from tests.browser.test_notebook_edits_browser import CELLS, READY

pytestmark = [pytest.mark.usefixtures("hermes"), pytest.mark.servers("newer")]

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = Path(os.environ.get("BROWSER_TEST_ARTIFACTS", ROOT / "test-artifacts"))
#: Proposals per notebook (50 in all: the most one notebook holds pending is 50).
EACH = 25
INSERTED = ".hn-pending[data-kind='insert'] .hn-pending-line[data-kind='add'] .hn-pending-text"
DONE = ".hn-message[data-role='assistant'][data-status='complete']"
#: Opens a notebook in a panel beside another (JupyterLab's split-right), as dragging its tab there does.
JS_OPEN_BESIDE = """async ({path, beside}) => {
  const app = window.jupyterapp;
  const ref = [...app.shell.widgets('main')].find(w => w.context && w.context.path === beside).id;
  const options = {mode: 'split-right', ref};
  await app.commands.execute('docmanager:open', {path, factory: 'Notebook', options});
  return true;
}"""
#: The id of the panel holding the notebook at ``path``.
JS_PANEL_ID = """(path) => [...window.jupyterapp.shell.widgets('main')].find(
  w => w.context && w.context.path === path).id"""


def panel(nb: Any) -> Any:
    """The notebook's own panel in the page (both notebooks share one page)."""
    return nb.page.locator(f"[id='{nb.page.evaluate(JS_PANEL_ID, nb.path)}']")


def pending_sources(nb: Any) -> list[str]:
    """The sources of the insertions pending in this notebook's panel (the diff's added lines)."""
    return panel(nb).locator(INSERTED).all_inner_texts()


def send_in(nb: Any, text: str) -> None:
    """Type a prompt in this notebook's chat and press Send."""
    panel(nb).get_by_role("textbox", name="Message to Hermes").fill(text)
    panel(nb).locator(".hn-send").click()


def turn_in(nb: Any, text: str) -> Any:
    """Send a prompt in this notebook's chat and return its finished reply."""
    done = panel(nb).locator(DONE)
    before = done.count()
    send_in(nb, text)
    expect(done).to_have_count(before + 1, timeout=TURN_TIMEOUT_MS)
    return done.last


def fresh_session(nb: Any) -> None:
    """A new session for the chat, made after the cell tools were listed (Hermes keeps a session's tools)."""
    opened = nb.kernel_eval("chat.session['id']")
    nb.kernel_eval("chat._dispatch(chat, {'type': 'new_session'}, []) or True")
    nb.wait_kernel(f"chat.ready.done() and chat.session is not None and chat.session['id'] != {opened!r}")


def open_beside(a: Any) -> Any:
    """A second notebook with the same cells, in a panel beside ``a`` in the same page, its chat ready."""
    path = write_notebook(a.server.root, f"beside-{uuid.uuid4().hex[:6]}.ipynb", CELLS)
    a.page.evaluate(JS_OPEN_BESIDE, {"path": path, "beside": a.path})
    a.page.wait_for_function(JS_KERNEL_READY, arg=path, timeout=60_000, polling=100)
    b = dataclasses.replace(a, path=path, timings={}, page_errors=[], console=[])
    b.run_all()
    panel(b).locator(".hn-chat").wait_for(state="visible")
    b.wait_kernel("chat.ready.done() and chat.session is not None")
    return b


def pictures(a: Any, b: Any) -> None:
    """The two panels as a user sees them (the file browser folded away): their pending diffs at the top,
    then their chat headers naming the notebooks; light and dark, 1400 and 700 px wide."""
    page = a.page
    page.evaluate("() => window.jupyterapp.shell.collapseLeft()")
    views = {"diffs": ".hn-pending", "header": ".hn-chat"}  # what each picture scrolls to
    try:
        for theme, tag in (("JupyterLab Light", "light"), ("JupyterLab Dark", "dark")):
            a.set_theme(theme)
            for width in (1400, 700):
                page.set_viewport_size({"width": width, "height": 900})
                for view, target in views.items():
                    for nb in (a, b):
                        panel(nb).locator(target).first.evaluate("el => el.scrollIntoView({block: 'start'})")
                    page.wait_for_timeout(200)  # Lab lays the split out again
                    page.screenshot(path=str(ARTIFACTS / f"two-notebooks-{view}-{tag}-{width}.png"))
    finally:
        a.set_theme("JupyterLab Light")
        page.set_viewport_size({"width": 1280, "height": 900})


def test_two_notebooks_side_by_side_each_get_only_their_own_proposals(open_notebook: Any) -> None:
    """50 interleaved proposals from two chats in one page: each lands in its own panel, none in the other;
    B calling A's server is refused in one line; each header names its notebook. A duplicated tab offers none
    of the first tab's pending changes, and a new proposal shows in exactly one tab."""
    a = open_chat(open_notebook, cells=CELLS)
    b = open_beside(a)
    for nb in (a, b):
        nb.wait_kernel(READY, timeout_s=90)
    for nb in (a, b):
        fresh_session(nb)
    names = {nb.path: nb.kernel_eval("share.name") for nb in (a, b)}
    assert len(set(names.values())) == 2
    boxes = [panel(nb).bounding_box() for nb in (a, b)]
    assert boxes[0] is not None and boxes[1] is not None and boxes[0]["x"] < boxes[1]["x"]  # side by side
    for nb in (a, b):
        expect(panel(nb).locator(".hn-kernel-notebook")).to_have_text(f"· cell tools act on {nb.path}")

    # Both turns at once, each through its own kernel's server: the calls interleave at the two kernels.
    for nb, tag in ((a, "A"), (b, "B")):
        steps = " ;; ".join(f"insert_cell 0 {tag}-{i}" for i in range(EACH))
        send_in(nb, f"KERNELS@{names[nb.path]} {steps}")
    for nb in (a, b):
        expect(panel(nb).locator(DONE).last).to_contain_text(
            "Kernel tool results:", timeout=TURN_TIMEOUT_MS * 2
        )
    shown = {tag: pending_sources(nb) for nb, tag in ((a, "A"), (b, "B"))}
    misrouted = sum(s.startswith("B-") for s in shown["A"]) + sum(s.startswith("A-") for s in shown["B"])
    assert misrouted == 0, shown
    assert sorted(shown["A"]) == sorted(f"A-{i}" for i in range(EACH))
    assert sorted(shown["B"]) == sorted(f"B-{i}" for i in range(EACH))

    # B's turn calling A's server: refused with the reason, and neither notebook changes.
    refused = turn_in(b, f"KERNEL@{names[a.path]} insert_cell 0 crossed")
    expect(refused).to_contain_text("Refused: no turn started from this notebook is calling this tool")
    assert len(pending_sources(a)) == EACH and len(pending_sources(b)) == EACH
    assert not any("crossed" in s for nb in (a, b) for s in pending_sources(nb))
    pictures(a, b)

    duplicated_tab_offers_no_second_keep(a, names[a.path])


def duplicated_tab_offers_no_second_keep(a: Any, server: str) -> None:
    """Duplicate the tab (a new page of the same browser, started with a copy of this tab's sessionStorage):
    the copy takes back none of the pending changes the first tab still shows, and once it said hello it is
    the target, so a new proposal from A's chat shows in exactly one of the two tabs."""
    page = a.page
    shelf = f"hermes-notebook:pending:{a.path}"
    storage = page.evaluate("() => Object.entries(sessionStorage)")
    assert any(key == shelf for key, _ in storage)  # the first tab keeps A's changes on its shelf
    front = "__import__('hermes_notebook.kernel.document', fromlist=['D']).DOCUMENT.front_end().id"
    first = a.kernel_eval(front)
    copy = page.context.new_page()
    copy.add_init_script(f"for (const [k, v] of {json.dumps(storage)}) sessionStorage.setItem(k, v);")
    copy.goto(a.server.notebook_url(a.path))  # a real duplicate opens the tab's URL
    copy.wait_for_function(JS_KERNEL_READY, arg=a.path, timeout=60_000, polling=100)
    dup = dataclasses.replace(a, page=copy, timings={}, page_errors=[], console=[])
    # The copy's store opened its shelf and found the first tab holding it: nothing taken back, copy dropped.
    copy.wait_for_function("(key) => sessionStorage.getItem(key) === null", arg=shelf, timeout=30_000)
    a.wait_kernel(f"{front} != {first!r}")  # the copy said hello: it is the target now
    assert panel(dup).locator(".hn-pending").count() == 0
    assert len(pending_sources(a)) == EACH  # the first tab still offers each of its changes, once
    expect(turn_in(a, f"KERNEL@{server} insert_cell 0 once")).to_contain_text("I proposed a new code cell")
    expect(panel(dup).locator(INSERTED).filter(has_text="once")).to_have_count(1)
    assert [s for s in pending_sources(a) if s == "once"] == []  # shown in the target tab only
    assert panel(dup).locator(".hn-pending").count() == 1
