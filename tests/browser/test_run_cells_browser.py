"""``run_cells`` and ``restart_and_run_all`` in real JupyterLab with hermes-notebook's extension, a real
kernel and the real newer Hermes, the scripted model calling them from the chat.

One page walks it: ``run_cells 2 6`` shows ONE Run card listing the five cells with their whole sources; after
Run the notebook runs them in order and stops at the error seeded in the third (cell 4): the model gets that
cell's index, id and traceback, cell 3 shows its new output and cells 5 and 6 keep their old ones. Then
``restart_and_run_all`` asks on a card whose warning (the kernel's state is lost) shows above the listing, and
Deny leaves every variable; Run restarts and runs every cell, and the re-run chat cell comes back on the
conversation that asked, where the restart's answer reads. Pictures of both, light and dark, at 1400 and 700
px.
"""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser.lab import in_each_look
from tests.browser.test_chat_browser import TURN_TIMEOUT_MS, open_chat, send
from tests.browser.test_notebook_edits_browser import ATTACHED, HERMES_TOOL_COUNT, cell

pytestmark = [pytest.mark.usefixtures("hermes"), pytest.mark.servers("newer")]

CELLS = [
    f"import hermes_notebook as hn\nh = hn.connect()\nshare = h.share_kernel(read=True)\n{HERMES_TOOL_COUNT}",
    "chat = h.chat()\nchat",
    "runs = globals().get('runs', 0) + 1",
    "print('three', runs)",
    "if globals().get('FAIL'):\n    raise ValueError('seeded in cell 4')\nprint('four', runs)",
    "print('five', runs)",
    "print('six', runs)",
]
#: The page is attached and Hermes holds every kernel tool (5 kernel tools + 7 cell tools).
READY = (
    f"{ATTACHED} and __import__('hermes_notebook.kernel.share', fromlist=['K']).KERNEL.server.clients_current"
    " and hermes_tool_count() >= 12"
)


def test_run_cells_lists_the_cells_on_one_card_and_stops_at_the_first_error(open_notebook: Any) -> None:
    """One card lists cells 2-6; Run stops at cell 4's error (index, id, traceback to the model), cells 5-6
    keep their outputs, and the part offers Undo variables for what they changed; restart_and_run_all's card
    says the state is lost, and Deny keeps the variables."""
    nb = open_chat(open_notebook, app="lab", cells=CELLS)
    nb.wait_kernel(READY, timeout_s=60)
    opened = nb.kernel_eval("chat.session['id']")  # a session made now is offered every tool
    nb.kernel_eval("chat._dispatch(chat, {'type': 'new_session'}, []) or True")
    nb.wait_kernel(f"chat.ready.done() and chat.session is not None and chat.session['id'] != {opened!r}")
    page = nb.page
    expect(cell(nb, 6).locator(".jp-OutputArea-output")).to_have_text("six 1")
    nb.kernel_exec("FAIL = True")
    ids = page.evaluate(
        """(path) => {
      const nb = [...window.jupyterapp.shell.widgets('main')].find(w => w.context && w.context.path === path);
      return nb.content.widgets.map(c => c.model.id);
    }""",
        nb.path,
    )

    send(nb, "KERNEL run_cells 2 6")
    card = page.locator(".hn-interaction[data-kind='code'][data-status='pending']")
    card.wait_for(timeout=TURN_TIMEOUT_MS)
    listing = "\n\n".join(f"# ── cell {i} ──\n{CELLS[i]}" for i in range(2, 7))
    expect(card.locator(".hn-interaction-command")).to_have_text(listing)
    expect(card.locator(".hn-interaction-description")).to_contain_text(
        "It runs 5 code cells of this notebook in order (cells 2-6), stopping at the first error"
    )
    assert page.locator(".hn-interaction[data-kind='code']").count() == 1  # one card for all five
    card.scroll_into_view_if_needed()
    nb.screenshot("run-cells-card")
    card.get_by_role("button", name="Run", exact=True).click()

    message = page.locator(".hn-message[data-role='assistant'][data-status='complete']").last
    expect(message).to_contain_text(
        f"Stopped at the first error: cell 4 (id {ids[4]}) raised ValueError: seeded in cell 4",
        timeout=TURN_TIMEOUT_MS,
    )
    expect(message).to_contain_text("raise ValueError('seeded in cell 4')")  # the traceback, without colour
    expect(message).to_contain_text("Not run (they keep their outputs): cells 5, 6.")
    expect(cell(nb, 3).locator(".jp-OutputArea-output")).to_have_text("three 2")
    expect(cell(nb, 4)).to_contain_text("seeded in cell 4")
    expect(cell(nb, 5).locator(".jp-OutputArea-output")).to_have_text("five 1")
    expect(cell(nb, 6).locator(".jp-OutputArea-output")).to_have_text("six 1")
    tool = page.locator(".hn-part-tool").filter(has_text="run_cells").last
    expect(tool.locator(".hn-interaction[data-kind='run'] .hn-interaction-outcome")).to_have_text("Finished")
    # the cells JupyterLab ran for it (named by their cell ids) are undoable: runs was saved before cell 2
    expect(tool.locator(".hn-run-undo-note")).to_have_text(
        "Puts back runs, as before this run. Files and other effects are not undone."
    )

    restart_asks_first(nb, nb.kernel_eval("chat.session['id']"))


