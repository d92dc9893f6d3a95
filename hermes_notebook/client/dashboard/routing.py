"""Per-session event routing (no I/O): which turn an event of a session goes to, and what a resume catches up.

Events carry no turn id (docs/protocol/dashboard.md §8.2), so :class:`SessionState` routes each event of its
session to the oldest open turn, or to a turn nobody submitted here (§7 "Synthetic turns"), and hands it to
listeners. On a newer server it also drops events seen twice (``seq``) and fills the gap a drop left from the
server's replay ring (docs/protocol/dashboard-newer.md §4).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any, Protocol

from ...errors import HermesError, HermesGatewayClosedError
from ...turns import ChangeRecord, Interaction, TransformOutput, TurnFolder
from ...turns.compression import BETWEEN_TURNS, compressions_of
from ...turns.events import Event
from ...turns.usage import totals, with_turn
from .session import Listener, ListenerItem, SessionRef
from .turn_state import TurnState

__all__ = ["Router", "SessionState"]

_META_EVENTS = frozenset({"session.info", "session.title"})
_COUNTING_EVENTS = frozenset(
    {"session.info", "message.complete"}
)  # their usage.compressions is authoritative
#: Events whose usage is the session's running totals while no turn runs (a turn's own come as it ends).
_TOTALS_EVENTS = frozenset({"session.info", "session.usage"})
_from_frame = Event.from_dashboard_frame


class Router(Protocol):
    """What a session's routing needs from the core that owns it."""

    transform_output: TransformOutput | None
    #: The server's ``session.info`` says whether the session is ``running`` (seen at least once).
    reports_running: bool

    def deliver(self, listeners: list[Listener], item: ListenerItem) -> None:
        """Queue ``item`` for ``listeners``."""

    def rename(self, session: SessionState, old: str) -> None:
        """The session's stored id changed from ``old`` (auto-compression rotates it)."""


