"""The producer side of one submitted turn: what the core drives as its session's events arrive (no I/O).

The caller holds a :class:`~.turn.Turn` handle on it (awaiting, iterating, stopping); the core routes events
here through :meth:`TurnState.apply` and ends the turn through :meth:`TurnState.end`. Everything on the
per-delta path is O(1): records go to a list, and one shared waiter (an asyncio future the handle made, seen
here only as :class:`Waiter`) wakes whoever iterates.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, TypeVar, cast

from ...errors import HermesError, HermesRunError
from ...turns import ChangeRecord, Interaction, Message, TurnFolder, user_message
from ...turns.cell_links import link_cell_change, link_run_undo, link_sent_images, name_call
from ...turns.changes import CellChangeDict, RunUndoDict, SentImageDict
from ...turns.events import DASHBOARD_TURN_EVENT_TYPES, Event
from .session import SessionRef

__all__ = ["TurnState", "Waiter"]

W = TypeVar("W", bound="Waiter")


class Waiter(Protocol):
    """What wakes a waiting consumer: an ``asyncio.Future`` fits, and the core need not know asyncio."""

    def done(self) -> bool: ...

    def set_result(self, result: None, /) -> None: ...


class TurnState:
    """One turn's folder, status and records, and whether (and how) it ended.

    ``phase`` is ``submitting`` until the server answers, then ``queued``, ``streaming`` or ``steered``
    (docs/protocol/dashboard.md §3.1 ``prompt.submit``); :attr:`status` is the final message status once
    ``done``. ``started`` means its first turn event arrived; ``stop_sent`` that ``session.interrupt`` went
    out for it.
    """

    __slots__ = (
        "_asked",
        "_folder",
        "_followers",
        "_waiter",
        "done",
        "error",
        "id",
        "phase",
        "records",
        "ref",
        "started",
        "stop_sent",
        "text",
    )

    def __init__(self, ref: SessionRef, turn_id: str, text: str, folder: TurnFolder) -> None:
        self.ref = ref
        self.id = turn_id
        self.text = text
        self._folder = folder
        self.phase = "submitting"
        self.started = False
        self.stop_sent = False
        self.done = False
        self.error: HermesError | None = None
        self._waiter: Waiter | None = None
        self._followers: list[TurnState] = []
        self._asked: dict[
            str, str | None
        ] = {}  # our own questions (a kernel tool's Run/Deny) -> their answer
        self.records: list[ChangeRecord] = [
            {"op": "message", "message": user_message(turn_id, text).to_dict()}
        ]
        self.records.extend(folder.begin("streaming"))

    # --- what the handle reads
    # --------------------------------------------------------------------------------

    @property
    def message(self) -> Message:
        """The assistant message so far (a snapshot)."""
        return self._folder.message

    @property
    def status(self) -> str:
        """``phase`` until the turn ends, then the message status."""
        return self._folder.message.status if self.done else self.phase

    @property
    def queued(self) -> bool:
        """True while the server holds the prompt for after the running turn (and it has not started)."""
        return self.phase == "queued" and not self.started

    def pending(self) -> list[Interaction]:
        """The interactions of this turn waiting for an answer, oldest first."""
        return self._folder.pending()

    def wait(self, make: Callable[[], W]) -> W:
        """The waiter the next change (or the end) resolves; ``make`` creates it when none is waiting yet (the
        one handle of a turn makes them all, so a waiting one is of its kind)."""
        waiter = self._waiter
        if waiter is None:
            waiter = self._waiter = make()
        return cast(W, waiter)

    def result(self) -> Message:
        """The final message of a turn that is ``done``; raises what ended it (a drop, or an ``error``
        status)."""
        if self.error is not None:
            raise self.error
        message = self._folder.message
        if message.status == "error":
            raise HermesRunError(
                f"the turn ended with an error: {message.error or 'no details'}",
                status="error",
                run_id=self.id,
            )
        return message

    # --- what the core drives
    # ---------------------------------------------------------------------------------

    def push(self, changes: list[ChangeRecord]) -> None:
        """Add records made outside :meth:`apply` (a marker, an answer) and wake the consumer."""
        self.records.extend(changes)
        waiter = self._waiter
        if waiter is not None:
            self._waiter = None
            if not waiter.done():
                waiter.set_result(None)

    def apply(self, event: Event) -> list[ChangeRecord]:
        """Fold one event of this session; the caller pops the turn once :attr:`done`."""
        if not self.started and self.stop_sent and event.type == "error":
            # A newer server's word for a turn stopped before its agent was ready: ours, not a failure.
            self.end("cancelled")
            return []
        if not self.started and event.type in DASHBOARD_TURN_EVENT_TYPES:
            self.started = True
            self.phase = "streaming"
        folder = self._folder
        changes = folder.apply(event)
        if changes:  # push(), inlined: this runs once per delta
            self.records.extend(changes)
            waiter = self._waiter
            if waiter is not None:
                self._waiter = None
                if not waiter.done():
                    waiter.set_result(None)
        if self._followers:
            for follower in self._followers:
                follower.apply(event)
        if folder.done:
            self._settle()
        return changes

    def add_marker(self, text: str) -> None:
        """Add a marker part: a compression since the previous turn (opening it), or a notice of our own."""
        self.push(self._folder.add_marker(text))

    def answer(self, request_id: str, response: str) -> list[ChangeRecord]:
        """Record the answer to one of its interactions (sudo/secret values redacted by the model)."""
        changes = self._folder.answer(request_id, response)
        if changes:
            self.push(changes)
        return changes

    def ask(self, part_id: str, interaction: Interaction) -> bool:
        """Show a question of our own on running tool part ``part_id``; False when that tool is not
        running."""
        changes = self._folder.ask(part_id, interaction)
        if not changes:
            return False
        self._asked[interaction.request_id] = None
        self.push(changes)
        return True

    def link_cell_change(self, part_id: str, change: CellChangeDict) -> bool:
        """Name, on tool part ``part_id``, the notebook change its call proposed; False once the turn
        ended."""
        changes = [] if self.done else link_cell_change(self._folder, part_id, change)
        self.push(changes)
        return bool(changes)

    def name_call(self, part_id: str, detail: str) -> bool:
        """Name tool part ``part_id``'s call in the user's words; False once the turn ended."""
        changes = [] if self.done else name_call(self._folder, part_id, detail)
        self.push(changes)
        return bool(changes)

    def link_sent_images(self, part_id: str, images: list[SentImageDict]) -> bool:
        """Record, on tool part ``part_id``, the images its result sent to the model; False once the turn
        ended."""
        changes = [] if self.done else link_sent_images(self._folder, part_id, images)
        self.push(changes)
        return bool(changes)

    def link_run_undo(self, part_id: str, undo: RunUndoDict) -> bool:
        """Record, on tool part ``part_id``, whether its run's variables can be undone; False once the turn
        ended."""
        changes = [] if self.done else link_run_undo(self._folder, part_id, undo)
        self.push(changes)
        return bool(changes)

    def answer_asked(self, request_id: str, response: str) -> bool:
        """Record the answer to a question :meth:`ask` showed; False if it is not waiting (or the turn
        ended)."""
        if self.done or request_id not in self._asked or self._asked[request_id] is not None:
            return False
        self._asked[request_id] = response
        self.answer(request_id, response)
        return True

    def asked_answer(self, request_id: str) -> str | None:
        """The answer given to a question of our own, None while it waits."""
        return self._asked.get(request_id)

    def expire_asked(self, request_id: str) -> None:
        """Nobody answered a question of our own in time: it shows ``expired`` and cannot be answered."""
        self._asked.pop(request_id, None)
        part = self._folder.asks.pending_part(request_id)
        if part is not None and not self._folder.done:
            self.push(self._folder.asks.resolve(part, "expired"))

    def on_reply(self, status: object) -> None:
        """Record the ``prompt.submit`` answer: streaming, queued or steered (§3.1)."""
        if self.done or self.started:
            return
        if status == "queued":
            self.phase = "queued"
            self.push(self._folder.begin("queued"))
        elif status == "steered":
            self.phase = "steered"
        else:
            self.phase = "streaming"

    def stopping(self) -> None:
        """``session.interrupt`` went out for this turn (before it started: see :mod:`.early_stop`; after: the
        turn ends when Hermes says so, and a kernel run it waits on is dropped meanwhile)."""
        self.stop_sent = True

    def follow(self, leader: TurnState) -> None:
        """Mirror ``leader``'s events from now on (a merged queued prompt, or a steered one)."""
        leader.add_follower(self)

    def add_follower(self, follower: TurnState) -> None:
        """``follower`` gets this turn's events and its end."""
        self._followers.append(follower)

    def end(self, status: str, error: HermesError | None = None, message: str | None = None) -> None:
        """End the turn from outside: a drop (``error`` set) or ``close()``/a dropped queue (no error)."""
        if self.done:
            return
        self.error = error
        self.push(self._folder.finish(status, message))
        for follower in self._followers:
            follower.end(status, type(error)(str(error)) if error is not None else None, message)
        self._settle()

    def _settle(self) -> None:
        self.done = True
        self.push([])  # wake waiters even when the last event produced no record

    def __repr__(self) -> str:
        return f"<TurnState {self.id} session={self.ref.stored_id} status={self.status}>"
