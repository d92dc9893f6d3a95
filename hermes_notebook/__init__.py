"""hermes-notebook: the Hermes Agent in Jupyter.

``%load_ext hermes_notebook`` registers the ``%hermes`` magics; ``hermes_notebook.connect()`` returns the
notebook facade. Heavy modules are imported lazily so ``import hermes_notebook`` stays cheap.
"""

from __future__ import annotations

import importlib
import sys
from typing import Any

from .cron import schedules

# ``hermes_notebook.schedules`` is public: keep ``import hermes_notebook.schedules`` working after the move.
sys.modules[__name__ + ".schedules"] = schedules

__version__ = "0.1.0"

__all__ = [
    "Chat",
    "Hermes",
    "Jobs",
    "Reply",
    "__version__",
    "connect",
    "fill",
    "load_ipython_extension",
    "raw",
    "resume",
    "schedules",
    "unload_ipython_extension",
]

_LAZY = {
    "connect": ".notebook",
    "Hermes": ".notebook",
    "Reply": ".notebook",
    "fill": ".notebook",
    "raw": ".notebook",
    "resume": ".notebook",
    "Chat": ".widgets",
    "Jobs": ".widgets",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name], __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


def load_ipython_extension(ipython: Any) -> None:
    """Register ``%hermes`` / ``%%hermes`` (called by ``%load_ext hermes_notebook``)."""
    from .notebook.magics import load_ipython_extension as _load

    _load(ipython)


def _jupyter_labextension_paths() -> list[dict[str, str]]:
    """Where the prebuilt JupyterLab / Notebook 7 extension sits in the package (``jupyter labextension
    develop`` links it into an environment; a wheel ships it as
    ``share/jupyter/labextensions/hermes-notebook``)."""
    return [{"src": "labextension", "dest": "hermes-notebook"}]


def unload_ipython_extension(ipython: Any) -> None:
    """Nothing to undo beyond IPython's own bookkeeping."""