class SessionState:
    """Routing state of one session on this connection: its open turns, in submit order (§8.2)."""

    __slots__ = (
        "buffer",
        "compressions",
        "epoch",
        "generation",
        "held",
        "last_seq",
        "listeners",
        "marker_note",
        "ref",
        "router",
        "shown",
        "suspended",
        "totals",
        "turns",
        "unsolicited",
        "unsolicited_count",
    )

    def __init__(self, router: Router, ref: SessionRef, generation: int = 0) -> None:
        self.router = router
        self.ref = ref
        self.generation = (
            generation  # the socket it is bound on (the core counts sockets); -1: resume it again
        )
        # Lossless reconnects (newer Dashboards): the last ``seq`` applied and the replay epoch it belongs to;
        # ``buffer`` holds live events while a catch-up (session.events.since) is in flight; ``suspended``
        # marks open turns kept across a drop, waiting for that catch-up.
        self.last_seq = 0
        self.epoch: str | None = None
        self.buffer: list[tuple[int, Event]] | None = None
        self.suspended = False
        self.listeners: list[Listener] | None = (
            None  # core.listeners[ref.stored_id], kept in sync by the core
        )
        self.turns: deque[TurnState] = deque()
        self.unsolicited: TurnFolder | None = None
        self.unsolicited_count = 0
        # Context compression between turns: the session's usage.compressions as last reported, the count the
        # conversation already shows (a marker, or the baseline), and the marker text of our own compress().
        self.compressions: int | None = None
        self.shown: int | None = None
        self.marker_note: str | None = None
        # The session's running token totals before its next turn (None: unknown), so a turn's usage can carry
        # its own counts (turns/usage.py).
        self.totals: dict[str, int] | None = None
        # Hermes holds a session after a turn's message.complete until its session.info says running: false
        # (its post-turn work runs between; a prompt sent meanwhile is taken as busy): settling.py.
        self.held = False

    @property
    def idle(self) -> bool:
        """True when no turn of the session is open here (submitted or unsolicited)."""
        return not self.turns and self.unsolicited is None

    # --- routing (hot path)
    # -----------------------------------------------------------------------------------

    def started_here(self) -> None:
        """The session was created by this connection: it has used no tokens yet."""
        self.totals = dict.fromkeys(("input", "output", "reasoning", "calls"), 0)

    def _count_tokens(self, event: Event) -> Event:
        """Follow the running totals; a turn's end gets its own counts added to its usage."""
        usage = event.payload.get("usage")
        if event.type == "message.complete" and not self.idle:
            ended = replace(event, payload={**event.payload, "usage": with_turn(usage, self.totals)})
            self.totals = totals(usage)
            return ended
        if event.type in _TOTALS_EVENTS and self.idle and totals(usage) is not None:
            self.totals = totals(usage)
        return event

    def feed(self, event: Event) -> None:
        """Route one event: the unsolicited turn in progress, else the oldest open turn, else listeners."""
        if event.type == "message.complete" or event.type in _TOTALS_EVENTS:
            if event.type == "message.complete":
                self.held = True
            event = self._count_tokens(event)
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
            changes = turn.apply(event)
            turn_id = turn.id
            if turn.done:
                self.turns.popleft()
        elif event.type == "message.start":  # a turn nobody submitted here (§7 "Synthetic turns")
            folder = self.open_unsolicited()
            changes = folder.apply(event)
            turn_id = folder.turn_id
        if event.type in _META_EVENTS:
            self._on_meta(event)
        if event.type in _COUNTING_EVENTS:
            self._count_compressions(event)
        listeners = self.listeners
        if listeners:
            self.router.deliver(listeners, ListenerItem("event", self.ref, event, turn_id, changes))

    def feed_seq(self, seq: int, event: Event) -> None:
        """Route an event that carries a ``seq``: duplicates (around a resume) are dropped, and events are
        held back while a catch-up is in flight."""
        if self.buffer is not None:
            self.buffer.append((seq, event))
        elif seq > self.last_seq:
            self.last_seq = seq
            self.feed(event)

    def _on_meta(self, event: Event) -> None:
        """session.title renames the ref; session.info may carry a rotated stored id (§5 "Two ids") and
        whether the session is still running (a turn that ended is let go of with ``running: false``)."""
        payload = event.payload
        if event.type == "session.title":
            title = payload.get("title")
            if isinstance(title, str):
                self.ref.title = title
            return
        running = payload.get("running")
        if type(running) is bool:
            self.router.reports_running = True
            if not running:
                self.held = False
        stored = payload.get("stored_session_id")
        if isinstance(stored, str) and stored and stored != self.ref.stored_id:
            # Auto-compression rotates the stored id: follow it, listeners included.
            old, self.ref.stored_id = self.ref.stored_id, stored
            self.router.rename(self, old)

    def _count_compressions(self, event: Event) -> None:
        """Follow usage.compressions; a turn's own message.complete shows its compactions itself."""
        count = compressions_of(event.payload.get("usage"))
        if count is None:
            return
        self.compressions = count
        if self.shown is None or event.type == "message.complete":
            self.shown = count

    # --- turns
    # ------------------------------------------------------------------------------------------------

    def note_compression(self, text: str, count: int | None) -> None:
        """Our own ``session.compress`` succeeded: the next turn opens with ``text`` as its marker."""
        self.marker_note = text
        if count is not None:
            self.compressions = count

    def open_marker(self, turn: TurnState) -> None:
        """Start a new turn with a marker when the context was compressed since the previous one."""
        note, self.marker_note = self.marker_note, None
        grown = self.compressions is not None and self.shown is not None and self.compressions > self.shown
        if note is not None or grown:
            turn.add_marker(note or BETWEEN_TURNS)
        if self.compressions is not None:
            self.shown = self.compressions

    def open_unsolicited(self) -> TurnFolder:
        """A turn nobody submitted here: folded on its own, for listeners."""
        self.unsolicited_count += 1
        turn_id = f"unsolicited-{self.ref.stored_id}-{self.unsolicited_count}"
        self.unsolicited = TurnFolder(turn_id, transform_output=self.router.transform_output)
        return self.unsolicited

    def seed_inflight(self, inflight: Mapping[str, Any]) -> None:
        """A turn still running when we resumed: start its folder with the text so far.

        See docs/protocol/dashboard.md §5 (parked sessions) and docs/protocol/dashboard-newer.md §4.2.
        """
        folder = self.open_unsolicited()
        folder.apply(Event("message.start", {}, self.ref.live_id))
        text = inflight.get("assistant")
        if isinstance(text, str) and text:
            folder.apply(Event("message.delta", {"text": text}, self.ref.live_id))

    def drop(self, turn: TurnState) -> None:
        """A prompt the server refused, or dropped unstarted after our stop: its turn ends ``cancelled`` and
        takes no events."""
        if turn in self.turns:
            self.turns.remove(turn)
        turn.end("cancelled")

    def accept(self, turn: TurnState, status: object) -> None:
        """Apply the ``prompt.submit`` reply's status: streaming, queued (merged) or steered (§3.1, §7)."""
        turn.on_reply(status)
        if turn.done or turn not in self.turns:
            return
        if status == "queued":
            # One queue slot per session: a second busy submit is merged into the queued text (§3.1), so it
            # runs, and ends, with the turn queued before it.
            earlier = [t for t in self.turns if t is not turn and t.queued]
            if earlier:
                self.turns.remove(turn)
                turn.follow(earlier[-1])
        elif status in ("steered", "redirected"):
            # busy_input_mode=steer: the text joined the running turn; no turn of its own follows (§7).
            self.turns.remove(turn)
            if self.turns:
                turn.follow(self.turns[0])
            else:
                turn.end("complete")

    def interrupted(self) -> list[TurnState]:
        """``session.interrupt`` went out: queued turns end ``cancelled`` (the server drops them, §3.1);
        returns the turns not started yet, which the server may drop silently or lose the stop for (see
        ``early_stop``)."""
        unstarted: list[TurnState] = []
        for turn in list(self.turns):
            if turn.queued:
                self.turns.remove(turn)
                turn.end("cancelled")
            elif not turn.done:
                turn.stopping()
                if not turn.started:
                    unstarted.append(turn)
        return unstarted

    def end_turns(
        self, status: str, make_error: Callable[[], HermesError] | None, message: str | None
    ) -> None:
        """End every open turn (a drop, ``close()``, a deleted session)."""
        self.suspended = False
        turns, self.turns = self.turns, deque()
        for turn in turns:
            turn.end(status, make_error() if make_error else None, message)
        self.unsolicited = None

    def fail_turns(self, text: str) -> None:
        """End every open turn with a :class:`HermesGatewayClosedError` saying ``text``."""
        self.end_turns("error", lambda: HermesGatewayClosedError(text), text)

    # --- interactions
    # -----------------------------------------------------------------------------------------

    def find_interaction(self, request_id: str) -> tuple[Interaction, TurnState | None] | None:
        """The pending interaction with that id in an open turn, and that turn (None: the unsolicited one)."""
        for turn in self.turns:
            for inter in turn.pending():
                if inter.request_id == request_id:
                    return inter, turn
        if self.unsolicited is not None:
            for inter in self.unsolicited.pending():
                if inter.request_id == request_id:
                    return inter, None
        return None

    def oldest_approval(self) -> Interaction | None:
        """The oldest pending approval of the open turns: the one ``approval.respond`` resolves (§3.1,
        §8.6)."""
        return next((i for t in self.turns for i in t.pending() if i.kind == "approval"), None)

    def answer(self, request_id: str, response: str) -> bool:
        """Record an answer on the open turn holding that interaction; False when none holds it."""
        found = self.find_interaction(request_id)
        if found is None:
            return False
        turn = found[1]
        if turn is not None:
            turn.answer(request_id, response)
        elif self.unsolicited is not None:
            self.unsolicited.answer(request_id, response)
        return True

    # --- catching up after a drop (newer Dashboards)
    # -------------------------------------------------------------

    def settle(
        self, same_stream: bool, epoch: str | None, since: object = None, failure: HermesError | None = None
    ) -> Mapping[str, Any] | None:
        """Fill the event gap, or end kept turns (no I/O: ``since`` is the server's answer, if asked).

        Same epoch and live id: ``session.events.since`` replays what was emitted while we were away, so an
        open turn continues; a new epoch (the Dashboard restarted: its turns died with it) or a truncated ring
        ends the turns kept open with a clear message. Returns ``since`` when it filled the gap (its
        ``open_requests`` are the current ones), else None (the resume reply's are).
        """
        source: Mapping[str, Any] | None = None
        ended: str | None = None
        if same_stream:
            if failure is not None:
                ended = (
                    "The Dashboard connection dropped and the missed events could not be fetched "
                    f"({failure})."
                )
            buffered, self.buffer = self.buffer or [], None
            if isinstance(since, Mapping) and since.get("truncated"):
                ended = (
                    "The Dashboard connection dropped for so long that part of this turn was lost; "
                    "the session's history has the full reply."
                )
            if ended is None and isinstance(since, Mapping):
                source = since
                for params in since.get("events") or []:
                    event = (
                        _from_frame({"method": "event", "params": params})
                        if isinstance(params, dict)
                        else None
                    )
                    seq = params.get("seq") if isinstance(params, dict) else None
                    if event is not None and type(seq) is int:
                        self.feed_seq(seq, event)
                for seq, event in buffered:
                    self.feed_seq(seq, event)
        else:
            self.buffer = None
            if self.suspended:
                ended = (
                    "The Dashboard restarted while this turn was running, so the turn stopped there; "
                    "the session's history keeps what was said. Send the prompt again to continue."
                )
            if self.epoch != epoch:
                self.last_seq = 0
        if ended is not None:
            self.fail_turns(ended)
            self.last_seq = 0
        self.suspended = False
        self.epoch = epoch
        return source
