"""Hermes edits the notebook with you, in real JupyterLab and Notebook 7 with hermes-notebook's extension,
against the real newer Hermes and the scripted model calling the cell tools from the chat.

One page per front end walks the whole flow: a proposed insertion and edit show on their cells as diffs (the
chat's tool part shows the change in the notebook), the user types in another cell meanwhile, Discard leaves
the saved notebook's cells byte-identical, Keep puts the proposed cell in the saved notebook without running
it, and ``run_cell`` runs a cell in the notebook only after Run on the card, then shows the run (its outcome)
and the plot it sent to the model on its tool part; the chat header shows the kernel's permission modes, and
its Revoke ends runs allowed for the session. A third page, on a server where the extension
is disabled, shows that the cell tools are then not offered at all.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from hermes_notebook.kernel.versions import cell_version
from tests.browser.test_chat_browser import TURN_TIMEOUT_MS, open_chat, send, turn
from tests.helpers import png_bytes

pytestmark = [pytest.mark.usefixtures("hermes"), pytest.mark.servers("newer")]

ROOT = Path(__file__).resolve().parents[2]
CHAT_CELL = 1
#: How many tools Hermes holds for the kernel's server (mcp.servers.status), asked through the notebook's own
#: connection: Hermes applies a re-listed tool set to its sessions after it listed them, so a turn sent the
# moment : the kernel saw the listing could still lack the cell tools.
HERMES_TOOL_COUNT = """
from hermes_notebook import runtime as _runtime

async def _hermes_tool_count():
    conn = await h.conversation.dashboard()
    status = await conn.request("mcp.servers.status", {})
    return next((s.get("tools") or 0 for s in status.get("servers", []) if s.get("name") == share.name), 0)

def hermes_tool_count():
    return _runtime.run_sync(_hermes_tool_count(), timeout=10)
"""
CELLS = [
    f"import hermes_notebook as hn\nh = hn.connect()\nshare = h.share_kernel(read=True)\n"
    f"PNG = bytes.fromhex('{png_bytes(24, 16).hex()}')\n{HERMES_TOOL_COUNT}",
    "chat = h.chat()\nchat",
    "x = 1",
    "print(x + 1)",
]
#: The kernel has a front end with the extension attached.
ATTACHED = "__import__('hermes_notebook.kernel.document', fromlist=['D']).DOCUMENT.attached"
#: ... and Hermes has listed the tools again since it said hello (so its next turn is offered the cell tools).
READY = (
    f"{ATTACHED} and __import__('hermes_notebook.kernel.share', fromlist=['K']).KERNEL.server.clients_current"
    " and hermes_tool_count() >= 12"
)  # ... and Hermes holds all of them: 5 kernel tools + 7 cell tools
#: The README's picture of pending changes (docs/notebook-pending-change.png is a copy of one such run's).
SCREENSHOT = (
    Path(os.environ.get("BROWSER_TEST_ARTIFACTS", ROOT / "test-artifacts")) / "notebook-pending-change.png"
)


def picture(nb: Any, path: Path) -> None:
    """A screenshot of cells 2 and 3 with what is pending on them."""
    cell(nb, 2).evaluate("node => node.scrollIntoView({block: 'start'})")
    top, bottom = cell(nb, 2).bounding_box(), cell(nb, 3).bounding_box()
    assert top is not None and bottom is not None
    nb.page.screenshot(
        path=str(path),
        clip={
            "x": top["x"],
            "y": top["y"],
            "width": top["width"],
            "height": bottom["y"] + bottom["height"] - top["y"],
        },
    )


def luminance(css: str) -> float:
    """Relative brightness (0-1) of a computed ``rgb(...)``/``rgba(...)`` colour."""
    r, g, b = (float(v) for v in css[css.index("(") + 1 :].rstrip(")").split(",")[:3])
    return (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255


def saved_cells(nb: Any) -> str:
    """The notebook's cells as saved on disk, except the chat cell's outputs (the conversation, which every
    turn extends): JSON text, so equal means byte-identical."""
    cells = json.loads(nb.save().read_text())["cells"]
    cells[CHAT_CELL] = {k: v for k, v in cells[CHAT_CELL].items() if k != "outputs"}
    return json.dumps(cells, sort_keys=True)


def pending(nb: Any, kind: str) -> Any:
    return nb.page.locator(f".hn-pending[data-kind='{kind}']")


def diff_lines(region: Any) -> list[tuple[str | None, str]]:
    lines = region.locator(".hn-pending-line")
    return [
        (lines.nth(i).get_attribute("data-kind"), lines.nth(i).locator(".hn-pending-text").inner_text())
        for i in range(lines.count())
    ]


def cell(nb: Any, index: int) -> Any:
    return nb.page.locator(".jp-Notebook .jp-Cell").nth(index)


def model_cells(nb: Any) -> list[dict[str, Any]]:
    """The notebook model's cells as the page holds them (source, type, execution count)."""
    return nb.page.evaluate(
        """(path) => {
      const nb = [...window.jupyterapp.shell.widgets('main')].find(w => w.context && w.context.path === path);
      return nb.content.widgets.map(c => ({source: c.model.sharedModel.getSource(), type: c.model.type,
                                          count: c.model.type === 'code' ? c.model.executionCount : null}));
    }""",
        nb.path,
    )


