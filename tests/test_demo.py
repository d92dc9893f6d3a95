"""``./demo`` from a clean copy of the tree: it starts a real Hermes and JupyterLab, answers, and stops cleanly.

The copy holds exactly what a clone would once everything is committed (tracked files plus untracked ones that
are not ignored). To keep the test quick it reuses the project's two venvs through ``HN_VENV`` and
``HN_HERMES_VENV`` (scripts/setup then only checks them); creating them from nothing is what ``scripts/test``
does on a fresh CI machine.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def clean_copy(tmp_path: Path) -> Path:
    """The files a clone would have, copied to a temp dir (no venvs, no build output, no caches)."""
    listing = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=ROOT, check=True, capture_output=True,
    ).stdout.decode().split("\0")
    dest = tmp_path / "clone"
    for name in filter(None, listing):
        source = ROOT / name
        if source.is_file():
            target = dest / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    assert (dest / "demo").exists() and not (dest / ".venv").exists()
    return dest


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HERMES_")}
    env.update(HN_VENV=str(ROOT / ".venv"), HN_HERMES_VENV=str(ROOT / ".venv-hermes"), PYTHONUNBUFFERED="1")
    return env


def _ports(output: str) -> list[int]:
    return [int(p) for p in re.findall(r"http://127\.0\.0\.1:(\d+)", output)]


def _closed(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) != 0


def _assert_token_not_in_any_command_line(output: str) -> None:
    """The Lab token travels by environment: no process's argv (readable by every local user) shows it."""
    token = re.search(r"\?token=([\w-]+)", output)
    assert token, output
    shown = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            if token.group(1).encode() in cmdline.read_bytes():
                shown.append(cmdline.parent.name)
        except OSError:  # the process went away
            continue
    assert shown == [], f"the Jupyter token is in the command line of pids {shown}"


def _assert_api_server_allows_no_cross_origin_page(output: str) -> None:
    """No ``*`` CORS on the demo's API Server: a page elsewhere gets no Access-Control-Allow-Origin."""
    import httpx

    api = re.search(r"Hermes API Server\s+(http://127\.0\.0\.1:\d+)", output)
    assert api, output
    with httpx.Client(trust_env=False, timeout=10) as http:
        preflight = http.options(f"{api.group(1)}/v1/models", headers={
            "Origin": "https://evil.example", "Access-Control-Request-Method": "GET",
            "Access-Control-Request-Headers": "authorization"})
        simple = http.get(f"{api.group(1)}/health", headers={"Origin": "https://evil.example"})
    for response in (preflight, simple):
        assert "access-control-allow-origin" not in response.headers, dict(response.headers)


def test_demo_check_starts_and_stops(clean_copy: Path) -> None:
    """``./demo --check`` starts Hermes and Lab, verifies both, stops them, and leaves no port open."""
    started = time.monotonic()
    done = subprocess.run(["./demo", "--check"], cwd=clean_copy, env=_env(), capture_output=True, text=True,
                          timeout=240, stdin=subprocess.DEVNULL)
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    assert "SCRIPTED OFFLINE STAND-IN" in output
    assert "check: Lab page ok, API Server ok 0.19.0, Dashboard version 0.19.0" in output
    assert "/lab/tree/quickstart.ipynb?token=" in output
    ports = _ports(output)
    assert len(ports) == 3 and all(_closed(p) for p in ports)
    assert time.monotonic() - started < 240


def test_demo_stops_everything_on_ctrl_c(clean_copy: Path) -> None:
    """Run until ready, press Ctrl+C (SIGINT): every process it started is gone and its ports are closed."""
    proc = subprocess.Popen(["./demo", "--no-browser"], cwd=clean_copy, env=_env(), stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, stdin=subprocess.DEVNULL)
    assert proc.stdout is not None
    lines: list[str] = []
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        lines.append(line)
        if "ready. Press Ctrl+C" in line:
            break
    output = "".join(lines)
    assert "ready. Press Ctrl+C" in output, output
    ports = _ports(output)
    assert len(ports) == 3 and not any(_closed(p) for p in ports)
    _assert_token_not_in_any_command_line(output)
    _assert_api_server_allows_no_cross_origin_page(output)
    t0 = time.monotonic()
    proc.send_signal(signal.SIGINT)
    rest, _ = proc.communicate(timeout=60)
    assert proc.returncode == 0, output + rest
    assert "[demo] stopped" in rest
    assert all(_closed(p) for p in ports)
    print(f"demo stop took {time.monotonic() - t0:.1f} s", file=sys.stderr)
