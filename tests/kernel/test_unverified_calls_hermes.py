"""0.19.0's blind cell-tool calls on the real server: a Hermes 0.19.0 has no ``mcp.servers`` RPC, so the
kernel's tools reach it the way a user does it there: the ``mcp_servers`` snippet ``share_kernel`` prints,
pasted into ``config.yaml``, the token put in ``.env``, and Hermes restarted. Its ``tool.start`` for a cell
tool carries no arguments preview, so the call is bound only because one conversation runs that tool, and
then as unverified: the page's proposal is marked so (its diff says the caller could not be verified) and the
Run card says it too. A call from another session while no notebook turn runs that tool is refused. (Two
conversations each running the same blind tool at once: refused with a notice in both,
tests/kernel/test_unverified_calls.py; the real servers cannot be made to start both parts at one instant.)
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import yaml

import hermes_notebook as hn
from hermes_notebook._demo.local_hermes import LocalHermes
from hermes_notebook.kernel.binding import tool_name
from hermes_notebook.kernel.document import DOCUMENT
from hermes_notebook.kernel.registration import env_key
from hermes_notebook.kernel.runs import UNVERIFIED
from tests.helpers import eventually
from tests.kernel.test_cell_tools_hermes import _pending_code
from tests.kernel.test_kernel_tools_hermes import _call_directly
from tests.scripted_front_end import ScriptedFrontEnd, code_cell

pytestmark = pytest.mark.servers("0.19.0")


def paste_snippet(hermes: LocalHermes, snippet: str, name: str, token: str) -> None:
    """What ``share_kernel`` tells a 0.19.0 user to do: the snippet into ``config.yaml``, the token into
    ``.env`` under the snippet's variable, then restart Hermes (its Dashboard runs the agent sessions)."""
    config_path = hermes.home / "config.yaml"
    config = yaml.safe_load(config_path.read_text())
    config.setdefault("mcp_servers", {}).update(yaml.safe_load(snippet)["mcp_servers"])
    config_path.write_text(yaml.safe_dump(config))
    with (hermes.home / ".env").open("a") as env:
        env.write(f"{env_key(name)}={token}\n")
    hermes.restart_dashboard()


@pytest.fixture
def by_hand(hermes_shell: Any, hermes_factory: Any) -> Iterator[tuple[Any, Any, ScriptedFrontEnd]]:
    """``(Hermes, share, page)``: a 0.19.0 Hermes of its own with the kernel's tools pasted in by hand and a
    scripted page attached; all undone after."""
    local = hermes_factory()
    h = hn.connect(local.settings())
    page = ScriptedFrontEnd(DOCUMENT, cells=[code_cell("a", "x = 1", 1), code_cell("b", "print(x)")])
    try:
        share = h.share_kernel(read=True)
        assert not share.registered and share.snippet is not None and share.token_path is not None
        page.hello()  # before Hermes starts, so the tool list it reads at start has the cell tools
        paste_snippet(local, share.snippet, share.name, share.token_path.read_text())
        yield h, share, page
    finally:
        page.bye()
        h.close()


def test_a_blind_call_on_0190_is_bound_to_the_one_turn_running_it_and_says_unverified(
    by_hand: tuple[Any, Any, ScriptedFrontEnd],
) -> None:
    """insert_cell from the notebook's own turn: its tool part shows no preview of the arguments, so the call
    is bound with nothing to check it by and the proposal reaches the page marked unverified; run_cell's card
    says the caller could not be verified; the same tool called from elsewhere, no turn running it, is
    refused."""
    h, share, page = by_hand
    reply = eventually(
        lambda: (
            (r := h.ask('KERNEL insert_cell 1 "y = 2"', new=True, timeout=120))
            and "I proposed" in r.text
            and r
        ),
        timeout=90,
        what="insert_cell offered by the restarted 0.19.0 Hermes and answered",
    )
    tool = next(t for t in reply.tools if t.get("name") == tool_name(share.name, "insert_cell"))
    assert tool["status"] == "completed" and tool["preview"] == "", tool  # no preview of its arguments
    [proposal] = [r["change"] for r in page.requests if r["op"] == "propose"]
    assert proposal["kind"] == "insert" and proposal["source"] == "y = 2"
    assert proposal["unverified"] is True  # the page's diff says the caller could not be verified

    handle = h.start("KERNEL run_cell 1")
    handle.buttons = True
    card = eventually(lambda: _pending_code(handle), timeout=90, what="the Run/Deny card")
    assert card["command"] == "print(x)" and card["description"].endswith(UNVERIFIED), card
    assert handle.answer(card["request_id"], "deny")
    handle.wait(timeout=120)
    assert not any(r["op"] == "run" for r in page.requests)

    token = share.token_path.read_text()
    refused = _call_directly(share.url, token, "insert_cell", {"index": 0, "source": "from elsewhere"})
    assert refused.startswith("Refused"), refused
    assert [r["change"]["source"] for r in page.requests if r["op"] == "propose"] == ["y = 2"]