@pytest.mark.parametrize("app", ["lab", "notebook7"])
def test_proposals_show_as_diffs_and_only_keep_or_run_changes_the_notebook(
    open_notebook: Any, app: str
) -> None:
    """Insert + edit pending with diffs (typing elsewhere works), both discarded: cells byte-identical; an
    insert
    kept: in the saved notebook, not run; run_cell runs that cell only after Run, its output in the cell."""
    nb = open_chat(open_notebook, app=app, cells=CELLS)
    nb.wait_kernel(READY, timeout_s=60)
    # A Hermes session keeps the tool set it was made with (the README's cell-tools notes say so), and the
    # page's extension may attach a moment after Run All opened the chat: its first turns go to a session made
    # now.
    opened = nb.kernel_eval("chat.session['id']")
    nb.kernel_eval("chat._dispatch(chat, {'type': 'new_session'}, []) or True")
    nb.wait_kernel(f"chat.ready.done() and chat.session is not None and chat.session['id'] != {opened!r}")
    page = nb.page
    modes = page.locator(".hn-kernel-modes")
    expect(modes.locator(".hn-kernel-modes-text")).to_have_text(
        "kernel: reads on · edits proposed · runs ask"
    )
    expect(modes.locator(".hn-kernel-revoke")).to_be_hidden()

    turn(nb, 'KERNEL insert_cell 2 "y = 41\\nprint(y + 1)"')
    insert = pending(nb, "insert")
    expect(insert).to_be_visible()
    expect(insert).to_have_attribute("aria-label", "Hermes proposes a new code cell here")
    assert diff_lines(insert) == [("add", "y = 41"), ("add", "print(y + 1)")]
    assert (
        cell(nb, 2).locator(".hn-pending[data-kind='insert']").count() == 1
    )  # shown above the cell it goes before
    turn(nb, "KERNEL edit_cell 3 print(x + 2)")
    edit = pending(nb, "edit")
    expect(edit).to_be_visible()
    assert diff_lines(edit) == [("del", "print(x + 1)"), ("add", "print(x + 2)")]
    assert cell(nb, 3).locator(".hn-pending[data-kind='edit']").count() == 1
    assert [c["source"] for c in model_cells(nb)] == CELLS  # proposed, nothing changed

    # The chat's tool part shows its change in the notebook (focus lands on the pending change).
    tool = page.locator(".hn-part-tool").filter(has_text="insert_cell").last
    expect(tool.locator(".hn-cell-change-label")).to_have_text(
        "Proposed a new code cell at index 2, waiting for you:"
    )
    tool.get_by_role("button", name="Show in notebook").click()
    page.wait_for_function("() => document.activeElement?.dataset?.kind === 'insert'", timeout=10_000)
    if app == "lab":  # the README's picture: both pending changes on their cells, light and dark
        SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
        picture(nb, SCREENSHOT)
        colors = {}
        try:  # the panel's colours come from the theme: light text on a dark panel in the dark theme
            for theme in ("JupyterLab Dark", "JupyterLab Light"):
                nb.set_theme(theme)
                colors[theme] = edit.locator(".hn-pending-diff").evaluate(
                    "el => [getComputedStyle(el).color, getComputedStyle(el).backgroundColor]"
                )
                if theme == "JupyterLab Dark":
                    picture(nb, SCREENSHOT.with_name("notebook-pending-change-dark.png"))
        finally:
            nb.set_theme("JupyterLab Light")  # a user setting: later tests must not inherit dark
        for theme, (fg, bg) in colors.items():
            assert (luminance(fg) > luminance(bg)) == (theme == "JupyterLab Dark"), (theme, fg, bg)

    # The user types in another cell while both changes wait: it lands there, the proposals stay.
    cell(nb, 0).locator(".cm-content").click()
    page.keyboard.press("Control+End")
    page.keyboard.type("\n# typed while Hermes waits")
    page.keyboard.press("Escape")
    expect(cell(nb, 0)).to_contain_text("# typed while Hermes waits")
    expect(insert).to_be_visible()
    before = saved_cells(nb)

    # Discard both, by keyboard for the edit: the saved cells are byte-identical to before.
    edit.get_by_role("button", name="Discard").focus()
    page.keyboard.press("Enter")
    insert.get_by_role("button", name="Discard").click()
    expect(page.locator(".hn-pending")).to_have_count(0)
    assert saved_cells(nb) == before

    # Keep: the proposed cell is in the saved notebook, exactly, and it has not run.
    turn(nb, f"KERNEL insert_cell 4 {json.dumps(KEPT)}")
    pending(nb, "insert").get_by_role("button", name="Keep").click()
    expect(page.locator(".hn-pending")).to_have_count(0)
    kept = model_cells(nb)[4]
    assert kept == {"source": KEPT, "type": "code", "count": None}
    saved = json.loads(nb.save().read_text())["cells"]
    assert "".join(saved[4]["source"]) == KEPT and saved[4]["outputs"] == []

    # run_cell: the card shows the cell's source; the cell runs only after Run, its output in the cell.
    tool_count = page.locator(".hn-part-tool").count()
    send(nb, "KERNEL run_cell 4")
    card = page.locator(".hn-interaction[data-kind='code'][data-status='pending']")
    card.wait_for(timeout=TURN_TIMEOUT_MS)
    expect(card.locator(".hn-interaction-command")).to_have_text(KEPT)
    assert model_cells(nb)[4]["count"] is None and page.locator(".hn-part-tool").count() == tool_count + 1
    card.get_by_role("button", name="Run", exact=True).click()
    expect(cell(nb, 4).locator(".jp-OutputArea-output").first).to_contain_text(
        "kept 42", timeout=TURN_TIMEOUT_MS
    )
    message = page.locator(".hn-message[data-role='assistant'][data-status='complete']").last
    expect(message).to_contain_text("Ran cell 4", timeout=TURN_TIMEOUT_MS)
    expect(message).to_contain_text("kept 42")
    assert isinstance(model_cells(nb)[4]["count"], int)
    # After Run, the tool part shows the run itself (the code, then how it ended) and the plot sent to the
    # model.
    tool = page.locator(".hn-part-tool").filter(has_text="run_cell").last
    run = tool.locator(".hn-interaction[data-kind='run']")
    expect(run.locator(".hn-interaction-outcome")).to_have_text("Finished")
    expect(run.locator(".hn-interaction-command")).to_have_text(KEPT)
    image = tool.locator(".hn-sent-images img")
    expect(image).to_have_count(1)
    assert image.get_attribute("src").startswith("data:image/png;base64,iVBORw0KGgo")  # type: ignore[union-attr]
    expect(tool.locator(".hn-sent-image-label")).to_contain_text("24×16")

    if app == "lab":  # Stop on a running run_cell interrupts that cell (and only while it is the one running)
        turn(nb, f"KERNEL insert_cell 5 {json.dumps(LONG)}")
        pending(nb, "insert").get_by_role("button", name="Keep").click()
        send(nb, "KERNEL run_cell 5")
        page.locator(".hn-interaction[data-kind='code'][data-status='pending']").get_by_role(
            "button", name="Run", exact=True
        ).click()
        expect(cell(nb, 5).locator(".jp-OutputArea-output").first).to_contain_text(
            "started", timeout=TURN_TIMEOUT_MS
        )
        running = page.locator(".hn-interaction[data-kind='run'][data-status='pending']")
        expect(running.locator(".hn-interaction-description")).to_contain_text("Running in the kernel")
        running.get_by_role("button", name="Stop").click()
        expect(cell(nb, 5)).to_contain_text("KeyboardInterrupt", timeout=TURN_TIMEOUT_MS)
        message = page.locator(".hn-message[data-role='assistant'][data-status='complete']").last
        expect(message).to_contain_text(
            "Cell 5 was not run to the end: the run stopped", timeout=TURN_TIMEOUT_MS
        )
        assert nb.kernel_eval("1 + 1") == 2  # the kernel is fine, and idle again

    read_before_write_and_a_diff_you_can_trust(nb, app)

    # Runs allowed for this session: the header says so in words and Revoke ends it.
    nb.kernel_exec("share = h.share_kernel(read=True, run='allow')")
    expect(modes.locator(".hn-kernel-modes-text")).to_have_text(
        "kernel: reads on · edits proposed · runs allowed for this session"
    )
    modes.get_by_role("button", name="Revoke").click()
    expect(modes.locator(".hn-kernel-modes-text")).to_have_text(
        "kernel: reads on · edits proposed · runs ask"
    )
    assert nb.kernel_eval("share.run") == "ask"


