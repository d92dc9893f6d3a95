"""Hermes works in the kernel: the real newer Dashboard, the scripted model calling the notebook's kernel
tools.

The pytest process plays the kernel: an IPython shell's namespace is what the tools read and what approved
code changes, and the test's thread is the main thread the blocking wait runs that code on. A Run/Deny card is
answered through ``TurnHandle.answer``, the call the live view's buttons make.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

import hermes_notebook as hn
from hermes_notebook._demo.local_hermes import LocalHermes
from hermes_notebook.client.dashboard import DashboardConnection
from hermes_notebook.kernel.share import KERNEL
from hermes_notebook.notebook.handle import TurnHandle
from hermes_notebook.runtime import run_sync
from tests.helpers import eventually, mcp_result, registered_mcp_servers

pytestmark = pytest.mark.servers("newer")
pd = pytest.importorskip("pandas")


@pytest.fixture
def hermes_kernel(hermes_shell: Any, hermes: LocalHermes) -> Iterator[tuple[Any, Any]]:
    """``(Hermes, namespace)``: a connection to the shared servers and the shell's namespace; closed
    afterwards."""
    h = hn.connect(hermes.settings())
    try:
        yield h, hermes_shell.user_ns
    finally:
        h.close()


def _registered(hermes: LocalHermes) -> dict[str, str]:
    return registered_mcp_servers(hermes.settings())


def _pending_code(handle: TurnHandle) -> dict[str, Any] | None:
    for part in handle.parts:
        inter = part.get("interaction") or {}
        if inter.get("kind") == "code" and inter.get("status") == "pending":
            return dict(inter)
    return None


def _start_with_buttons(h: Any, prompt: str) -> TurnHandle:
    handle = h.start(prompt)
    handle.buttons = True  # a live view is showing the card (the magic's TurnView sets this)
    return handle


def test_the_agent_reads_a_dataframe_summary(hermes_kernel: tuple[Any, Any], hermes: LocalHermes) -> None:
    """With reads shared, the model's ``describe`` call returns the DataFrame's typed summary, shown as a tool
    part."""
    h, ns = hermes_kernel
    ns["sales"] = pd.DataFrame({"city": ["Oslo", "Lima", "Pune"], "revenue": [3.5, 19.0, 7.25]})
    share = h.share_kernel(read=True)
    assert share.registered and share.name in _registered(hermes)
    reply = h.ask("KERNEL describe sales", new=True, timeout=120)
    assert "Kernel tool result:" in reply.text, reply.text
    assert "DataFrame: 3 rows × 2 columns" in reply.text and "revenue: float64" in reply.text
    tool = next(t for t in reply.tools if (t.get("name") or "").endswith("__describe"))
    assert share.name in tool["name"] and tool["status"] == "completed"


def test_reads_are_off_by_default(hermes_kernel: tuple[Any, Any]) -> None:
    """Shared without ``read=True``, a read tool answers that reading is off and shows no value."""
    h, ns = hermes_kernel
    ns["hidden_value"] = "s3cr3t-looking-text-" + uuid.uuid4().hex
    h.share_kernel()
    reply = h.ask("KERNEL describe hidden_value", new=True, timeout=120)
    assert "Reading the notebook is off for this session" in reply.text
    assert ns["hidden_value"] not in reply.text


def test_run_code_needs_a_click_and_runs_in_the_users_namespace(hermes_kernel: tuple[Any, Any]) -> None:
    """``run_code`` shows the whole code on a card; nothing runs until Run is clicked, then it runs in the
    user's namespace on the main thread and the agent gets its output."""
    h, ns = hermes_kernel
    name = f"hn_answer_{uuid.uuid4().hex[:6]}"
    h.share_kernel()
    handle = _start_with_buttons(h, f"KERNEL run_code {name} = 41 + 1; print('computed', {name})")
    card = eventually(lambda: _pending_code(handle), timeout=60, what="the Run/Deny card")
    assert card["command"] == f"{name} = 41 + 1; print('computed', {name})"
    assert "run" in card["choices"] and "deny" in card["choices"]
    assert name not in ns  # shown, not run
    assert handle.answer(card["request_id"], "run")
    reply = handle.wait(timeout=120)
    assert ns[name] == 42
    assert "computed 42" in reply.text, reply.text
    tool = next(t for t in reply.tools if (t.get("name") or "").endswith("__run_code"))
    # after Run, the part shows the run itself (the same code), settled with how it ended
    inter = tool["interaction"]
    assert (inter["kind"], inter["status"], inter["response"], inter["command"]) == (
        "run",
        "answered",
        "finished",
        card["command"],
    )


