"""The agent's last approved run (``run_code``, ``run_cell``, ``run_cells``), kept undoable: its savepoint
taken right before it runs and its offer (or the reason there is none) right after, on the kernel's main
thread, as the run itself (a run of notebook cells: from IPython's cell events, :mod:`.cell_hooks`).

Why one owner: an offer holds pickles of the user's variables (up to :data:`.savepoint.UNDO_BYTES`), so only
the last run's is kept; a later approved run replaces it, and a done Undo drops it. The tool's answer says
whether Undo is offered and why not, so the agent and the tool part in the chat both show it; :meth:`undo` is
what a click (or the user's own cell) calls, on the main thread, between cells.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from ...turns.changes import RunUndoDict
from ..execute import run_code
from ..images import ToolAnswer
from .savepoint import Savepoint, UndoOffer

__all__ = ["LAST_RUN", "NOTHING_TO_UNDO", "REPLACED", "LastRunUndo", "card_line", "offer_line"]

T = TypeVar("T")

#: What :meth:`LastRunUndo.undo` says before any approved run, or after its Undo was done.
NOTHING_TO_UNDO = "There is no approved run of the agent's to undo."
#: What Undo on an older run's card says.
REPLACED = "Undo refused: a later approved run replaced this run's savepoint; nothing was restored."


def _what(offer: UndoOffer, restores: str) -> str:
    """``restores df and deletes a, b`` (``restores``: the verb for the changed names)."""
    parts = [
        f"{restores} {', '.join(offer.changed)}" if offer.changed else "",
        f"deletes {', '.join(offer.created)}" if offer.created else "",
    ]
    return " and ".join(part for part in parts if part) or "changes no variable"


def offer_line(offer: UndoOffer) -> str:
    """One line for the run's answer: what Undo would restore and delete, or why it is not offered."""
    if not offer.offered:
        return offer.reason
    return (
        f"Undo variables is offered to the user: it {_what(offer, 'restores')} (files and other effects are "
        "not undone)."
    )


def card_line(offer: UndoOffer) -> str:
    """The same for the user, beside the card's Undo variables button (or why there is none)."""
    if not offer.offered:
        return offer.reason
    said = _what(offer, "puts back")
    return f"{said[0].upper()}{said[1:]}, as before this run. Files and other effects are not undone."


class LastRunUndo:
    """The last approved run's :class:`~.savepoint.UndoOffer` (see the module docstring)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._offer: UndoOffer | None = None
        self._point: Savepoint | None = None
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

    def begin(self, namespace: Mapping[str, Any], code: str | Sequence[str], shell: Any = None) -> int:
        """Take the savepoint of an approved run of ``code`` (a run of cells: each cell's source) right
        before it runs, on the main thread; the run's number. The previous run's pickles go now."""
        hidden = getattr(shell, "user_ns_hidden", None)
        with self._lock:
            self._offer, self._line, self._point = None, NOTHING_TO_UNDO, None
            self._run = run = next(self._ids)
        point = Savepoint.take(namespace, code, hidden)
        with self._lock:
            if self._run == run:
                self._point = point
        return run

    def settle(self, run: int, namespace: Mapping[str, Any]) -> tuple[RunUndoDict, str] | None:
        """After run ``run`` (or after each of its cells: the last call counts), on the main thread: its offer
        for the card and the line for the agent (:func:`card_line`, :func:`offer_line`); None when a later
        run replaced it."""
        with self._lock:
            point = self._point if self._run == run else None
        if point is None:
            return None
        offer = point.after(namespace)
        line = offer_line(offer)
        with self._lock:
            if self._run != run:
                return None
            self._offer, self._line = (offer if offer.offered else None), line
        return {"run": run, "offered": offer.offered, "text": card_line(offer)}, line

    def resume(self, run: int, namespace: Mapping[str, Any]) -> tuple[RunUndoDict, str] | None:
        """Before a later cell of run ``run`` (a run of cells), on the main thread: withdrawn (the card's and
        the agent's reason) when a name its cells name changed since its last cell ended (another cell ran
        between them: restoring it would undo that cell too); None when the offer stands."""
        with self._lock:
            point = self._point if self._run == run else None
        touched = point.touched_since(namespace) if point is not None and point.last else []
        if not touched:
            return None
        return self.withdraw(
            run,
            f"Undo is not offered: {', '.join(touched)} changed between the run's cells (another cell ran "
            "then), so undoing would undo that cell too.",
        )

    def withdraw(self, run: int, reason: str) -> tuple[RunUndoDict, str] | None:
        """Run ``run`` cannot be undone honestly after all (``reason``: one line, ``Undo is not offered:
        ...``): its offer goes, and the card and the agent get the reason; None when a later run replaced
        it."""
        with self._lock:
            if self._run != run:
                return None
            self._offer, self._line, self._point = None, reason, None
        return {"run": run, "offered": False, "text": reason}, reason

    def guard(
        self,
        namespace: dict[str, Any],
        code: str,
        shell: Any,
        work: Callable[[], T],
        on_offer: Callable[[RunUndoDict], object] = lambda _card: None,
    ) -> T:
        """Run ``work`` (the approved run of ``code``) between a savepoint and its offer, which goes to
        ``on_offer``. Call it on the main thread, as the run."""
        run = self.begin(namespace, code, shell)
        try:
            return work()
        finally:
            settled = self.settle(run, namespace)
            if settled is not None:
                on_offer(settled[0])

    def run(
        self,
        namespace: dict[str, Any],
        code: str,
        shell: Any = None,
        on_offer: Callable[[RunUndoDict], object] = lambda _card: None,
    ) -> ToolAnswer:
        """Run approved ``code`` (:func:`..execute.run_code`) in :meth:`guard`; the answer ends with
        :func:`offer_line`, and ``on_offer`` gets the card's view of it (offered, or why not)."""
        answer = self.guard(namespace, code, shell, lambda: run_code(namespace, code, shell), on_offer)
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
                    self._offer, self._line, self._point = None, NOTHING_TO_UNDO, None
        return said


#: The kernel's one record of the last approved run.
LAST_RUN = LastRunUndo()