#: Installed before a proposal arrives: the moment a pending edit shows, click its Keep (as a click meant for
# what was there before would land) and note whether the button said it was not ready yet.
CLICK_ON_ARRIVAL = """() => {
  window.__early = [];
  window.__earlyObserver = new MutationObserver((records) => {
    for (const r of records) for (const n of r.addedNodes) {
      const keep = n.querySelector?.(".hn-pending[data-kind='edit'] .hn-pending-keep");
      if (keep) { window.__early.push(keep.getAttribute('aria-disabled')); keep.click(); }
    }
  });
  window.__earlyObserver.observe(document.body, {childList: true, subtree: true});
}"""


def read_before_write_and_a_diff_you_can_trust(nb: Any, app: str) -> None:
    """The agent reads the outline, the user types in cell 2, and Hermes' edit of it is refused before
    anything shows (the refusal carries the cell as it is now; the user's text is intact on disk); proposing
    again from that shows the diff. A second proposal for the cell says it replaced the first, ignores a click
    that lands the moment it shows, and reveals a U+202E and a 300-space tail on its diff line."""
    page = nb.page
    expect(turn(nb, "KERNEL list_cells")).to_contain_text(f" v{cell_version('x = 1')}: x = 1")
    cell(nb, 2).locator(".cm-content").click()
    page.keyboard.press("Control+End")
    page.keyboard.type("  # mine")
    page.keyboard.press("Escape")
    refused = turn(nb, "KERNEL edit_cell 2 x = 2")
    expect(refused).to_contain_text("Refused: cell 2 changed since you last read it")
    expect(refused).to_contain_text(f"version {cell_version('x = 1  # mine')}")
    expect(refused).to_contain_text("x = 1  # mine")
    assert page.locator(".hn-pending").count() == 0
    saved = json.loads(nb.save().read_text())["cells"]
    assert "".join(saved[2]["source"]) == "x = 1  # mine"  # the user's text, on disk
    # The refusal showed the cell: an edit from it goes through, shown as a diff.
    turn(nb, "KERNEL edit_cell 2 x = 3")
    edit = pending(nb, "edit")
    expect(edit).to_be_visible()
    assert diff_lines(edit) == [("del", "x = 1  # mine"), ("add", "x = 3")]
    # A second proposal for the same cell replaces the first, says so, and ignores a click on arrival.
    page.evaluate(CLICK_ON_ARRIVAL)
    tail = "x = 1  # mine\u202e" + " " * 300 + "; import os"
    turn(nb, f'KERNEL edit_cell 2 "{tail}"')
    expect(edit.locator("[data-note='replaced']")).to_have_text(
        "Hermes replaced its earlier proposal for this cell."
    )
    assert page.evaluate("window.__earlyObserver.disconnect() || window.__early") == ["true"]
    expect(page.locator(".hn-pending")).to_have_count(1)  # the early click kept nothing
    added = edit.locator(".hn-pending-line[data-kind='add'] .hn-pending-text")
    expect(added).to_have_text("x = 1  # mine\u27e6U+202E\u27e7 \u27e6300 spaces\u27e7 ; import os")
    box = edit.bounding_box()
    assert box is not None and box["width"] <= page.viewport_size["width"]  # type: ignore[index]
    if app == "lab":  # the diff as a user sees it: light and dark, wide and narrow
        try:
            for theme, tag in (("JupyterLab Light", "light"), ("JupyterLab Dark", "dark")):
                nb.set_theme(theme)
                for width in (1400, 700):
                    page.set_viewport_size({"width": width, "height": 900})
                    edit.scroll_into_view_if_needed()
                    edit.screenshot(path=str(SCREENSHOT.with_name(f"notebook-diff-{tag}-{width}.png")))
        finally:
            nb.set_theme("JupyterLab Light")
            page.set_viewport_size({"width": 1280, "height": 900})
    edit.get_by_role("button", name="Discard").click()
    expect(page.locator(".hn-pending")).to_have_count(0)
    assert [c["source"] for c in model_cells(nb)][2] == "x = 1  # mine"
    keep_asks_before_replacing_the_users_lines(nb)


