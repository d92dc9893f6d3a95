"""The anywidget views: ``Chat``, ``TurnView`` (the ``%hermes`` live turn) and ``Jobs``.

``Chat`` is imported eagerly; the others load on first use so a missing or broken optional view never
breaks ``from hermes_notebook.widgets import Chat``.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

from .chat import Chat

__all__ = ["Chat", "Jobs", "TurnView"]

_LAZY = {"TurnView": ".turn", "Jobs": ".jobs"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(import_module(_LAZY[name], __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
