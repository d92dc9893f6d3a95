"""The cell tools against the real newer Dashboard, the scripted model calling them, a scripted front end in
place of the notebook page (tests/browser/ has the real extension): they are offered only while a front end is
attached, Hermes learns that from ``tools/list_changed``, a proposal links its tool part, and ``run_cell``
asks first.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest

import hermes_notebook as hn
from hermes_notebook._demo.local_hermes import LocalHermes
from hermes_notebook.kernel.document import DOCUMENT
from hermes_notebook.kernel.versions import cell_version
from hermes_notebook.notebook.handle import TurnHandle
from tests.helpers import eventually
from tests.scripted_front_end import ScriptedFrontEnd, code_cell

pytestmark = pytest.mark.servers("newer")
NOT_OFFERED = "no notebook tool 'list_cells' was offered"


@pytest.fixture
def shared(hermes_shell: Any, hermes: LocalHermes) -> Iterator[tuple[Any, ScriptedFrontEnd]]:
    """A connection sharing the kernel (reads on) and a scripted page, not yet attached; both undone after."""
    h = hn.connect(hermes.settings())
    page = ScriptedFrontEnd(
        DOCUMENT,
        cells=[code_cell("a", "import math\nx = math.pi", 1, ["execute_result"]), code_cell("b", "print(x)")],
    )
    try:
        h.share_kernel(read=True)
        yield h, page
    finally:
        page.bye()
        h.close()


def _ask(h: Any, prompt: str) -> Any:
    return h.ask(prompt, new=True, timeout=120)


def _offered_in_the_last_request(hermes: LocalHermes) -> str:
    """The tool names and catalog text the model was offered in the last agent request (the model's view)."""
    body = next(b for b in reversed(hermes.model.requests) if b.get("tools"))
    return " ".join(
        str((t.get("function") or {}).get("name")) + " " + str((t.get("function") or {}).get("description"))
        for t in body["tools"]
    )


def test_cell_tools_are_offered_only_while_a_front_end_is_attached(
    shared: tuple[Any, ScriptedFrontEnd], hermes: LocalHermes
) -> None:
    """Before a page says hello the model is not offered ``list_cells``; after hello (tools/list_changed) it
    is and gets the outline; after bye it is withdrawn again."""
    h, page = shared
    reply = _ask(h, "KERNEL list_cells")
    assert NOT_OFFERED in reply.text, reply.text
    assert "list_cells" not in _offered_in_the_last_request(hermes)

    page.hello()
    reply = eventually(
        lambda: (r := _ask(h, "KERNEL list_cells")) and NOT_OFFERED not in r.text and r,
        timeout=60,
        what="list_cells offered after the page attached",
    )
    first = page.cells[0]["source"]
    assert f"[0] code In[1] v{cell_version(first)}: import math  (2 lines) -> execute_result" in reply.text
    assert f"[1] code (not run) v{cell_version('print(x)')}: print(x)" in reply.text
    assert [r["op"] for r in page.requests] == ["outline"]

    page.bye()
    reply = eventually(
        lambda: (r := _ask(h, "KERNEL list_cells")) and NOT_OFFERED in r.text and r,
        timeout=60,
        what="list_cells withdrawn after the page left",
    )
    assert "list_cells" not in _offered_in_the_last_request(hermes)


def _pending_code(handle: TurnHandle) -> dict[str, Any] | None:
    for part in handle.parts:
        inter = part.get("interaction") or {}
        if inter.get("kind") == "code" and inter.get("status") == "pending":
            return dict(inter)
    return None


def test_a_proposal_links_its_tool_part_and_run_cell_asks_first(shared: tuple[Any, ScriptedFrontEnd]) -> None:
    """``insert_cell`` reaches the page as a proposal and the tool part names it (``cell_change``);
    ``run_cell`` shows the cell's whole source on the Run/Deny card and the page is asked to run it only after
    Run."""
    h, page = shared
    page.hello()
    marker = uuid.uuid4().hex[:6]
    reply = eventually(
        lambda: (
            (r := _ask(h, f'KERNEL insert_cell 1 "y = {marker!r}\\nprint(y)"'))
            and "I proposed" in r.text
            and r
        ),
        timeout=60,
        what="insert_cell offered and answered",
    )
    [proposal] = [r for r in page.requests if r["op"] == "propose"]
    change = proposal["change"]
    assert (
        change["kind"] == "insert"
        and change["index"] == 1
        and change["source"] == f"y = {marker!r}\nprint(y)"
    )
    tool = next(t for t in reply.tools if (t.get("name") or "").endswith("__insert_cell"))
    told = str(tool.get("result"))  # what the model is told; the reply says it in a line for the person
    assert f"pending change {change['id']}" in told and "nothing runs" in told, told
    assert reply.text.startswith(
        "I proposed a new code cell at index 1 in scripted.ipynb: it shows on the"
    ), reply.text
    assert tool["cell_change"] == {"id": change["id"], "kind": "insert", "index": 1, "cell_type": "code"}

    page.run_outputs = [{"output_type": "stream", "name": "stdout", "text": "3.14\n"}]
    handle = h.start("KERNEL run_cell 1")
    handle.buttons = True
    card = eventually(lambda: _pending_code(handle), timeout=60, what="the Run/Deny card")
    assert card["command"] == "print(x)" and "cell 1" in card["description"]
    assert not any(r["op"] == "run" for r in page.requests)  # shown, not run
    assert handle.answer(card["request_id"], "run")
    reply = handle.wait(timeout=120)
    [run] = [r for r in page.requests if r["op"] == "run"]
    assert run["cell"] == "b" and run["source"] == "print(x)"
    assert "Ran cell 1 (In[1]).\n\nstdout:\n3.14" in reply.text, reply.text  # the result's text, unquoted


def test_under_a_hermes_cell_run_cell_runs_in_that_wait_and_the_page_shows_its_outputs(
    hermes_shell: Any, hermes: LocalHermes
) -> None:
    """A blocking ``%hermes`` cell keeps the kernel busy until its turn ends; the notebook could only queue
    the cell behind it. So the wait runs the cell's source itself (runs allowed for the session: no card to
    click here), and the page writes the outputs into that cell; the notebook was never asked to run it."""
    page = ScriptedFrontEnd(
        DOCUMENT, cells=[code_cell("a", "x = 21", 1), code_cell("b", "print('half', x)\nx * 2")]
    )
    hermes_shell.user_ns["x"] = 21
    try:
        hermes_shell.run_cell(
            "%hermes --kernel read,allow --new list the cells"
        )  # share (the magic's connection)
        page.hello()

        def ran() -> Any:
            hermes_shell.run_cell("%hermes -o ran_reply --new KERNEL run_cell 1")
            reply = hermes_shell.user_ns.get("ran_reply")
            return reply if reply is not None and "Ran cell 1" in reply.text else None

        reply = eventually(ran, timeout=90, what="run_cell offered and run under %hermes")
        assert "in the kernel while a %hermes cell waited" in reply.text and "half 21" in reply.text, (
            reply.text
        )
        [shown] = [r for r in page.requests if r["op"] == "outputs"]
        assert shown["cell"] == "b" and shown["outputs"][0]["text"] == "half 21\n"
        assert not any(r["op"] == "run" for r in page.requests)
        tool = next(t for t in reply.tools if (t.get("name") or "").endswith("__run_cell"))
        assert (tool["interaction"]["kind"], tool["interaction"]["response"]) == ("run", "finished")
    finally:
        page.bye()
