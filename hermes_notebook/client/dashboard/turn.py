"""One submitted turn as the caller sees it: a change-record stream, an awaitable message, a status and a
stop.

The handle only waits and reads: the core folds the turn's events into its :class:`~.turn_state.TurnState`
from the read loop, and one shared future (made here, resolved there) wakes whoever iterates.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Generator
from typing import Any, Protocol

from ...errors import HermesUsageError
from ...turns import ChangeRecord, Interaction, Message, user_message
from ...turns.changes import CellChangeDict, RunUndoDict, SentImageDict
from .session import SessionRef
from .turn_state import TurnState

__all__ = ["Stopper", "Turn"]


class Stopper(Protocol):
    """What a turn's stop goes through (the connection that submitted it)."""

    async def interrupt(self, ref: SessionRef) -> None:
        """Stop the session's running turn."""


class Turn:
    """A prompt submitted with :meth:`DashboardConnection.submit`.

    - ``async for change in turn`` yields its change records (docs/architecture.md): first the user message,
      then the assistant message's records up to ``finish``. Every iteration starts from the first record.
    - ``await turn`` returns the final :class:`~hermes_notebook.turns.Message`. It raises
      :class:`~hermes_notebook.errors.HermesRunError` if the turn ended ``error`` and
      :class:`~hermes_notebook.errors.HermesGatewayClosedError` if the connection dropped first.
    - ``status``: ``submitting`` until the server answers, then ``queued`` (the session was busy; it runs as
      its own turn later, docs/protocol/dashboard.md §3.1 ``prompt.submit``), ``streaming``, ``steered`` (the
      text joined the running turn), and finally the message status (``complete``, ``interrupted``, ``error``,
      ``cancelled``).
    """

    __slots__ = ("_state", "_stopper", "id", "ref", "text")

    def __init__(self, state: TurnState, stopper: Stopper | None = None) -> None:
        self._state = state
        self._stopper = stopper
        self.id = state.id
        self.ref = state.ref
        self.text = state.text

    @property
    def message(self) -> Message:
        """The assistant message so far (a snapshot)."""
        return self._state.message

    @property
    def user_message(self) -> Message:
        """The user side of this turn (``user:<turn id>``)."""
        return user_message(self.id, self.text)

    @property
    def status(self) -> str:
        """``submitting``, ``queued``, ``streaming``, ``steered``, or the final message status."""
        return self._state.status

    @property
    def done(self) -> bool:
        """True once the turn ended (normally, by a drop, or by ``close()``)."""
        return self._state.done

    @property
    def changes(self) -> list[ChangeRecord]:
        """Every change record so far (a copy of the list)."""
        return list(self._state.records)

    def pending(self) -> list[Interaction]:
        """The interactions waiting for an answer (approval, clarify, sudo, secret), oldest first."""
        return self._state.pending()

    def add_marker(self, text: str) -> None:
        """Add a marker line to the running turn (our own words, e.g. where a steer went in); text after it
        streams below. Nothing once the turn ended."""
        self._state.add_marker(text)

    async def interrupt(self) -> None:
        """Stop the session's running turn (``session.interrupt``); a queued turn is dropped with it."""
        if self._stopper is None:
            raise HermesUsageError(f"turn {self.id} has no connection to send the stop on")
        await self._stopper.interrupt(self.ref)

    def note(self, text: str) -> None:
        """Show a line of our own in the running turn (a marker part: no one's words), e.g. a kernel tool call
        that was refused; nothing once the turn has ended."""
        self._state.add_marker(text)

    async def ask(self, part_id: str, interaction: Interaction, timeout: float) -> str | None:
        """Ask the user on running tool part ``part_id`` (an interaction of our own, e.g. a kernel tool's
        Run/Deny) and return the answer given through :meth:`DashboardConnection.respond`; None when the tool
        is not running, the turn ended, or nobody answered within ``timeout`` seconds (then the interaction
        shows ``expired``)."""
        state, request_id = self._state, interaction.request_id
        if not state.ask(part_id, interaction):
            return None
        deadline = asyncio.get_running_loop().time() + timeout
        while (answer := state.asked_answer(request_id)) is None and not state.done:
            left = deadline - asyncio.get_running_loop().time()
            if left <= 0:
                state.expire_asked(request_id)
                return None
            # The shared waiter also wakes the iterating consumer: wait on it without cancelling it.
            await asyncio.wait({state.wait(_new_future)}, timeout=left)
        return answer

    @property
    def stopping(self) -> bool:
        """True once the user stopped this turn (``session.interrupt`` went out), before Hermes has ended it:
        a kernel tool waiting on it (an approved run) lets go at once."""
        return self._state.stop_sent

    def settle(self, request_id: str, response: str) -> bool:
        """Answer a question of our own from the kernel's side (a run card settled with how the run ended), as
        a click would; False when it is not waiting (answered already, or the turn ended)."""
        return self._state.answer_asked(request_id, response)

    def name_call(self, part_id: str, detail: str) -> bool:
        """Name running tool part ``part_id``'s call in the user's words (a kernel tool's label: "the proposed
        new cell at index 1", not an id); False when the turn has ended or has no such tool part."""
        return self._state.name_call(part_id, detail)

    def link_sent_images(self, part_id: str, images: list[SentImageDict]) -> bool:
        """Record, on tool part ``part_id``, the images a kernel tool's result sent to the model (views show
        them); False when the turn has ended or has no such tool part."""
        return self._state.link_sent_images(part_id, images)

    def link_run_undo(self, part_id: str, undo: RunUndoDict) -> bool:
        """Record, on tool part ``part_id``, whether its approved run's variables can be undone (views offer
        Undo variables or say why not); False when the turn has ended or has no such tool part."""
        return self._state.link_run_undo(part_id, undo)

    def link_cell_change(self, part_id: str, change: CellChangeDict) -> bool:
        """Name, on running tool part ``part_id``, the notebook change a kernel cell tool proposed (views link
        to the cell); False when the turn has ended or has no such tool part."""
        return self._state.link_cell_change(part_id, change)

    def __aiter__(self) -> AsyncIterator[ChangeRecord]:
        return self._iterate()

    def __await__(self) -> Generator[Any, None, Message]:
        return self._result().__await__()

    def __repr__(self) -> str:
        return f"<Turn {self.id} session={self.ref.stored_id} status={self.status}>"

    async def _iterate(self) -> AsyncIterator[ChangeRecord]:
        state = self._state
        changes = state.records
        i = 0
        while True:
            n = len(changes)
            while i < n:
                yield changes[i]
                i += 1
            if i < len(changes):
                continue
            if state.done:
                break
            await state.wait(_new_future)
        if state.error is not None:
            raise state.error

    async def _result(self) -> Message:
        state = self._state
        while not state.done:
            await state.wait(_new_future)
        return state.result()


def _new_future() -> asyncio.Future[None]:
    return asyncio.get_running_loop().create_future()
