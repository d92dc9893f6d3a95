"""The newcomer path: the README's two commands, in either order, from a fresh clone with its own venvs.

Each test works in a git repository made from the tree as a clone would see it (tracked files plus untracked
ones that are not ignored, committed in the copy), with no venvs, no JS build output and no node_modules. The
copy's ``scripts/setup`` creates its own ``.venv`` / ``.venv-hermes`` (and ``scripts/test`` its own kernels):
nothing here reads or writes the project's environments, and no ``PYTHONPATH`` points back at this tree, so a
package that only imports from the repo root fails here. ``./demo --check`` runs one real prompt in a kernel
JupyterLab starts for the quickstart notebook.

Slow by nature (every venv is created from scratch): the durations are printed for the report.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from clones import clean_env, make_clone, project_envs_state, run_step

from hermes_notebook.demo import HERMES_INSTALLS

QUICK_TESTS = ["tests/test_formatting.py", "tests/test_settings.py", "-x", "-q"]


def run(clone: Path, argv: list[str], timeout: float) -> str:
    return run_step(argv, clone, clean_env(clone), timeout)


def git_status(clone: Path) -> str:
    return subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all"],
        cwd=clone,
        check=True,
        capture_output=True,
        text=True,
    ).stdout


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
        preflight = http.options(
            f"{api.group(1)}/v1/models",
            headers={
                "Origin": "https://evil.example",
                "Access-Control-Request-Method": "GET",
                "Access-Control-Request-Headers": "authorization",
            },
        )
        simple = http.get(f"{api.group(1)}/health", headers={"Origin": "https://evil.example"})
    for response in (preflight, simple):
        assert "access-control-allow-origin" not in response.headers, dict(response.headers)


def _stopped_output(proc: subprocess.Popen[str], timeout: float) -> str:
    """What the demo printed until it exited; if it is still running after ``timeout`` s, the test fails with
    its output, the processes it still has and every thread's stack (the demo dumps them on SIGUSR1)."""
    try:
        return proc.communicate(timeout=timeout)[0]
    except subprocess.TimeoutExpired:
        children = subprocess.run(
            ["ps", "-o", "pid,stat,etime,args", "--ppid", str(proc.pid)], capture_output=True, text=True
        ).stdout
        signals = [
            line
            for line in Path(f"/proc/{proc.pid}/status").read_text().splitlines()
            if line.startswith(("SigBlk", "SigIgn", "SigCgt", "SigPnd", "ShdPnd"))
        ]
        proc.send_signal(signal.SIGUSR1)
        time.sleep(2)
        # Its children first, while it still holds them (their PIDs cannot be reused yet): each leads its own
        # process group (start_new_session), so the group goes, with whatever it started.
        for pid in (int(line.split()[0]) for line in children.splitlines()[1:] if line.split()):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pid, signal.SIGKILL)
        proc.kill()
        output = proc.communicate(timeout=30)[0]
        pytest.fail(
            f"the demo was still running {timeout:.0f} s after Ctrl+C ({'; '.join(signals)}).\n"
            f"Its children (killed):\n{children}\n"
            f"Its output after Ctrl+C, with its threads' stacks:\n{output}"
        )


def check_demo_output(clone: Path, output: str) -> None:
    """``./demo --check`` verified Lab, both servers, the news setting, and a real prompt in a Lab kernel."""
    assert "SCRIPTED OFFLINE STAND-IN" in output
    newer = HERMES_INSTALLS["newer"][0].split("==")[1]  # the newer Hermes is the default
    assert f"check: Lab page ok, API Server ok {newer}, Dashboard version {newer}" in output
    assert "check: Lab will not ask about Jupyter news" in output
    kernel = re.search(
        r"check: a Lab kernel imported hermes_notebook from (\S+) and Hermes answered: (.*)", output
    )
    assert kernel is not None, output
    # The clone's own package (its venv's editable install), not this tree's.
    assert Path(kernel.group(1)).resolve() == (clone / "hermes_notebook" / "__init__.py").resolve()
    assert kernel.group(2).startswith("Hello from the scripted model"), kernel.group(2)
    ports = _ports(output)
    assert len(ports) == 3 and all(_closed(p) for p in ports)


def test_readmes_first_screen_shows_the_chat_and_a_pending_cell_edit() -> None:
    """In its first 25 lines (the first screen a newcomer reads), the README says what they will see and shows
    the chat and a cell edit waiting on Keep/Discard: both pictures exist, are real screenshots (PNGs wider
    than 600 px), and are the ones ``scripts/screenshots`` writes, so they can be refreshed."""
    import struct

    root = Path(__file__).resolve().parent.parent
    readme = (root / "README.md").read_text(encoding="utf-8")
    first_screen = "\n".join(readme.splitlines()[:25])
    assert "Keep" in first_screen and "Discard" in first_screen and "./demo" in first_screen
    script = (root / "scripts" / "screenshots.py").read_text(encoding="utf-8")
    for name in ("chat.png", "cell-edit.png"):
        assert f'src="docs/screenshots/{name}"' in first_screen, name
        assert f'"{name}"' in script, name  # scripts/screenshots writes it
        head = (root / "docs" / "screenshots" / name).read_bytes()[:24]
        assert head.startswith(b"\x89PNG\r\n\x1a\n") and struct.unpack(">I", head[16:20])[0] > 600, name


