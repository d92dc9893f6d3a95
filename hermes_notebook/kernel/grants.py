"""Who may read the kernel besides what ``share_kernel(read=...)`` says: the sessions a user allowed from a card.

Why its own owner: a grant is state the status must show and a new policy must clear. Before, a session allowed
from a Run card ("Don't run; allow reads for this session") kept reading after ``share_kernel(read=False)`` or
``%hermes --kernel ask`` while the status said reads were off. Every change goes through :meth:`ReadGrants.grant`
and :meth:`ReadGrants.revoke`; :meth:`ReadGrants.sessions` is what the status lists. Thread-safe: a grant is
made on the package loop, a read checks it there, a cell revokes it from the main thread.
"""

from __future__ import annotations

import threading

__all__ = ["ReadGrants"]


class ReadGrants:
    """The stored session ids allowed to use the read tools although reads are off (one owner; see the module)."""

    def __init__(self) -> None:
        self._sessions: dict[str, None] = {}  # insertion order: the status lists them as granted
        self._lock = threading.Lock()

    def grant(self, session_id: str) -> None:
        """Allow the read tools for ``session_id`` (the user chose "allow reads for this session" on a card)."""
        with self._lock:
            self._sessions[session_id] = None

    def revoke(self, session_id: str | None = None) -> list[str]:
        """Withdraw the grant of ``session_id``, or every grant when None; the session ids revoked."""
        with self._lock:
            if session_id is None:
                revoked, self._sessions = list(self._sessions), {}
                return revoked
            return [session_id] if self._sessions.pop(session_id, 0) is None else []

    def sessions(self) -> list[str]:
        """The granted session ids, oldest first."""
        with self._lock:
            return list(self._sessions)

    def allows(self, session_id: str) -> bool:
        """True when ``session_id`` was granted reads."""
        with self._lock:
            return session_id in self._sessions

    def __len__(self) -> int:
        with self._lock:
            return len(self._sessions)

    def __repr__(self) -> str:
        return f"<ReadGrants {len(self)} session(s)>"
