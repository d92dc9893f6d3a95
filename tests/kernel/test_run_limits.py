"""Long runs: the default and maximum run time from the environment, the tool-call timeout Hermes is given
(in the registered entry and the 0.19.0 snippet), progress notifications from the tool server while a call
runs, and, on the real newer Hermes with the times shortened by the settings, a run longer than the progress
interval whose output reaches the model."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
import yaml

import hermes_notebook as hn
from hermes_notebook._demo.local_hermes import LocalHermes
from hermes_notebook.errors import HermesUsageError
from hermes_notebook.kernel import registration, run_limits
from hermes_notebook.kernel.grants import Modes
from hermes_notebook.kernel.images import ToolAnswer
from hermes_notebook.kernel.server import ToolServer
from hermes_notebook.kernel.tools import offered


def test_the_settings_set_the_default_the_maximum_and_hermes_timeout(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without settings: 120 s by default, 4 hours at most, Hermes waits 4 hours and 3 minutes; the settings
    change each, share_kernel's run_limit is refused above the maximum, a wrong value is named."""
    assert (run_limits.default_run_limit({}), run_limits.max_run_limit({})) == (120.0, 14_400.0)
    assert run_limits.tool_call_timeout({}) == 14_580 and run_limits.progress_interval({}) == 10.0
    env = {"HERMES_RUN_LIMIT": "1800", "HERMES_RUN_LIMIT_MAX": "3600", "HERMES_TOOLS_PROGRESS": "0.5"}
    assert run_limits.default_run_limit(env) == 1800.0 and run_limits.tool_call_timeout(env) == 3780
    assert run_limits.default_run_limit({**env, "HERMES_RUN_LIMIT": "7200"}) == 3600.0  # never over the max
    with pytest.raises(HermesUsageError, match="HERMES_RUN_LIMIT_MAX must be a number of seconds"):
        run_limits.max_run_limit({"HERMES_RUN_LIMIT_MAX": "an hour"})

    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert Modes.of().run_limit == 1800.0 and Modes.of(run_limit=3000).run_limit == 3000.0
    with pytest.raises(HermesUsageError, match=r"from 1 to 3600 \(HERMES_RUN_LIMIT_MAX\), not 5000"):
        Modes.of(run_limit=5000)
    assert "    timeout: 3780\n" in registration.config_snippet("notebook_0a1b2c3d", "http://127.0.0.1:1/mcp")


async def test_a_long_call_sends_progress_and_its_answer_arrives(monkeypatch: pytest.MonkeyPatch) -> None:
    """The official MCP client (as Hermes uses it, here asking for progress) gets a progress notification
    every HERMES_TOOLS_PROGRESS seconds while a call runs, then the answer, over the call's SSE stream."""
    import httpx2
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    monkeypatch.setenv("HERMES_TOOLS_PROGRESS", "0.1")

    async def handler(tool: str, arguments: dict[str, Any]) -> ToolAnswer:
        await asyncio.sleep(0.5)  # on the server's loop: a cell that runs on
        return ToolAnswer(f"{tool} done")

    server = ToolServer(handler, offered=lambda: offered(False)).start()
    progress: list[tuple[float, str | None]] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append((value, message))

    try:
        auth = {"Authorization": f"Bearer {server.token.reveal()}"}
        async with (
            httpx2.AsyncClient(headers=auth) as http,
            streamable_http_client(server.url, http_client=http) as (read, write, *_),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            result = await session.call_tool("run_code", {"code": "x"}, progress_callback=on_progress)
    finally:
        server.stop()
    assert [block.text for block in result.content if block.type == "text"] == ["run_code done"]
    assert len(progress) >= 2 and progress[0][0] < progress[-1][0], progress
    assert progress[0][1] is not None and progress[0][1].startswith("run_code: running for")


@pytest.mark.servers("newer")
def test_a_run_longer_than_the_progress_interval_reaches_the_model_within_hermes_timeout(
    hermes_shell: Any, hermes: LocalHermes, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the times shortened by the settings (a 30 s maximum, a 20 s default, progress every 0.2 s), the
    kernel registers its server with Hermes' timeout at 30 + 180 s, the share's limit is the default, and a
    run that outlasts several progress intervals returns its output to the model, with no tool timeout."""
    monkeypatch.setenv("HERMES_RUN_LIMIT_MAX", "30")
    monkeypatch.setenv("HERMES_RUN_LIMIT", "20")
    monkeypatch.setenv("HERMES_TOOLS_PROGRESS", "0.2")
    h = hn.connect(hermes.settings())
    try:
        share = h.share_kernel(read=True, run="allow")
        assert share.registered and share.grants.modes.run_limit == 20.0
        config = yaml.safe_load((hermes.home / "config.yaml").read_text())
        assert config["mcp_servers"][share.name]["timeout"] == 210
        reply = h.ask(
            "KERNEL run_code import time; time.sleep(1.5); print('long cell done')", new=True, timeout=120
        )
        assert "long cell done" in reply.text and "timed out" not in reply.text, reply.text
        tool = next(t for t in reply.tools if (t.get("name") or "").endswith("run_code"))
        assert tool["interaction"]["response"] == "finished", tool
    finally:
        h.close()
