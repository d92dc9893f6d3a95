"""Where the code runs: a Jupyter kernel (widgets possible), terminal IPython, or plain Python.

Looked up through ``sys.modules`` so importing this never imports IPython.
"""

from __future__ import annotations

import sys
from typing import Any, Literal

__all__ = ["environment", "ipython", "same_cell", "stdin_allowed"]


def ipython() -> Any:
    """The running IPython shell, or None (IPython not imported, or not running)."""
    ipython_module = sys.modules.get("IPython")
    if ipython_module is None:
        return None
    try:
        return ipython_module.get_ipython()
    except Exception:  # pragma: no cover - IPython half-initialised
        return None


def environment() -> Literal["kernel", "terminal", "plain"]:
    """Where we run: a Jupyter kernel (widgets possible), terminal IPython, or plain Python."""
    shell = ipython()
    if shell is None:
        return "plain"
    return "kernel" if getattr(shell, "kernel", None) is not None else "terminal"


def same_cell(count: int | None) -> bool:
    """True while the shell is still executing the cell numbered ``count``."""
    shell = ipython()
    return shell is not None and count is not None and getattr(shell, "execution_count", None) == count


def stdin_allowed() -> bool:
    """True when a text prompt can be answered here (the kernel's frontend allows stdin, or a real tty)."""
    shell = ipython()
    kernel = getattr(shell, "kernel", None) if shell is not None else None
    if kernel is not None:
        return bool(getattr(kernel, "_allow_stdin", False))
    try:
        return sys.stdin is not None and sys.stdin.isatty()
    except (AttributeError, ValueError):
        return False
