"""Pieces shared by the browser tests: the page-side checks, writing a notebook, each theme and width to look
at, and driving a blocking ``%hermes`` cell under Run All."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import nbformat

#: Longest wait for a turn (first agent build plus a model reply) in a browser test, in ms.
TURN_TIMEOUT_MS = 90_000

#: The extra kernelspecs scripts/setup-kernels registers: ipykernel 6.29.5 and 7.4.0.
KERNELS = ["hn-k629", "hn-k74"]

#: Starts Run All without awaiting it (the first cell blocks until the test clicks); progress in
# window.__hnRunAll.
JS_START_RUN_ALL = """({path}) => {
  const app = window.jupyterapp;
  const nb = [...app.shell.widgets('main')].find(w => w.context && w.context.path === path);
  app.shell.activateById(nb.id);
  window.__hnRunAll = 'running';
  app.commands.execute('notebook:run-all-cells').then(() => { window.__hnRunAll = 'done'; },
                                                      (e) => { window.__hnRunAll = 'error: ' + e; });
  return true;
}"""

#: True once the notebook at ``path`` is open in the page and its kernel connected and idle.
JS_KERNEL_READY = """(path) => {
  const app = window.jupyterapp; if (!app) return false;
  const nb = [...app.shell.widgets('main')].find(w => w.context && w.context.path === path);
  const k = nb && nb.sessionContext.session && nb.sessionContext.session.kernel;
  return !!(k && k.connectionStatus === 'connected' && k.status === 'idle');
}"""


def write_notebook(root: Path, name: str, cells: list[str], kernel: str = "python3") -> str:
    """Write a notebook whose metadata names the kernel (so the app never asks "Select Kernel")."""
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": kernel, "display_name": kernel, "language": "python"}
    nb.cells = [nbformat.v4.new_code_cell(src) for src in cells]
    nbformat.write(nb, root / name)
    return name


def in_each_look(nb: Any, look: Callable[[str, int], None], widths: tuple[int, ...] = (1400, 700)) -> None:
    """Call ``look(tag, width)`` with the page in JupyterLab Light and Dark ("light"/"dark") at each width,
    then put Light at 1280 px back (the theme is a user setting: later tests must not inherit dark)."""
    try:
        for theme, tag in (("JupyterLab Light", "light"), ("JupyterLab Dark", "dark")):
            nb.set_theme(theme)
            for width in widths:
                nb.page.set_viewport_size({"width": width, "height": 900})
                look(tag, width)
    finally:
        nb.set_theme("JupyterLab Light")
        nb.page.set_viewport_size({"width": 1280, "height": 900})
