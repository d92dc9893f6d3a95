"""Kernel tools in REAL kernels (jupyter_client + ipykernel) against the real newer Dashboard: the registration
goes with the kernel, and each kernel has its own server, token and turns."""

from __future__ import annotations

import os
import re
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from jupyter_client.manager import KernelManager

from hermes_notebook._demo.local_hermes import LocalHermes
from tests.helpers import eventually, registered_mcp_servers

pytestmark = pytest.mark.servers("newer")
ROOT = Path(__file__).resolve().parents[1]


def _registered(hermes: LocalHermes) -> dict[str, str]:
    return registered_mcp_servers(hermes.settings())


class Kernel:
    """One ipykernel process; :meth:`run` executes a cell and returns its stdout."""

    def __init__(self, hermes: LocalHermes, cwd: Path) -> None:
        env = {**os.environ, "HERMES_API_URL": hermes.api_url, "HERMES_API_KEY": hermes.api_key,
               "HERMES_DASHBOARD_URL": hermes.dashboard_url, "HERMES_DASHBOARD_TOKEN": hermes.dashboard_token,
               "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
        self.manager = KernelManager(kernel_name="python3")
        self.manager.start_kernel(env=env, cwd=str(cwd))
        self.client = self.manager.client()
        self.client.start_channels()
        self.client.wait_for_ready(timeout=60)

    def run(self, code: str, timeout: float = 180) -> str:
        out: list[str] = []

        def hook(msg: dict[str, Any]) -> None:
            if msg["msg_type"] == "stream":
                out.append(msg["content"]["text"])
            elif msg["msg_type"] == "error":
                out.append("\n".join(msg["content"]["traceback"]))

        self.client.execute_interactive(code, timeout=timeout, output_hook=hook)
        return "".join(out)

    def stop(self) -> None:
        self.client.stop_channels()
        if self.manager.has_kernel:
            self.manager.shutdown_kernel(now=True)


@pytest.fixture
def kernels(hermes: LocalHermes, tmp_path: Path) -> Iterator[list[Kernel]]:
    """Start kernels on demand (``kernels.append(Kernel(...))``); all are shut down afterwards."""
    started: list[Kernel] = []
    try:
        yield started
    finally:
        for kernel in started:
            kernel.stop()


SHARE = "import hermes_notebook as hn\nh = hn.connect()\nshare = h.share_kernel(read=True)\nprint('NAME', share.name)"


def _name(output: str) -> str:
    match = re.search(r"NAME (notebook_[0-9a-f]{8})", output)
    assert match, output
    return match.group(1)


def test_a_kernel_restart_removes_the_registration(
    hermes: LocalHermes, kernels: list[Kernel], tmp_path: Path
) -> None:
    """The registration lives as long as its kernel: a restart (shutdown request, atexit) removes it."""
    kernel = Kernel(hermes, tmp_path)
    kernels.append(kernel)
    name = _name(kernel.run(SHARE))
    assert name in _registered(hermes)
    kernel.manager.restart_kernel(now=False)
    eventually(lambda: name not in _registered(hermes), timeout=30, what="the registration removed")


def test_a_second_kernel_has_its_own_token_and_cannot_read_the_first(
    hermes: LocalHermes, kernels: list[Kernel], tmp_path: Path
) -> None:
    """Two kernels: two servers with their own tokens (one's token gets 401 at the other), and a turn of the second
    kernel calling the first kernel's tool is refused by the first: it answers only its own turns."""
    first, second = Kernel(hermes, tmp_path), Kernel(hermes, tmp_path)
    kernels.extend([first, second])
    secret = f"only-in-the-first-{uuid.uuid4().hex[:8]}"
    first.run(f"private = {secret!r}")
    name_a, name_b = _name(first.run(SHARE)), _name(second.run(SHARE))
    assert name_a != name_b and {name_a, name_b} <= set(_registered(hermes))
    env = dict(line.split("=", 1) for line in (hermes.home / ".env").read_text().splitlines() if "=" in line)
    token_a, token_b = env[f"MCP_{name_a.upper()}_API_KEY"], env[f"MCP_{name_b.upper()}_API_KEY"]
    assert token_a != token_b
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    headers = {"accept": "application/json, text/event-stream", "authorization": f"Bearer {token_b}"}
    assert httpx.post(_registered(hermes)[name_a], json=body, headers=headers, trust_env=False).status_code == 401
    output = second.run(f"r = h.ask('KERNEL@{name_a} describe private', new=True)\nprint('TEXT', r.text)")
    assert "Refused: no turn started from this notebook" in output, output
    assert secret not in output
    own = second.run("r = h.ask('KERNEL@" + name_b + " list_variables', new=True)\nprint('TEXT', r.text)")
    assert "share: " in own and "private" not in own  # its own kernel answers, and holds no `private`
