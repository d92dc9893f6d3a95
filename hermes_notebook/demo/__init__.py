"""``python -m hermes_notebook.demo``: the quickstart without a clone of the repository.

For ``pip install "hermes-notebook[demo]"`` users. It finds a ``hermes`` (``$HERMES_BIN``, a clone's
``.venv-hermes``, then ``hermes`` on PATH) or creates a venv with hermes-agent 0.19.0 under the user cache dir,
copies the quickstart notebook shipped in this package to a folder of the user's (kept between runs, never
overwritten), and runs the same launcher as ``./demo``: a real Hermes with the scripted offline model, and
JupyterLab on the notebook.
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

__all__ = ["HERMES_VERSION", "demo_notebooks", "hermes_bin", "main", "packaged_notebook"]

#: The Hermes the scripted demo is written against.
HERMES_VERSION = "0.19.0"
_PACKAGED = Path(__file__).resolve().parent / "notebooks"
_REPO_NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
NOTEBOOKS = ("quickstart.ipynb",)


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


def hermes_bin() -> str:
    """A ``hermes`` to run: an existing one if there is one, else a venv made for the demo (once)."""
    from .._demo.local_hermes import HermesStartError, find_hermes_bin

    try:
        return find_hermes_bin()
    except HermesStartError:
        if os.environ.get("HERMES_BIN"):
            raise
    home = _user_dir("XDG_CACHE_HOME", ".cache") / f"hermes-agent-{HERMES_VERSION}"
    binary = home / "bin" / "hermes"
    if binary.is_file() and (home / ".complete").exists():
        return str(binary)
    say(f"no hermes found: creating {home} with hermes-agent=={HERMES_VERSION} (a few minutes, once)")
    shutil.rmtree(home, ignore_errors=True)
    venv.create(home, with_pip=True)
    # aiohttp: Hermes' API Server needs it but does not depend on it.
    subprocess.run(
        [str(home / "bin" / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
         f"hermes-agent=={HERMES_VERSION}", "aiohttp"],
        check=True,
    )
    (home / ".complete").touch()
    return str(binary)


def main(argv: Sequence[str] | None = None) -> int:
    """Find or install Hermes, put the quickstart in place, and run the demo launcher."""
    args = list(sys.argv[1:] if argv is None else argv)
    if importlib.util.find_spec("jupyterlab") is None:
        say('the demo opens JupyterLab, which is not installed: pip install "hermes-notebook[demo]"')
        return 2
    from .._demo.launcher import main as launch

    if "-h" not in args and "--help" not in args:
        os.environ["HERMES_BIN"] = hermes_bin()
        if not any(a == "--notebooks" or a.startswith("--notebooks=") for a in args):
            folder = _REPO_NOTEBOOKS if (_REPO_NOTEBOOKS / NOTEBOOKS[0]).is_file() else demo_notebooks()
            args += ["--notebooks", str(folder)]
    return launch(args)