def keep_asks_before_replacing_the_users_lines(nb: Any) -> None:
    """The user types in a cell while Hermes' edit of it waits: the diff says so, and Keep asks first. Cancel
    leaves the user's text (on disk after a save) and the proposal waiting; Replace my changes writes it."""
    page = nb.page
    turn(nb, "KERNEL edit_cell 2 x = 4")
    edit = pending(nb, "edit")
    expect(edit).to_be_visible()
    expect(edit.locator("[data-note='stale']")).to_have_count(0)
    cell(nb, 2).locator(".cm-content").click()
    page.keyboard.press("Control+End")
    page.keyboard.type("  # again")
    page.keyboard.press("Escape")
    mine = "x = 1  # mine  # again"
    expect(edit.locator("[data-note='stale']")).to_have_text(
        "You changed this cell after Hermes proposed this; Keep replaces it with the version below."
    )
    assert diff_lines(edit) == [("del", mine), ("add", "x = 4")]  # the diff is from the cell as it is now
    keep = edit.get_by_role("button", name="Keep")
    expect(keep).not_to_have_attribute("aria-disabled", "true")  # the click delay after the re-render
    keep.click()
    expect(edit.locator(".hn-pending-ask")).to_have_text(
        "Keep replaces the lines you typed in this cell since Hermes proposed this."
    )
    cancel = edit.get_by_role("button", name="Cancel")
    expect(cancel).to_be_focused()  # the safe choice has the keyboard
    cancel.click()
    expect(edit.get_by_role("button", name="Keep")).to_be_focused()
    saved = json.loads(nb.save().read_text())["cells"]
    assert "".join(saved[2]["source"]) == mine  # Cancel: the user's text, on disk
    assert [c["source"] for c in model_cells(nb)][2] == mine
    expect(edit).to_be_visible()  # ... and the proposal still waits
    edit.get_by_role("button", name="Keep").click()
    edit.get_by_role("button", name="Replace my changes").click()
    expect(page.locator(".hn-pending")).to_have_count(0)
    saved = json.loads(nb.save().read_text())["cells"]
    assert "".join(saved[2]["source"]) == "x = 4"  # confirmed: replaced, exactly as proposed


