"""The caller's handle on a Dashboard session, listener items, and per-session event routing.

Events carry no turn id (docs/protocol/dashboard.md §8.2), so :class:`_Session` routes each event of its session to
the oldest open turn, or to a turn nobody submitted here (§7 "Synthetic turns"), and hands it to listeners.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from ...errors import HermesError
from ...turns import ChangeRecord, TurnFolder
from ...turns.compression import BETWEEN_TURNS, compressions_of
from ...turns.events import Event
from .turn import Turn

if TYPE_CHECKING:
    from .core import DashboardCore

__all__ = ["Listener", "ListenerItem", "SessionRef"]

Listener = Callable[["ListenerItem"], Any]
_META_EVENTS = frozenset({"session.info", "session.title"})
_COUNTING_EVENTS = frozenset({"session.info", "message.complete"})  # their usage.compressions is authoritative


@dataclass(eq=False)
class SessionRef:
    """A Dashboard session as the caller holds it: the live id for RPC and the stored id for REST (§5).

    The connection updates ``live_id`` in place when it re-resumes the session after a reconnect, so a ref
    stays valid for the life of the connection. Compare refs by identity or by ``stored_id``.
    """

    live_id: str
    stored_id: str
    title: str | None = None
    _generation: int = field(default=0, repr=False)


@dataclass(frozen=True, slots=True)
class ListenerItem:
    """What a ``listen`` callback receives.

    ``kind == "event"``: ``event`` is one event of the session; ``turn_id``/``changes`` say which turn it was
    folded into (a submitted :class:`Turn`, or ``unsolicited-<n>`` for a turn nobody submitted here) and the
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


class _Session:
    """Routing state of one session on this connection: its open turns, in submit order (§8.2)."""

    __slots__ = (
        "buffer", "compressions", "core", "epoch", "last_seq", "listeners", "marker_note", "ref", "shown",
        "suspended", "turns", "unsolicited", "unsolicited_count",
    )

    def __init__(self, core: DashboardCore, ref: SessionRef) -> None:
        self.core = core
        self.ref = ref
        # Lossless reconnects (newer Dashboards): the last ``seq`` applied and the replay epoch it belongs to;
        # ``buffer`` holds live events while a catch-up (session.events.since) is in flight; ``suspended`` marks
        # open turns kept across a drop, waiting for that catch-up.
        self.last_seq = 0
        self.epoch: str | None = None
        self.buffer: list[tuple[int, Event]] | None = None
        self.suspended = False
        self.listeners: list[Listener] | None = None  # core.listeners[ref.stored_id], kept in sync by the core
        self.turns: deque[Turn] = deque()
        self.unsolicited: TurnFolder | None = None
        self.unsolicited_count = 0
        # Context compression between turns: the session's usage.compressions as last reported, the count the
        # conversation already shows (a marker, or the baseline), and the marker text of our own compress().
        self.compressions: int | None = None
        self.shown: int | None = None
        self.marker_note: str | None = None

    def feed(self, event: Event) -> None:
        """Route one event: the unsolicited turn in progress, else the oldest open turn, else listeners."""
        changes: list[ChangeRecord] | None = None
        turn_id: str | None = None
        folder = self.unsolicited
        if folder is not None:
            changes = folder.apply(event)
            turn_id = folder.turn_id
            if folder.done:
                self.unsolicited = None
        elif self.turns:
            turn = self.turns[0]
            changes = turn._apply(event)
            turn_id = turn.id
            if turn._done:
                self.turns.popleft()
        elif event.type == "message.start":  # a turn nobody submitted here (§7 "Synthetic turns")
            folder = self.open_unsolicited()
            changes = folder.apply(event)
            turn_id = folder.turn_id
        if event.type in _META_EVENTS:
            self.on_meta(event)
        if event.type in _COUNTING_EVENTS:
            self.count_compressions(event)
        listeners = self.listeners
        if listeners:
            self.core.deliver(listeners, ListenerItem("event", self.ref, event, turn_id, changes))

    def on_meta(self, event: Event) -> None:
        """session.title renames the ref; session.info may carry a rotated stored id (§5 "Two ids")."""
        payload = event.payload
        if event.type == "session.title":
            title = payload.get("title")
            if isinstance(title, str):
                self.ref.title = title
            return
        stored = payload.get("stored_session_id")
        if isinstance(stored, str) and stored and stored != self.ref.stored_id:
            # Auto-compression rotates the stored id: follow it, listeners included.
            core, old = self.core, self.ref.stored_id
            self.ref.stored_id = stored
            core.sessions[stored] = core.sessions.pop(old, self)
            if old in core.listeners:
                core.set_listeners(stored, core.listeners.pop(old) + core.listeners.get(stored, []))

    def count_compressions(self, event: Event) -> None:
        """Follow usage.compressions; a turn's own message.complete shows its compactions itself."""
        count = compressions_of(event.payload.get("usage"))
        if count is None:
            return
        self.compressions = count
        if self.shown is None or event.type == "message.complete":
            self.shown = count

    def note_compression(self, text: str, count: int | None) -> None:
        """Our own ``session.compress`` succeeded: the next turn opens with ``text`` as its marker."""
        self.marker_note = text
        if count is not None:
            self.compressions = count

    def open_marker(self, turn: Turn) -> None:
        """Start a new turn with a marker when the context was compressed since the previous one."""
        note, self.marker_note = self.marker_note, None
        grown = self.compressions is not None and self.shown is not None and self.compressions > self.shown
        if note is not None or grown:
            turn._push(turn._folder.add_marker(note or BETWEEN_TURNS))
        if self.compressions is not None:
            self.shown = self.compressions

    def open_unsolicited(self) -> TurnFolder:
        self.unsolicited_count += 1
        turn_id = f"unsolicited-{self.ref.stored_id}-{self.unsolicited_count}"
        self.unsolicited = TurnFolder(turn_id, transform_output=self.core.transform_output)
        return self.unsolicited

    def feed_seq(self, seq: int, event: Event) -> None:
        """Route an event that carries a ``seq``: duplicates (around a resume) are dropped, and events are held
        back while a catch-up is in flight."""
        if self.buffer is not None:
            self.buffer.append((seq, event))
        elif seq > self.last_seq:
            self.last_seq = seq
            self.feed(event)

    def end_turns(self, status: str, make_error: Callable[[], HermesError] | None, message: str | None) -> None:
        self.suspended = False
        turns, self.turns = self.turns, deque()
        for turn in turns:
            turn._end(status, make_error() if make_error else None, message)
        self.unsolicited = None

    def find_interaction(self, request_id: str) -> tuple[TurnFolder, Any, Turn | None] | None:
        """The pending interaction with that id in an open turn: ``(folder, interaction, turn)``."""
        for turn in self.turns:
            for inter in turn._folder.pending():
                if inter.request_id == request_id:
                    return turn._folder, inter, turn
        if self.unsolicited is not None:
            for inter in self.unsolicited.pending():
                if inter.request_id == request_id:
                    return self.unsolicited, inter, None
        return None
