"""The cell tools against the real newer Dashboard, the scripted model calling them, a scripted front end in place
of the notebook page (tests/browser/ has the real extension): they are offered only while a front end is attached,
Hermes learns that from ``tools/list_changed``, a proposal links its tool part, and ``run_cell`` asks first.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest

import hermes_notebook as hn
from hermes_notebook._demo.local_hermes import LocalHermes
from hermes_notebook.kernel.document import DOCUMENT
from hermes_notebook.notebook.handle import TurnHandle
from tests.helpers import eventually
from tests.scripted_front_end import ScriptedFrontEnd, code_cell

pytestmark = pytest.mark.servers("newer")
NOT_OFFERED = "no notebook tool 'list_cells' was offered"


@pytest.fixture
def shared(hermes_shell: Any, hermes: LocalHermes) -> Iterator[tuple[Any, ScriptedFrontEnd]]:
    """A connection sharing the kernel (reads on) and a scripted page, not yet attached; both undone after."""
    h = hn.connect(hermes.settings())
    page = ScriptedFrontEnd(DOCUMENT, cells=[code_cell("a", "import math\nx = math.pi", 1, ["execute_result"]),
                                             code_cell("b", "print(x)")])
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
    return " ".join(str((t.get("function") or {}).get("name")) + " " + str((t.get("function") or {}).get("description"))
                    for t in body["tools"])


def test_cell_tools_are_offered_only_while_a_front_end_is_attached(
    shared: tuple[Any, ScriptedFrontEnd], hermes: LocalHermes
) -> None:
    """Before a page says hello the model is not offered ``list_cells``; after hello (tools/list_changed) it is and
    gets the outline; after bye it is withdrawn again."""
    h, page = shared
    reply = _ask(h, "KERNEL list_cells")
    assert NOT_OFFERED in reply.text, reply.text
    assert "list_cells" not in _offered_in_the_last_request(hermes)

    page.hello()
    reply = eventually(lambda: (r := _ask(h, "KERNEL list_cells")) and NOT_OFFERED not in r.text and r,
                       timeout=60, what="list_cells offered after the page attached")
    assert "[0] code In[1]: import math  (2 lines) -> execute_result" in reply.text, reply.text
    assert "[1] code (not run): print(x)" in reply.text
    assert [r["op"] for r in page.requests] == ["outline"]

    page.bye()
    reply = eventually(lambda: (r := _ask(h, "KERNEL list_cells")) and NOT_OFFERED in r.text and r,
                       timeout=60, what="list_cells withdrawn after the page left")
    assert "list_cells" not in _offered_in_the_last_request(hermes)


def _pending_code(handle: TurnHandle) -> dict[str, Any] | None:
    for part in handle.parts:
        inter = part.get("interaction") or {}
        if inter.get("kind") == "code" and inter.get("status") == "pending":
            return dict(inter)
    return None


def test_a_proposal_links_its_tool_part_and_run_cell_asks_first(shared: tuple[Any, ScriptedFrontEnd]) -> None:
    """``insert_cell`` reaches the page as a proposal and the tool part names it (``cell_change``); ``run_cell``
    shows the cell's whole source on the Run/Deny card and the page is asked to run it only after Run."""
    h, page = shared
    page.hello()
    marker = uuid.uuid4().hex[:6]
    reply = eventually(lambda: (r := _ask(h, f'KERNEL insert_cell 1 "y = {marker!r}\\nprint(y)"'))
                       and "Proposed" in r.text and r, timeout=60, what="insert_cell offered and answered")
    [proposal] = [r for r in page.requests if r["op"] == "propose"]
    change = proposal["change"]
    assert change["kind"] == "insert" and change["index"] == 1 and change["source"] == f"y = {marker!r}\nprint(y)"
    assert f"pending change {change['id']}" in reply.text and "nothing runs" in reply.text
    tool = next(t for t in reply.tools if (t.get("name") or "").endswith("__insert_cell"))
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
    assert "Ran cell 1 (In[1]).\\n\\nstdout:\\n3.14" in reply.text, reply.text  # JSON-quoted by Hermes