#: A cell that would run a minute (Hermes runs it, the user stops it).
LONG = "import time\nprint('started', flush=True)\nfor _ in range(600):\n    time.sleep(0.1)"
#: The cell Hermes proposes, the user keeps and Hermes then runs: it prints and displays a PNG (as a plot
# does).
KEPT = "from IPython.display import Image, display\nprint('kept', 6 * 7)\ndisplay(Image(data=PNG))"


FRONT_END = "__import__('hermes_notebook.kernel.document', fromlist=['D']).DOCUMENT.front_end()"


def wait_ready(nb: Any) -> None:
    """Wait until the reloaded notebook's kernel is connected and idle again."""
    nb.page.wait_for_function(
        """(path) => {
      const nb = window.jupyterapp
        && [...window.jupyterapp.shell.widgets('main')].find(w => w.context?.path === path);
      const k = nb?.sessionContext.session?.kernel;
      return !!(k && k.connectionStatus === 'connected' && k.status === 'idle');
    }""",
        arg=nb.path,
        timeout=60_000,
        polling=100,
    )


def test_without_the_extension_the_cell_tools_are_not_offered(open_notebook: Any, jupyter_lab: Any) -> None:
    """With the extension disabled for the server (the page config ``jupyter labextension disable`` writes),
    the kernel's document comm is refused and Hermes is never offered the cell tools. Enabled again: sharing
    again attaches the reloaded page, and a page reloaded after that finds the kernel's open comm by itself; a
    change Hermes proposed then waits on its cell again after one more reload."""
    labconfig = jupyter_lab.root.parent / "config" / "labconfig"
    labconfig.mkdir(parents=True, exist_ok=True)
    (labconfig / "page_config.json").write_text(json.dumps({"disabledExtensions": {"hermes-notebook": True}}))
    try:
        nb = open_chat(open_notebook, cells=CELLS)
        expect(turn(nb, "KERNEL list_cells")).to_contain_text("no notebook tool 'list_cells' was offered")
        assert nb.kernel_eval(ATTACHED) is False
        assert nb.page.locator(".hn-pending").count() == 0
    finally:
        shutil.rmtree(labconfig)

    nb.page.reload()  # the extension is back; the kernel closed nothing of the user's, but it has no comm now
    wait_ready(nb)
    assert nb.kernel_eval(ATTACHED) is False
    nb.run_cell(0)  # share again: the kernel opens the comm, the page says hello
    nb.wait_kernel(READY, timeout_s=60)
    first = nb.kernel_eval(f"{FRONT_END}.id")
    nb.page.reload()  # a reloaded page says bye, then finds the open comm (comm_info) and says hello on it
    wait_ready(nb)
    nb.wait_kernel(f"{READY} and {FRONT_END}.id != {first!r}", timeout_s=60)
    nb.run_cell(CHAT_CELL)
    expect(turn(nb, "KERNEL list_cells")).to_contain_text(
        f"[3] code (not run) v{cell_version('print(x + 1)')}: print(x + 1)"
    )

    # A pending change outlives a page reload (the tab keeps it, the notebook file never holds it): it waits
    # on its cell again with the same diff, and Keep applies it.
    turn(nb, "KERNEL edit_cell 3 print(x + 2)")
    expect(pending(nb, "edit")).to_be_visible()
    shown = diff_lines(pending(nb, "edit"))
    assert shown == [("del", "print(x + 1)"), ("add", "print(x + 2)")]
    # Saved: no cell source and no metadata holds the proposal (the chat's transcript output names the
    # prompt).
    saved = json.loads(nb.save().read_text())
    kept = [saved["metadata"], *({k: c[k] for k in ("source", "metadata")} for c in saved["cells"])]
    assert "x + 2" not in json.dumps(kept)
    nb.page.reload()
    wait_ready(nb)
    edit = pending(nb, "edit")
    expect(edit).to_be_visible()
    assert diff_lines(edit) == shown and cell(nb, 3).locator(".hn-pending[data-kind='edit']").count() == 1
    assert [c["source"] for c in model_cells(nb)][3] == "print(x + 1)"  # still only proposed
    edit.get_by_role("button", name="Keep").click()
    expect(nb.page.locator(".hn-pending")).to_have_count(0)
    assert [c["source"] for c in model_cells(nb)][3] == "print(x + 2)"
    assert (
        nb.page.evaluate("() => Object.keys(sessionStorage).filter(k => k.startsWith('hermes-notebook:'))")
        == []
    )
