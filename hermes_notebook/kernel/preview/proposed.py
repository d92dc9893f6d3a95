"""The code cells an agent proposed, by change id, so its ``preview`` tool previews exactly what it proposed
and names it as the chat does (the proposed new cell at index 1), never by its id.

Kept per session (an agent previews only its own proposals), the newest :data:`MAX_KEPT` per session.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import NamedTuple

__all__ = ["MAX_KEPT", "PROPOSED", "Proposal", "ProposedSources", "proposal_words"]

#: Proposals remembered per session.
MAX_KEPT = 50


def proposal_words(kind: str, index: int) -> str:
    """A proposed code cell in the chat's words (the cell-change line says "Proposed a new code cell at index
    1"), counted as the agent's cell tools count."""
    return (
        f"the proposed new cell at index {index}"
        if kind == "insert"
        else f"the proposed edit of cell {index}"
    )


class Proposal(NamedTuple):
    """One proposed code cell: its source, and what it is in the user's words."""

    source: str
    words: str


class ProposedSources:
    """Session id -> change id -> the proposed code cell."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_session: dict[str, OrderedDict[str, Proposal]] = {}

    def remember(
        self, session_id: str, change_id: str, source: str, words: str = "your proposed cell"
    ) -> None:
        with self._lock:
            kept = self._by_session.setdefault(session_id, OrderedDict())
            kept[change_id] = Proposal(source, words)
            while len(kept) > MAX_KEPT:
                kept.popitem(last=False)

    def proposal(self, session_id: str, change_id: str) -> Proposal | None:
        """What ``session_id``'s agent proposed as ``change_id``, or None (not its own, or forgotten)."""
        with self._lock:
            kept = self._by_session.get(session_id)
            return None if kept is None else kept.get(change_id)

    def source(self, session_id: str, change_id: str) -> str | None:
        """The source ``session_id``'s agent proposed as ``change_id``, or None (not its own, or
        forgotten)."""
        found = self.proposal(session_id, change_id)
        return None if found is None else found.source


PROPOSED = ProposedSources()
