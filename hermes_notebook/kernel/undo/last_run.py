"""The agent's last approved ``run_code`` run, kept undoable: its savepoint taken right before it runs and its
offer (or the reason there is none) right after, on the kernel's main thread, as the run itself.

Why one owner: an offer holds pickles of the user's variables (up to :data:`.savepoint.UNDO_BYTES`), so only
the last run's is kept; a later approved run replaces it, and a done Undo drops it. The tool's answer says
whether Undo is offered and why not, so the agent and the tool part in the chat both show it; :meth:`undo` is
what a click (or the user's own cell) calls, on the main thread, between cells.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable
from typing import Any

from ...turns.changes import RunUndoDict
from ..execute import run_code
from ..images import ToolAnswer
from .savepoint import Savepoint, UndoOffer

__all__ = ["LAST_RUN", "NOTHING_TO_UNDO", "REPLACED", "LastRunUndo", "offer_line"]

#: What :meth:`LastRunUndo.undo` says before any approved run, or after its Undo was done.
NOTHING_TO_UNDO = "There is no approved run of the agent's to undo."
#: What Undo on an older run's card says.
REPLACED = "Undo refused: a later approved run replaced this run's savepoint; nothing was restored."


def offer_line(offer: UndoOffer) -> str:
    """One line for the run's answer: what Undo would restore and delete, or why it is not offered."""
    if not offer.offered:
        return offer.reason
    parts = [
        f"restores {', '.join(offer.changed)}" if offer.changed else "",
        f"deletes {', '.join(offer.created)}" if offer.created else "",
    ]
    said = " and ".join(part for part in parts if part) or "changes no variable"
    return f"Undo variables is offered to the user: it {said} (files and other effects are not undone)."


class LastRunUndo:
    """The last approved run's :class:`~.savepoint.UndoOffer` (see the module docstring)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._offer: UndoOffer | None = None
        self._line = NOTHING_TO_UNDO
        self._run = 0
        self._ids = itertools.count(1)

    @property
    def offered(self) -> bool:
        """True while the last approved run can be undone."""
        with self._lock:
            return self._offer is not None

    @property
    def line(self) -> str:
        """What the last run's answer said of Undo: what it would do, or why it is not offered."""
        with self._lock:
            return self._line

    def run(
        self,
        namespace: dict[str, Any],
        code: str,
        shell: Any = None,
        on_offer: Callable[[RunUndoDict], object] = lambda _card: None,
    ) -> ToolAnswer:
        """Run approved ``code`` (:func:`..execute.run_code`) between a savepoint and its offer; the answer
        ends with :func:`offer_line`, and ``on_offer`` gets the card's view of it (offered, or why not). Call
        it on the main thread, as the run."""
        hidden = getattr(shell, "user_ns_hidden", None)
        with self._lock:
            self._offer, self._line = None, NOTHING_TO_UNDO  # the previous run's pickles go now
            self._run = run = next(self._ids)
        point = Savepoint.take(namespace, code, hidden)
        try:
            answer = run_code(namespace, code, shell)
        finally:
            offer = point.after(namespace)
            line = offer_line(offer)
            with self._lock:
                self._offer, self._line = (offer if offer.offered else None), line
            on_offer({"run": run, "offered": offer.offered, "text": line})
        return ToolAnswer(f"{answer.text}\n\n{self.line}", answer.images)

    def undo(self, namespace: dict[str, Any], run: int | None = None) -> str:
        """Undo the last approved run's variables (on the main thread, between cells): what was done, or why
        not (not offered, a later run replaced it, or a name changed after the run: then nothing changes).
        ``run``: the run a card offered Undo for (None: the last one)."""
        with self._lock:
            offer, line = self._offer, self._line
            if run is not None and run != self._run:
                return REPLACED
        if offer is None:
            return line
        said = offer.undo(namespace)
        if said.startswith("Undone"):
            with self._lock:
                if self._offer is offer:
                    self._offer, self._line = None, NOTHING_TO_UNDO
        return said


#: The kernel's one record of the last approved run.
LAST_RUN = LastRunUndo()
