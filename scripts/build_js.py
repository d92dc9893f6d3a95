"""The wheel's JS build step (hatch-jupyter-builder calls :func:`build`): ``npm ci``, then ``npm run build``,
which bundles the widgets into hermes_notebook/static/ and builds the prebuilt JupyterLab extension into
hermes_notebook/labextension/ (js/build-labextension.mjs).

Why not hatch-jupyter-builder's own ``npm_builder``: it runs ``npm install``, which may rewrite
``js/package-lock.json`` and leave a fresh clone dirty; ``npm ci`` installs exactly the committed lockfile.
An existing ``js/node_modules`` that is as new as the lockfile is kept (``npm ci`` would delete it).
The hook is skipped when the bundles already exist (``skip-if-exists`` in pyproject.toml), so installing
a built wheel or sdist needs no Node.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

JS = Path(__file__).resolve().parent.parent / "js"


def _npm(*args: str) -> None:
    npm = shutil.which("npm")
    if npm is None:
        raise RuntimeError("building hermes-notebook from source needs Node.js and npm (for js/)")
    print(f"build_js: npm {' '.join(args)}", flush=True)
    subprocess.run([npm, *args], cwd=JS, check=True)


def build(target_name: str, version: str, **_: Any) -> None:
    """Build js/ into hermes_notebook/static/ and hermes_notebook/labextension/ from the committed
    lockfile."""
    if os.environ.get("HATCH_JUPYTER_BUILDER_SKIP_NPM") == "1":
        return
    installed = JS / "node_modules" / ".package-lock.json"
    if not installed.exists() or installed.stat().st_mtime < (JS / "package-lock.json").stat().st_mtime:
        _npm("ci", "--no-audit", "--no-fund", "--loglevel=error")
    _npm("run", "build")
