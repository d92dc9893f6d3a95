"""The caller's handle on a Dashboard session, and what a ``listen`` callback receives (no I/O).

Per-session routing lives in :mod:`.routing`; these are the plain values callers hold. Protocol notes:
docs/protocol/dashboard.md (§n).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from ...turns import ChangeRecord
from ...turns.events import Event

__all__ = ["Listener", "ListenerItem", "SessionRef"]

Listener = Callable[["ListenerItem"], Any]


@dataclass(eq=False)
class SessionRef:
    """A Dashboard session as the caller holds it: the live id for RPC and the stored id for REST (§5).

    The connection updates ``live_id`` in place when it re-resumes the session after a reconnect, so a ref
    stays valid for the life of the connection. Compare refs by identity or by ``stored_id``.
    """

    live_id: str
    stored_id: str
    title: str | None = None


@dataclass(frozen=True, slots=True)
class ListenerItem:
    """What a ``listen`` callback receives.

    ``kind == "event"``: ``event`` is one event of the session; ``turn_id``/``changes`` say which turn it was
    folded into (a submitted turn, or ``unsolicited-<n>`` for a turn nobody submitted here) and the
    change records it produced. ``kind == "connection"``: ``status`` is ``disconnected``, ``reconnecting``
    or ``reconnected``; ``retry_in`` is the wait before the next attempt and ``error`` the cause.
    """

    kind: Literal["event", "connection"]
    session: SessionRef | None = None
    event: Event | None = None
    turn_id: str | None = None
    changes: list[ChangeRecord] | None = None
    status: Literal["disconnected", "reconnecting", "reconnected"] | None = None
    retry_in: float | None = None
    error: BaseException | None = None

    @property
    def delay(self) -> float | None:
        """Alias of ``retry_in``."""
        return self.retry_in
