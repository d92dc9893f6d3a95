"""One submitted turn as the caller sees it: a change-record stream, an awaitable message and a status.

The connection feeds events in (:meth:`Turn._apply`) from its read loop, so everything here on the per-delta
path is O(1) and creates no task: records go to a list, and one shared future wakes whoever iterates.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Generator
from typing import TYPE_CHECKING, Any

from ...errors import HermesError, HermesRunError, HermesUsageError
from ...turns import ChangeRecord, Interaction, Message, TurnFolder, user_message
from ...turns.events import DASHBOARD_TURN_EVENT_TYPES, Event

if TYPE_CHECKING:
    from .connection import DashboardConnection, SessionRef

__all__ = ["Turn"]


class Turn:
    """A prompt submitted with :meth:`DashboardConnection.submit`.

    - ``async for change in turn`` yields its change records (docs/architecture.md): first the user message,
      then the assistant message's records up to ``finish``. Every iteration starts from the first record.
    - ``await turn`` returns the final :class:`~hermes_notebook.turns.Message`. It raises
      :class:`~hermes_notebook.errors.HermesRunError` if the turn ended ``error`` and
      :class:`~hermes_notebook.errors.HermesGatewayClosedError` if the connection dropped first.
    - ``status``: ``submitting`` until the server answers, then ``queued`` (the session was busy; it runs as
      its own turn later, docs/protocol/dashboard.md §3.1 ``prompt.submit``), ``streaming``, ``steered`` (the text
      joined the running turn), and finally the message status (``complete``, ``interrupted``, ``error``,
      ``cancelled``).
    """

    __slots__ = (
        "_asks", "_changes", "_conn", "_done", "_error", "_folder", "_followers", "_started", "_status", "_stop_sent",
        "_waiter",
        "id", "ref", "text",
    )

    def __init__(self, conn: DashboardConnection | None, ref: SessionRef, turn_id: str, text: str, folder: TurnFolder):
        self._conn = conn
        self.ref = ref
        self.id = turn_id
        self.text = text
        self._folder = folder
        self._status = "submitting"
        self._started = False
        self._stop_sent = False  # session.interrupt went out before the turn started (see .early_stop)
        self._done = False
        self._error: HermesError | None = None
        self._waiter: asyncio.Future[None] | None = None
        self._followers: list[Turn] = []
        self._asks: dict[str, asyncio.Future[str | None]] = {}  # interactions the client asks itself
        self._changes: list[ChangeRecord] = [{"op": "message", "message": self.user_message.to_dict()}]
        self._changes.extend(folder.begin("streaming"))

    # --- public ------------------------------------------------------------------------------------------

    @property
    def message(self) -> Message:
        """The assistant message so far (a snapshot)."""
        return self._folder.message

    @property
    def user_message(self) -> Message:
        """The user side of this turn (``user:<turn id>``)."""
        return user_message(self.id, self.text)

    @property
    def status(self) -> str:
        """``submitting``, ``queued``, ``streaming``, ``steered``, or the final message status."""
        return self._folder.message.status if self._done else self._status

    @property
    def done(self) -> bool:
        """True once the turn ended (normally, by a drop, or by ``close()``)."""
        return self._done

    @property
    def changes(self) -> list[ChangeRecord]:
        """Every change record so far (a copy of the list)."""
        return list(self._changes)

    async def interrupt(self) -> None:
        """Stop the session's running turn (``session.interrupt``); a queued turn is dropped with it."""
        if self._conn is None:
            raise HermesUsageError(f"turn {self.id} has no connection to send the stop on")
        await self._conn.interrupt(self.ref)

    async def ask(self, part_id: str, interaction: Interaction, timeout: float) -> str | None:
        """Ask the user on running tool part ``part_id`` (an interaction of our own, e.g. a kernel tool's Run/Deny)
        and return the answer given through :meth:`DashboardConnection.respond`; None when the tool is not running,
        the turn ended, or nobody answered within ``timeout`` seconds (then the interaction shows ``expired``)."""
        changes = self._folder.ask(part_id, interaction)
        if not changes:
            return None
        future: asyncio.Future[str | None] = asyncio.get_running_loop().create_future()
        self._asks[interaction.request_id] = future
        self._push(changes)
        try:
            return await asyncio.wait_for(future, timeout)
        except (TimeoutError, asyncio.TimeoutError):
            self._push(self._folder.expire(interaction.request_id))
            return None
        finally:
            self._asks.pop(interaction.request_id, None)

    def answer_asked(self, request_id: str, response: str) -> bool:
        """Settle an interaction :meth:`ask` is waiting on (recorded as answered); False if none waits."""
        future = self._asks.get(request_id)
        if future is None or future.done():
            return False
        self._push(self._folder.answer(request_id, response))
        future.set_result(response)
        return True

    def __aiter__(self) -> AsyncIterator[ChangeRecord]:
        return self._iterate()

    def __await__(self) -> Generator[Any, None, Message]:
        return self._result().__await__()

    def __repr__(self) -> str:
        return f"<Turn {self.id} session={self.ref.stored_id} status={self.status}>"

    # --- consumer side -----------------------------------------------------------------------------------

    async def _iterate(self) -> AsyncIterator[ChangeRecord]:
        changes = self._changes
        i = 0
        while True:
            n = len(changes)
            while i < n:
                yield changes[i]
                i += 1
            if i < len(changes):
                continue
            if self._done:
                break
            await self._wait_change()
        if self._error is not None:
            raise self._error

    async def _result(self) -> Message:
        while not self._done:
            await self._wait_change()
        if self._error is not None:
            raise self._error
        message = self._folder.message
        if message.status == "error":
            raise HermesRunError(
                f"the turn ended with an error: {message.error or 'no details'}", status="error", run_id=self.id
            )
        return message

    def _wait_change(self) -> asyncio.Future[None]:
        waiter = self._waiter
        if waiter is None:
            waiter = self._waiter = asyncio.get_running_loop().create_future()
        return waiter

    # --- producer side (the connection) ------------------------------------------------------------------

    def _push(self, changes: list[ChangeRecord]) -> None:
        self._changes.extend(changes)
        waiter = self._waiter
        if waiter is not None:
            self._waiter = None
            if not waiter.done():
                waiter.set_result(None)

    def _apply(self, event: Event) -> list[ChangeRecord]:
        """Fold one event of this session; the caller pops the turn once :attr:`done`."""
        if not self._started and self._stop_sent and event.type == "error":
            # A newer server's word for a turn stopped before its agent was ready: ours, not a failure.
            self._end("cancelled")
            return []
        if not self._started and event.type in DASHBOARD_TURN_EVENT_TYPES:
            self._started = True
            self._status = "streaming"
        folder = self._folder
        changes = folder.apply(event)
        if changes:
            self._changes.extend(changes)
            waiter = self._waiter
            if waiter is not None:
                self._waiter = None
                if not waiter.done():
                    waiter.set_result(None)
        if self._followers:
            for follower in self._followers:
                follower._apply(event)
        if folder.done:
            self._settle()
        return changes

    def _on_reply(self, status: object) -> None:
        """Record the ``prompt.submit`` answer: streaming, queued or steered (§3.1)."""
        if self._done or self._started:
            return
        if status == "queued":
            self._status = "queued"
            self._push(self._folder.begin("queued"))
        elif status == "steered":
            self._status = "steered"
        else:
            self._status = "streaming"

    def _follow(self, leader: Turn) -> None:
        """Mirror ``leader``'s events from now on (a merged queued prompt, or a steered one)."""
        leader._followers.append(self)

    def _end(self, status: str, error: HermesError | None = None, message: str | None = None) -> None:
        """End the turn from outside: a drop (``error`` set) or ``close()``/a dropped queue (no error)."""
        if self._done:
            return
        self._error = error
        self._push(self._folder.finish(status, message))
        for follower in self._followers:
            follower._end(status, type(error)(str(error)) if error is not None else None, message)
        self._settle()

    def _settle(self) -> None:
        self._done = True
        for future in self._asks.values():  # the turn ended: nobody will answer now
            if not future.done():
                future.set_result(None)
        self._push([])  # wake waiters even when the last event produced no record
