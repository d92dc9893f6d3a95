"""The read tools' handlers: ``list_variables``, ``describe``, ``read_cells``, ``read_output``.

Each reads through :mod:`.reading` (bounded summaries, no user code) and answers on the package loop itself:
a read is bounded and runs no user code, and a thread hop fewer is what keeps it fast beside a busy cell (each
hop waits for the GIL). Any failure is :data:`~.reading.READ_FAILED`, never a traceback in the running cell.
The read gate (reads on, or granted from a card) was checked before a handler runs (:mod:`.tools`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from . import reading
from .call import ToolCall
from .images import ToolAnswer

__all__ = ["describe", "list_variables", "read_cells", "read_output"]

log = logging.getLogger(__name__)


def _read(name: str, read: Callable[[], str | ToolAnswer]) -> ToolAnswer:
    try:
        return ToolAnswer.of(read())
    except Exception:  # a read never raises into the running cell's stderr (reading.py)
        log.debug("kernel read %s failed", name, exc_info=True)
        return ToolAnswer(reading.READ_FAILED)


def _hidden(call: ToolCall) -> Any:
    return getattr(call.shell, "user_ns_hidden", None)


async def list_variables(call: ToolCall) -> ToolAnswer:
    """The user's variables, one line each; first the cell running now, if one is."""
    running = call.outputs.running()
    return _read("list_variables", lambda: reading.list_variables(call.namespace, _hidden(call), running))


async def describe(call: ToolCall, name: str) -> ToolAnswer:
    """One variable's bounded summary (a plain name: looked up, never evaluated)."""
    return _read("describe", lambda: reading.describe(call.namespace, str(name or ""), _hidden(call)))


async def read_cells(call: ToolCall, cells: str) -> ToolAnswer:
    """The source of the cells ``cells`` names (``5``, ``3:6``, ``-3``)."""
    return _read("read_cells", lambda: reading.read_cells(call.namespace, str(cells or "")))


async def read_output(call: ToolCall, cell: int) -> ToolAnswer:
    """One cell's source, output, result and error (a running cell's output so far)."""
    try:
        number = int(cell or 0)
    except (TypeError, ValueError):
        return ToolAnswer("read_output takes a cell number.")
    return _read("read_output", lambda: reading.read_output(call.namespace, number, call.shell, call.outputs))
