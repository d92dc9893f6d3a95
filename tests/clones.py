"""Fresh clones for the newcomer-path tests: the tree as a clone would see it, and a new user's
environment."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def make_clone(dest: Path) -> Path:
    """A git repository holding what a clone of the current work would (committed there, so git status
    works)."""
    listing = (
        subprocess.run(
            ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
            cwd=ROOT,
            check=True,
            capture_output=True,
        )
        .stdout.decode()
        .split("\0")
    )
    for name in filter(None, listing):
        source, target = ROOT / name, dest / name
        if source.is_symlink():  # as git stores it: a tracked link to one machine's venv must show up here
            target.parent.mkdir(parents=True, exist_ok=True)
            target.symlink_to(os.readlink(source))
        elif source.is_file():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    git = ["git", "-c", "user.name=test", "-c", "user.email=test@localhost", "-c", "commit.gpgsign=false"]
    subprocess.run([*git, "init", "-q"], cwd=dest, check=True)
    subprocess.run([*git, "add", "-A"], cwd=dest, check=True)
    subprocess.run([*git, "commit", "-q", "-m", "clone"], cwd=dest, check=True)
    for absent in (
        ".venv",
        ".venv-hermes",
        ".venv-kernels",
        "js/node_modules",
        "hermes_notebook/static/chat.js",
    ):
        assert not os.path.lexists(dest / absent), (
            f"a fresh clone would hold {absent}"
        )  # lexists: a dangling link too
    return dest


def project_envs_state(root: Path = ROOT) -> dict[str, int]:
    """When each of the project's environments last had packages added or removed (site-packages mtimes).

    The fresh-clone tests compare it before and after: they must create their own venvs, never install into
    (or recreate) the project's, as the first demo test once did through ``HN_VENV``.
    """
    found = [
        *root.glob(".venv*/lib/python*/site-packages"),
        *root.glob(".venv-kernels/*/lib/python*/site-packages"),
    ]
    return {str(path.relative_to(root)): path.stat().st_mtime_ns for path in sorted(found)}


def uv() -> str | None:
    """The uv that scripts/setup put beside this interpreter (scripts/lib/venv.sh), or None (then: pip).

    The wheel test builds and installs with it: the same wheel, the same requirements from the same registry,
    in seconds from uv's cache instead of minutes of pip.
    """
    found = Path(sys.executable).parent / "uv"
    return str(found) if found.is_file() and os.access(found, os.X_OK) else None


def clean_env(clone: Path | None = None) -> dict[str, str]:
    """The environment of a new user's shell: nothing pointing at this tree or its venvs, no Hermes
    settings."""
    drop = ("PYTHONPATH", "VIRTUAL_ENV", "HERMES_", "HN_", "JUPYTER_", "PYTEST_")
    env = {k: v for k, v in os.environ.items() if not k.startswith(drop)}
    env["PATH"] = os.pathsep.join(
        p for p in env.get("PATH", "").split(os.pathsep) if not p.startswith(str(ROOT))
    )
    env["PYTHONUNBUFFERED"] = "1"
    return env


def _tail(text: str, limit: int = 4000) -> str:
    # pip on this kind of machine warns once per package about find-links folders that do not exist.
    kept = "\n".join(line for line in text.splitlines() if not line.startswith("WARNING: Location"))
    return kept[-limit:]


def run_step(argv: list[str], cwd: Path, env: dict[str, str], timeout: float) -> str:
    """Run one step like a user's shell would; print its duration; on failure show both streams' tails."""
    started = time.monotonic()
    done = subprocess.run(
        argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL
    )
    shown = " ".join(a if len(a) <= 60 else a[:57] + "..." for a in argv[:4]).replace(chr(10), " ")
    print(f"{shown} (in {cwd.name}): {time.monotonic() - started:.0f} s", file=sys.stderr)
    assert done.returncode == 0, (
        f"exit {done.returncode}\n--- stdout\n{_tail(done.stdout)}\n--- stderr\n{_tail(done.stderr)}"
    )
    return done.stdout
