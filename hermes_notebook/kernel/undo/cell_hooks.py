"""Undo variables for an approved run of notebook cells (``run_cell``, ``run_cells``): the notebook runs them
as if the user did, so the savepoint is taken from IPython's own cell events, on the main thread.

Why hooks: the page runs each cell (its outputs show there); the tool only waits for the page's reply. So
right before the first of the run's cells starts (``pre_run_cell`` naming its cell id and exactly the source
the card showed), :data:`~.last_run.LAST_RUN` saves what any of the run's cells names; after each of them
(``post_run_cell``) the offer is worked out again, so it covers the cells that ran (the first error stops
the run). Any other cell (the user's, before or between) is not the run's: it neither takes nor settles the
savepoint, and Undo later refuses where such a cell changed the names since.

A run stopped part way (Stop, the time limit, an error) is settled by the last of its cells that ran, the
interrupted one included, so Undo covers exactly what they changed. Where the run ends while one of its cells
still runs (Stop could not interrupt it), what that cell changes afterwards is never seen: Undo is withdrawn
with :data:`STILL_RUNNING` rather than offered for a state the cell goes on changing. Where another cell (the
user's, queued while the run ran) changed the run's names between its cells, it is withdrawn too
(:meth:`~.last_run.LastRunUndo.resume`): restoring them would undo that cell as well. A withdrawal is final.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

from ...turns.changes import RunUndoDict
from .last_run import LAST_RUN, LastRunUndo

__all__ = ["STILL_RUNNING", "CellRunUndo"]

#: Why Undo is not offered for a run that ended while one of its cells still ran.
STILL_RUNNING = (
    "Undo is not offered: one of the run's cells was still running when the run ended, so what it changes "
    "from then on cannot be undone."
)


class CellRunUndo:
    """The savepoint and offer of one approved run of ``cells`` (``(cell id, source)`` in run order):
    :meth:`arm` before asking the page to run them, :meth:`disarm` once it answered."""

    def __init__(
        self,
        cells: Sequence[tuple[str, str]],
        namespace: dict[str, Any],
        shell: Any,
        last_run: LastRunUndo = LAST_RUN,
    ) -> None:
        self._sources = dict(cells)
        self._namespace, self._shell, self._last_run = namespace, shell, last_run
        self._lock = threading.Lock()
        self._run: int | None = None
        self._running = False  # one of the run's cells started and has not ended yet
        self._withdrawn = False  # Undo cannot be honest for this run any more (see the module docstring)
        self._settled: tuple[RunUndoDict, str] | None = None

    def arm(self) -> None:
        """Follow the shell's cells from now on (no shell: nothing is saved and nothing is offered)."""
        if self._shell is not None:
            self._shell.events.register("pre_run_cell", self._started)
            self._shell.events.register("post_run_cell", self._ended)

    def disarm(self) -> tuple[RunUndoDict, str] | None:
        """Stop following; the run's Undo for the card and the line for the agent (None: none of its cells
        ran here). Withdrawn (:data:`STILL_RUNNING`) when one of its cells still runs."""
        if self._shell is not None:
            for event, hook in (("pre_run_cell", self._started), ("post_run_cell", self._ended)):
                try:
                    self._shell.events.unregister(event, hook)
                except ValueError:  # already gone
                    pass
        with self._lock:  # a hook running now on the main thread holds it: its cell's end counts
            if self._running and self._run is not None and not self._withdrawn:
                self._running, self._withdrawn = False, True
                self._settled = self._last_run.withdraw(self._run, STILL_RUNNING)
            return self._settled

    def _ours(self, info: Any) -> bool:
        cell_id = getattr(info, "cell_id", None)
        return isinstance(cell_id, str) and self._sources.get(cell_id) == getattr(info, "raw_cell", None)

    def _started(self, info: Any = None) -> None:
        if not self._ours(info):
            return
        with self._lock:  # held while the savepoint is taken: :meth:`disarm` then sees the cell running
            if self._run is None:
                self._run = self._last_run.begin(self._namespace, list(self._sources.values()), self._shell)
            elif not self._withdrawn:
                withdrawn = self._last_run.resume(self._run, self._namespace)
                if withdrawn is not None:
                    self._settled, self._withdrawn = withdrawn, True
            self._running = True

    def _ended(self, result: Any = None) -> None:
        with self._lock:  # held while settling, so a withdrawal in :meth:`disarm` comes before or after it
            if self._run is None or not self._running or not self._ours(getattr(result, "info", None)):
                return
            self._running = False
            if not self._withdrawn:
                self._settled = self._last_run.settle(self._run, self._namespace)