def test_kernel_setup_prints_no_warning() -> None:
    """``scripts/setup-kernels`` (``./scripts/test`` runs it before the browser tests) says nothing alarming:
    ipykernel's "The kernelspec may not be found" for the prefix the browser tests put on JUPYTER_PATH on
    purpose is dropped. Run where the kernels exist (``./scripts/test`` made them): it then only writes the
    kernelspecs again."""
    root = Path(__file__).resolve().parent.parent
    kernels = Path(os.environ.get("HN_KERNELS_DIR", root / ".venv-kernels"))
    if not all((kernels / name / "bin" / "python").is_file() for name in ("k629", "k74")):
        pytest.skip("the browser tests' kernels are not set up here (./scripts/test makes them)")
    done = subprocess.run(
        [str(root / "scripts" / "setup-kernels")], capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr
    assert "kernelspecs in" in done.stdout  # it ran to the end
    assert done.stderr == "", done.stderr


@pytest.fixture(scope="module")
def clones(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    base = tmp_path_factory.mktemp("fresh-clones")
    before = project_envs_state()
    yield base
    shutil.rmtree(base, ignore_errors=True)  # two sets of venvs: do not keep them around
    assert project_envs_state() == before, "a fresh-clone test installed into the project's own venvs"


@pytest.fixture(scope="module")
def demo_first(clones: Path) -> Path:
    """Clone A: ``./demo --check`` first (it creates the venvs), then the tests."""
    clone = make_clone(clones / "demo-first" / "clone")
    output = run(clone, ["./demo", "--check"], timeout=1200)
    check_demo_output(clone, output)
    assert git_status(clone) == "", "setup left the clone dirty"
    # The demo sets up the Hermes it starts only: the 0.19.0 venv waits for `./demo --hermes 0.19.0` (the
    # tests' own setup, next, makes it).
    assert not (clone / ".venv-hermes").exists(), "./demo built the 0.19.0 Hermes it does not use"
    return clone


def test_demo_check_then_tests(demo_first: Path) -> None:
    """README order: ``./demo --check`` on a fresh clone, then ``./scripts/test``; setup leaves git clean."""
    output = run(demo_first, ["./scripts/test", *QUICK_TESTS], timeout=900)
    assert re.search(r"\d+ passed", output), output[-3000:]
    assert git_status(demo_first) == ""


def test_tests_then_demo_check(clones: Path) -> None:
    """The other order: ``./scripts/test`` on a fresh clone, then ``./demo --check``."""
    clone = make_clone(clones / "tests-first" / "clone")
    output = run(clone, ["./scripts/test", *QUICK_TESTS], timeout=1500)
    assert re.search(r"\d+ passed", output), output[-3000:]
    assert git_status(clone) == "", "setup left the clone dirty"
    output = run(clone, ["./demo", "--check"], timeout=300)
    check_demo_output(clone, output)
    assert git_status(clone) == ""


def _use_the_notebooks_as_lab_does(output: str) -> None:
    """What a real run does to the notebooks, through Lab's own contents API: autosave a notebook with outputs
    in it, and write a file next to it (an export). Lab's root is the run's copy, not the clone's folder."""
    import httpx

    lab = re.search(
        r"JupyterLab\s+(http://127\.0\.0\.1:\d+)/lab/tree/quickstart\.ipynb\?token=([\w-]+)", output
    )
    assert lab, output
    base, params = lab.group(1), {"token": lab.group(2)}
    with httpx.Client(trust_env=False, timeout=30) as http:
        saved = http.get(f"{base}/api/contents/quickstart.ipynb", params=params)
        saved.raise_for_status()
        notebook = saved.json()["content"]
        notebook["cells"][1]["outputs"] = [{"output_type": "stream", "name": "stdout", "text": "ran\n"}]
        notebook["cells"][1]["execution_count"] = 1
        for path, body in (
            ("quickstart.ipynb", {"type": "notebook", "format": "json", "content": notebook}),
            ("sales-analysis.md", {"type": "file", "format": "text", "content": "# exported\n"}),
        ):
            http.put(f"{base}/api/contents/{path}", params=params, json=body).raise_for_status()


def test_demo_stops_everything_on_ctrl_c(demo_first: Path) -> None:
    """Run until ready, save a notebook and write a file as a real session does, press Ctrl+C (SIGINT): every
    process it started is gone, its ports are closed, and ``git status`` is clean (Lab opened copies). It is
    started with SIGINT ignored, as a background job of a non-interactive shell (a CI runner) is: Python keeps
    an inherited SIG_IGN, so the demo must take Ctrl+C back itself."""
    proc = subprocess.Popen(
        ["bash", "-c", "trap '' INT; exec ./demo --no-browser"],
        cwd=demo_first,
        env=clean_env(demo_first),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        stdin=subprocess.DEVNULL,
    )
    try:
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
        _use_the_notebooks_as_lab_does(output)
        t0 = time.monotonic()
        proc.send_signal(signal.SIGINT)
        rest = _stopped_output(proc, timeout=60)
        assert proc.returncode == 0, output + rest
        assert "[demo] stopped" in rest
        assert all(_closed(p) for p in ports)
        assert git_status(demo_first) == "", "a real ./demo run left the clone dirty"
        print(f"demo stop took {time.monotonic() - t0:.1f} s", file=sys.stderr)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
