"""Kernel tools on a Dashboard that cannot register MCP servers (0.19.0): the exact snippet, never the
token."""

from __future__ import annotations

import stat
from typing import Any

import httpx
import pytest

import hermes_notebook as hn
from hermes_notebook._demo.local_hermes import LocalHermes
from tests.helpers import mcp_tool_names

pytestmark = pytest.mark.servers("0.19.0")


def test_share_kernel_prints_the_config_snippet_and_where_the_token_is(
    hermes_shell: Any, hermes: LocalHermes, capsys: pytest.CaptureFixture[str]
) -> None:
    """On 0.19.0 ``share_kernel`` registers nothing: it prints the ``mcp_servers`` entry, names the 0600 token
    file and says Hermes must restart; the token is in no output or repr, and it is the one the server
    accepts."""
    h = hn.connect(hermes.settings())
    try:
        share = h.share_kernel(read=True)
        printed = capsys.readouterr().out
        assert not share.registered and share.token_path is not None
        key = f"MCP_{share.name.upper()}_API_KEY"
        assert share.snippet == (
            f"mcp_servers:\n  {share.name}:\n    url: {share.url}\n    timeout: 14580\n    headers:\n"
            f'      Authorization: "Bearer ${{{key}}}"\n'
        )
        assert (
            share.snippet in printed
            and "restart Hermes" in printed
            and "hermes-agent[mcp]" in printed
            and str(share.token_path) in printed
        )
        token = share.token_path.read_text()
        assert (
            len(token) >= 32 and token not in printed and token not in repr(share) and token not in str(share)
        )
        assert stat.S_IMODE(share.token_path.stat().st_mode) == 0o600
        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
        accept = {"accept": "application/json, text/event-stream"}
        assert httpx.post(share.url, json=body, headers=accept, trust_env=False).status_code == 401
        # No notebook front end here: the kernel tools only, no cell tools.
        assert mcp_tool_names(share.url, token) == {
            "list_variables",
            "describe",
            "read_cells",
            "read_output",
            "run_code",
        }
    finally:
        h.close()
