"""One notebook per conversation, kernel side: the page says which notebook it shows (hello, then on
rename), the kernel's requests go to one page (the newest), the chat header's modes name that notebook, and a
proposal's result names it. The page's half: js/tests/kernel_tools.test.ts."""

from __future__ import annotations

from typing import Any

from hermes_notebook.kernel.document import DocumentLink
from tests.kernel.test_cell_tools import _call
from tests.kernel.test_kernel_tools import FakeDashboard, _share, _unshare
from tests.kernel.test_kernel_tools import tools as tools  # the fixture: a fresh KernelTools
from tests.scripted_front_end import ScriptedFrontEnd, code_cell


def test_the_link_knows_which_notebook_the_tools_act_on() -> None:
    """The path comes with hello, follows a rename without changing which page is the target, is bounded and
    one line, and is gone when the page leaves; a second tab of the same notebook becomes the one target, so
    only it gets the proposal."""
    link = DocumentLink()
    heard: list[str] = []
    link.on_path(heard.append)
    first = ScriptedFrontEnd(link, cells=[code_cell("a", "x = 1")], client="tab-1", path="work/a.ipynb")
    first.hello()
    assert link.path == "work/a.ipynb" and heard[-1] == "work/a.ipynb"
    link.receive({"type": "path", "client": "tab-1", "path": "work/b.ipynb\n" + "x" * 900})
    assert link.path.startswith("work/b.ipynb x") and len(link.path) == 500 and "\n" not in link.path
    second = ScriptedFrontEnd(link, cells=[code_cell("a", "x = 1")], client="tab-2", path="work/b.ipynb")
    second.hello()  # the same notebook in a second tab: the newest page is the one target
    assert _call("insert_cell", {"index": 0, "source": "y = 2"}, link).startswith(
        "Proposed a new code cell at index 0 in work/b.ipynb"
    )
    assert len(second.pending) == 1 and first.pending == {}  # no second Keep for the same change
    second.bye()
    first.bye()
    assert link.path == "" and heard[-1] == ""


def test_the_header_modes_name_the_notebook(tools: Any, monkeypatch: Any) -> None:
    """KernelTools' modes (the chat header's) carry the path of the notebook the cell tools act on, and a
    watcher hears it change when the page comes, is renamed and goes."""
    link = DocumentLink()
    monkeypatch.setattr("hermes_notebook.kernel.share.DOCUMENT", link)
    monkeypatch.setattr("hermes_notebook.kernel.document._kernel_comm", lambda: None)
    conn = FakeDashboard()
    _share(tools, conn)
    seen: list[Any] = []
    tools.watch(conn, lambda state: seen.append(state and (state["cells"], state["notebook"])))
    assert seen[-1] == (False, None)
    page = ScriptedFrontEnd(link, client="page", path="notes/today.ipynb")
    page.hello()
    assert seen[-1] == (True, "notes/today.ipynb")
    link.receive({"type": "path", "client": "page", "path": "notes/renamed.ipynb"})
    assert seen[-1] == (True, "notes/renamed.ipynb")
    page.bye()
    assert seen[-1] == (False, None)
    _unshare(tools, conn)