def restart_asks_first(nb: Any, session: str) -> None:
    """restart_and_run_all: the card's warning shows above the listing of every cell; Deny keeps the
    variables; Run restarts and runs all (the state is gone, every cell's output is new), and the re-run
    chat cell comes back on the conversation that asked (same session id, the restart's answer in its
    transcript)."""
    page = nb.page
    send(nb, "KERNEL restart_and_run_all")
    card = page.locator(".hn-interaction[data-kind='code'][data-status='pending']")
    card.wait_for(timeout=TURN_TIMEOUT_MS)
    warning = card.locator(".hn-interaction-description")
    expect(warning).to_contain_text(
        "It RESTARTS the kernel: every variable, import and loaded data in it is lost"
    )
    expect(warning).not_to_contain_text("with your variables")  # they are what the restart loses
    expect(card.locator(".hn-interaction-command")).to_contain_text("# ── cell 0 ──")
    above = "([w, c]) => w.getBoundingClientRect().bottom <= c.getBoundingClientRect().top"
    assert page.evaluate(above, [warning.element_handle(), card.locator("pre").element_handle()])
    pictures(nb, card, "restart-card")
    card.get_by_role("button", name="Deny", exact=True).click()
    message = page.locator(".hn-message[data-role='assistant'][data-status='complete']").last
    expect(message).to_contain_text("The user denied it: the restart was NOT run", timeout=TURN_TIMEOUT_MS)
    assert nb.kernel_eval("[runs, FAIL]") == [2, True]  # Deny: the kernel and its variables as they were

    send(nb, "KERNEL restart_and_run_all")
    card.wait_for(timeout=TURN_TIMEOUT_MS)
    card.get_by_role("button", name="Run", exact=True).click()
    # The fresh kernel ran every cell: FAIL is gone, so cell 4 prints where it raised, and runs starts over.
    expect(cell(nb, 4).locator(".jp-OutputArea-output")).to_have_text("four 1", timeout=TURN_TIMEOUT_MS)
    expect(cell(nb, 6).locator(".jp-OutputArea-output")).to_have_text("six 1")
    nb.wait_kernel("globals().get('runs') == 1 and 'FAIL' not in globals()", timeout_s=60)
    # The chat cell ran again and came back on the conversation that asked for the restart (no picking).
    nb.wait_kernel(f"chat.ready.done() and chat.session is not None and chat.session['id'] == {session!r}")
    expect(cell(nb, 1).locator("select.hn-session-picker")).to_have_value(session)
    assert nb.kernel_eval("chat.notice") == ""
    tool = page.locator(".hn-part-tool").filter(has_text="restart_and_run_all").last
    expect(cell(nb, 1).locator(".hn-message").last).to_contain_text(
        "The user allowed it: the kernel restarts in a moment", timeout=TURN_TIMEOUT_MS
    )
    page.mouse.move(0, 0)  # Copy shows on hover only: it covered the end of the answer's one-line block
    copy = cell(nb, 1).locator(".hn-message").last.locator(".hn-code > .hn-copy").last
    assert copy.evaluate("b => getComputedStyle(b).opacity") == "0"
    tool.evaluate("e => e.scrollIntoView({block: 'center'})")  # "if needed" keeps a part at the bottom edge
    pictures(nb, tool, "restart-approved")


def pictures(nb: Any, element: Any, name: str) -> None:
    """Screenshots of ``element`` in view, light and dark, at 1400 and 700 px."""

    def shoot(tag: str, width: int) -> None:
        element.scroll_into_view_if_needed()
        nb.screenshot(f"{name}-{tag}-{width}")

    in_each_look(nb, shoot)
