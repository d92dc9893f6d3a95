"""A real kernel (jupyter_client + ipykernel) whose environment points at a test Hermes, for the tests that
need whole kernel processes: each has its own tool server, registration and turns."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from jupyter_client.manager import KernelManager

from hermes_notebook._demo.local_hermes import LocalHermes
from tests.helpers import REPO


def kernel_env(hermes: LocalHermes, **extra: str) -> dict[str, str]:
    """This process's environment with ``hermes``' settings and this work tree on the path, plus ``extra``."""
    return {
        **os.environ,
        "HERMES_API_URL": hermes.api_url,
        "HERMES_API_KEY": hermes.api_key,
        "HERMES_DASHBOARD_URL": hermes.dashboard_url,
        "HERMES_DASHBOARD_TOKEN": hermes.dashboard_token,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
        **extra,
    }


class Kernel:
    """One ipykernel process; :meth:`run` executes a cell and returns its stdout."""

    def __init__(self, hermes: LocalHermes, cwd: Path, **extra_env: str) -> None:
        self.manager = KernelManager(kernel_name="python3")
        self.manager.start_kernel(env=kernel_env(hermes, **extra_env), cwd=str(cwd))
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
