"""The code cells an agent proposed, by change id, so its ``preview`` tool previews exactly what it proposed.

Kept per session (an agent previews only its own proposals), the newest :data:`MAX_KEPT` per session.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

__all__ = ["MAX_KEPT", "PROPOSED", "ProposedSources"]

#: Proposals remembered per session.
MAX_KEPT = 50


class ProposedSources:
    """Session id -> change id -> the proposed source (code cells only)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_session: dict[str, OrderedDict[str, str]] = {}

    def remember(self, session_id: str, change_id: str, source: str) -> None:
        with self._lock:
            kept = self._by_session.setdefault(session_id, OrderedDict())
            kept[change_id] = source
            while len(kept) > MAX_KEPT:
                kept.popitem(last=False)

    def source(self, session_id: str, change_id: str) -> str | None:
        """The source ``session_id``'s agent proposed as ``change_id``, or None (not its own, or
        forgotten)."""
        with self._lock:
            kept = self._by_session.get(session_id)
            return None if kept is None else kept.get(change_id)


PROPOSED = ProposedSources()
