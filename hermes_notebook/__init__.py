"""hermes-notebook: the Hermes Agent in Jupyter.

``%load_ext hermes_notebook`` registers the ``%hermes`` magics; ``hermes_notebook.connect()`` returns the
notebook facade. Heavy modules are imported lazily so ``import hermes_notebook`` stays cheap.
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"

__all__ = ["__version__", "load_ipython_extension", "unload_ipython_extension"]


def load_ipython_extension(ipython: Any) -> None:
    """Register ``%hermes`` / ``%%hermes`` (called by ``%load_ext hermes_notebook``)."""
    from .magics import load_ipython_extension as _load

    _load(ipython)


def unload_ipython_extension(ipython: Any) -> None:
    """Nothing to undo beyond IPython's own bookkeeping."""