def test_deny_leaves_the_namespace_unchanged(hermes_kernel: tuple[Any, Any]) -> None:
    """Deny on the card: the code does not run, and the agent is told so."""
    h, ns = hermes_kernel
    name = f"hn_denied_{uuid.uuid4().hex[:6]}"
    before = dict(ns)
    h.share_kernel()
    handle = _start_with_buttons(h, f"KERNEL run_code {name} = 1")
    card = eventually(lambda: _pending_code(handle), timeout=60, what="the Run/Deny card")
    assert handle.answer(card["request_id"], "deny")
    reply = handle.wait(timeout=120)
    assert "the code was NOT run" in reply.text
    assert name not in ns and set(ns) - set(before) <= {"_", "__", "___"}


def test_nobody_to_click_means_denied(hermes_kernel: tuple[Any, Any]) -> None:
    """Without a view or a text prompt nobody can click Run: the code is denied at once, with a note."""
    h, ns = hermes_kernel
    name = f"hn_unattended_{uuid.uuid4().hex[:6]}"
    h.share_kernel()
    reply = h.ask(f"KERNEL run_code {name} = 1", new=True, timeout=120)
    assert name not in ns and "the code was NOT run" in reply.text
    assert any("nobody could answer" in note for note in reply.notes)


def test_close_removes_the_registration_and_a_wrong_token_gets_401(
    hermes_kernel: tuple[Any, Any], hermes: LocalHermes
) -> None:
    """``close()`` unregisters the server and stops it; while it runs, a request without its token gets
    401."""
    h, _ns = hermes_kernel
    share = h.share_kernel(read=True)
    assert share.name in _registered(hermes)
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    headers = {"accept": "application/json, text/event-stream", "authorization": "Bearer not-the-token"}
    assert httpx.post(share.url, json=body, headers=headers, trust_env=False).status_code == 401
    assert "Bearer" not in repr(share) and "Bearer" not in str(share)
    h.close()
    assert share.name not in _registered(hermes)
    assert KERNEL.server is None


def test_magic_kernel_option_shares_reads_and_can_refuse_code(hermes_shell: Any) -> None:
    """``%hermes --kernel read-only`` shares reads before asking; its ``run_code`` is refused without a
    card."""
    hermes_shell.user_ns["nums"] = [3, 1, 2]
    reply = hermes_shell.run_line_magic("hermes", "--kernel read-only --new KERNEL describe nums")
    assert "list of 3 items: 3, 1, 2" in reply.text, reply.text
    reply = hermes_shell.run_line_magic("hermes", "KERNEL run_code nums.clear()")
    assert "running code in this notebook is off" in reply.text
    assert hermes_shell.user_ns["nums"] == [3, 1, 2]
    assert not any((t.get("interaction") or {}).get("kind") == "code" for t in reply.tools)


def test_sharing_removes_registrations_of_dead_kernels(
    hermes_kernel: tuple[Any, Any], hermes: LocalHermes
) -> None:
    """A ``notebook_*`` entry whose loopback server no longer accepts connections (a killed kernel) is removed
    when a kernel shares."""
    import socket

    with socket.socket() as gone:
        gone.bind(("127.0.0.1", 0))
        dead_port = gone.getsockname()[1]
    dead = f"notebook_{uuid.uuid4().hex[:8]}"

    async def add() -> None:
        conn = DashboardConnection(hermes.settings())
        await conn.connect()
        try:
            await conn.request(
                "mcp.servers.add",
                {
                    "name": dead,
                    "bearer_token": "x" * 32,
                    "config": {"url": f"http://127.0.0.1:{dead_port}/mcp"},
                },
            )
        finally:
            await conn.close()

    run_sync(add())
    assert dead in _registered(hermes)
    h, _ns = hermes_kernel
    share = h.share_kernel()
    names = _registered(hermes)
    assert dead not in names and share.name in names


