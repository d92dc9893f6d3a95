"""A clone holds only the project: no environments, build output, machine-specific links or merge leftovers.

Fast guards for what ``tests/test_demo.py`` checks slowly from fresh clones (``git status`` clean after
setup): a tracked ``.venv-hermes`` symlink to a path on one machine once made every clone dirty, ``.venv/`` in
``.gitignore`` does not ignore a symlinked venv, and a lockfile out of step with ``package.json`` makes
``npm ci`` (the build's JS step) refuse to install.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from clones import ROOT

# What scripts/setup, scripts/test and the JS build create in a clone.
SETUP_OUTPUTS = (".venv", ".venv-hermes", ".venv-hermes-newer", ".venv-kernels", "js/node_modules")
BUILD_OUTPUTS = (
    "hermes_notebook/static/chat.js",
    "hermes_notebook/static/jobs.js",
    "hermes_notebook/static/chat.css",
)
LEFTOVER_SUFFIXES = (".orig", ".rej", ".bak", ".swp", "~")


def _git(*args: str, cwd: Path = ROOT) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


def _tracked() -> list[tuple[str, str]]:
    """(mode, path) of every tracked file."""
    rows = _git("ls-files", "--stage", "-z").split("\0")
    return [(row.split(" ", 1)[0], row.split("\t", 1)[1]) for row in rows if row]


def test_no_environment_build_output_or_leftover_is_tracked() -> None:
    """Nothing setup or a build makes is in git, nor a merge/editor leftover (it would ship in the wheel)."""
    offenders = [
        path
        for _, path in _tracked()
        if any(path == out or path.startswith(out + "/") for out in (*SETUP_OUTPUTS, *BUILD_OUTPUTS))
        or "/node_modules/" in f"/{path}"
        or path.endswith(LEFTOVER_SUFFIXES)
    ]
    assert offenders == []


def test_no_tracked_symlink_leaves_the_tree() -> None:
    """A tracked symlink to an absolute path or outside the repository is one machine's layout, not the
    project's."""
    offenders = []
    for mode, path in _tracked():
        if mode != "120000":
            continue
        target = _git("cat-file", "blob", f":{path}")
        if os.path.isabs(target) or not (ROOT / path).parent.joinpath(target).resolve().is_relative_to(ROOT):
            offenders.append(f"{path} -> {target}")
    assert offenders == []


def test_setup_outputs_are_ignored_as_directories_and_as_symlinks(tmp_path: Path) -> None:
    """With the project's .gitignore, each setup output is ignored whether it is a venv or a link to a shared
    one."""
    repo = tmp_path / "repo"
    shared = tmp_path / "shared"
    for name in SETUP_OUTPUTS:
        (shared / name / "bin").mkdir(parents=True)
    for kind in ("directory", "symlink"):
        if repo.exists():
            subprocess.run(["rm", "-rf", str(repo)], check=True)
        repo.mkdir()
        _git("init", "-q", cwd=repo)
        (repo / ".gitignore").write_text((ROOT / ".gitignore").read_text())
        for name in SETUP_OUTPUTS:
            (repo / name).parent.mkdir(parents=True, exist_ok=True)
            if kind == "directory":
                (repo / name / "bin").mkdir(parents=True)
                (repo / name / "bin" / "python").write_text("")
            else:
                (repo / name).symlink_to(shared / name, target_is_directory=True)
        for name in BUILD_OUTPUTS:
            (repo / name).parent.mkdir(parents=True, exist_ok=True)
            (repo / name).write_text("")
        status = _git("status", "--porcelain", "--untracked-files=all", "--", ".", ":!.gitignore", cwd=repo)
        assert status == "", f"{kind}s not ignored:\n{status}"


def test_js_lockfile_in_step_with_package_json() -> None:
    """``npm ci`` installs only when the lockfile records package.json's exact dependency ranges."""
    package = json.loads((ROOT / "js" / "package.json").read_text())
    lock = json.loads((ROOT / "js" / "package-lock.json").read_text())
    root = lock["packages"][""]
    for field in ("dependencies", "devDependencies", "optionalDependencies", "peerDependencies"):
        assert root.get(field, {}) == package.get(field, {}), field
    assert (lock["name"], lock["version"]) == (package["name"], package["version"])
    missing = [
        name
        for field in ("dependencies", "devDependencies")
        for name in package.get(field, {})
        if f"node_modules/{name}" not in lock["packages"]
    ]
    assert missing == []