def _call_directly(url: str, token: str, tool: str, arguments: dict[str, Any]) -> str:
    """A ``tools/call`` as another Hermes session's MCP client would make it: the right token, its own MCP
    session (initialize first: the server is stateful), no notebook turn."""
    headers = {"accept": "application/json, text/event-stream", "authorization": f"Bearer {token}"}
    with httpx.Client(headers=headers, trust_env=False, timeout=60) as client:
        init = client.post(
            url,
            json={
                "jsonrpc": "2.0",
                "id": 0,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "elsewhere", "version": "1"},
                },
            },
        )
        session = {"mcp-session-id": init.headers["mcp-session-id"]}
        client.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=session)
        body = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": tool, "arguments": arguments},
        }
        answer = mcp_result(client.post(url, json=body, headers=session))
    return str(answer["content"][0]["text"])


def test_calls_from_other_sessions_are_refused_and_the_turn_says_so(hermes_kernel: tuple[Any, Any]) -> None:
    """Hermes offers the kernel's tools to every session of the profile. While a notebook turn's Run card
    waits, calls with the token from elsewhere (another session's MCP client) are refused: one repeating the
    turn's own call (its part answers once), one with other code, a read no step asked for; the turn shows
    notices."""
    from concurrent.futures import ThreadPoolExecutor

    h, ns = hermes_kernel
    ns["secret_plan"] = "launch at dawn"
    share = h.share_kernel(read=True)
    handle = _start_with_buttons(h, "KERNEL run_code plan_total = 1")
    card = eventually(lambda: _pending_code(handle), timeout=60, what="the Run/Deny card")
    assert KERNEL.server is not None
    token = KERNEL.server.token.reveal()
    calls = [
        ("run_code", {"code": "plan_total = 1"}),
        ("run_code", {"code": "import os"}),
        ("describe", {"name": "secret_plan"}),
    ]
    with ThreadPoolExecutor(len(calls)) as pool:
        answers = list(pool.map(lambda c: _call_directly(share.url, token, *c), calls))
    assert all(a.startswith("Refused") for a in answers) and not any("dawn" in a for a in answers), answers
    notices = eventually(
        lambda: [p["text"] for p in handle.parts if p["kind"] == "marker"] or None,
        timeout=10,
        what="the notices",
    )
    assert any("A second call of the kernel tool run_code" in n for n in notices), notices
    assert any("whose arguments no step of this turn asked for" in n for n in notices), notices
    assert handle.answer(card["request_id"], "deny")
    handle.wait(timeout=120)
    assert "plan_total" not in ns


def test_a_new_kernel_takes_over_a_dead_kernels_name(hermes: LocalHermes) -> None:
    """Hermes never removes a server's ``.env`` token line: a kernel that died leaves its entry and line
    behind, and the next kernel reuses that name (and line) instead of adding one per kernel."""
    from hermes_notebook.kernel.grants import Modes
    from hermes_notebook.kernel.share import KernelTools
    from hermes_notebook.session import Conversation

    conn = DashboardConnection(hermes.settings())
    run_sync(conn.connect())
    conversation = Conversation(dashboard=conn)  # a kernel's conversation on that Dashboard
    first, second = KernelTools(), KernelTools()
    try:
        run_sync(first.share(conversation, Modes(), dashboard_url=hermes.dashboard_url))
        assert first.server is not None
        first.server.stop()  # the kernel died: nothing unregistered
        run_sync(second.share(conversation, Modes(), dashboard_url=hermes.dashboard_url))
        assert second.name == first.name and _registered(hermes)[second.name] != first.server.url
        key = f"MCP_{second.name.upper()}_API_KEY="
        lines = [line for line in (hermes.home / ".env").read_text().splitlines() if line.startswith(key)]
        assert len(lines) == 1, lines
    finally:
        second.close()
        run_sync(conn.close())
