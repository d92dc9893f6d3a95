"""The Chat's prompts as turns of its :class:`~hermes_notebook.session.Conversation`.

The chat keeps no queue and runs no turn loop of its own: each prompt becomes a ``conversation.run`` with a
:class:`ChatTurn` as its sink, and the conversation's one turn queue orders it after whatever else runs on the
session (an earlier prompt, a ``hermes.ask()`` on the same session). What stays here is what the chat shows:
the prompt at once (``queued`` while it waits), which messages belong to the turn running now (an answer is
only taken for those), and how a turn that fails ends on screen.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, cast

from ..errors import HermesError, HermesGatewayClosedError
from ..session import Conversation, TurnControl, TurnRequest
from ..turns import ChangeRecord, user_message
from . import inbound

__all__ = ["ChatTurn", "ChatTurns", "ChatView"]

log = logging.getLogger(__name__)


class ChatView(Protocol):
    """What the turns need of :class:`~hermes_notebook.widgets.chat.Chat` (public methods only)."""

    busy: bool
    queued: int

    def push(self, changes: Sequence[dict[str, Any]]) -> None: ...
    def finish_locally(self, message_id: str | None, status: str, error: str) -> None: ...
    def fail(self, what: str, exc: BaseException) -> None: ...
    def turn_ended(self) -> None: ...


@dataclass(eq=False)
class ChatTurn:
    """One prompt of the chat: what it sends, and the :class:`~hermes_notebook.session.TurnSink` its records
    reach the chat through."""

    chat: ChatView
    turns: ChatTurns
    text: str
    images: list[tuple[str, bytes]]
    turn_id: str = field(default_factory=lambda: uuid.uuid4().hex[:12])
    control: TurnControl = field(default_factory=TurnControl)
    #: Shown as queued: it was sent while the session was busy.
    queued: bool = False
    running: bool = False
    message_id: str | None = None
    #: A record could not be applied (its message was replaced under it): the whole message is pushed at the
    # end.
    resync: bool = False
    task: asyncio.Task[None] | None = None

    def user(self, status: str | None = None) -> dict[str, Any]:
        """The prompt's user message (``user:<turn id>``; the reply shares the id)."""
        message: dict[str, Any] = dict(user_message(self.turn_id, self.text).to_dict())
        if status is not None:
            message["status"] = status
        return message

    # --- TurnSink ---

    def started(self, session_id: str) -> None:
        self.running = True
        self.turns.started(self)

    def push(self, changes: Sequence[ChangeRecord]) -> None:
        for change in changes:
            if change["op"] == "message":
                self.message_id = change["message"]["id"]
                self.turns.live_ids.add(self.message_id)
            try:
                self.chat.push(
                    [cast("dict[str, Any]", change)]
                )  # a record is a dict: no copy on the hot path
            except (
                KeyError
            ):  # its message was replaced under it (a session switch or reset): resync at the end
                self.resync = True

    def note(self, text: str) -> None:
        log.info("chat turn: %s", text)

    def failed(self, error: HermesError) -> None:
        if isinstance(error, HermesGatewayClosedError):
            # After the reconnect the history re-fetch shows how the turn really ended.
            self.chat.finish_locally(self.message_id, "interrupted", "The connection to Hermes dropped.")
        else:
            self.chat.finish_locally(self.message_id, "error", str(error))
            self.chat.fail("the turn", error)

    async def obtain(self, request: dict[str, Any]) -> str | None:
        return None  # the chat's cards answer through Conversation.respond, checked against the open turn


class ChatTurns:
    """The chat's prompts not yet ended, in the order sent (the conversation's queue runs them in that
    order)."""

    def __init__(self, chat: ChatView, conversation: Conversation) -> None:
        self._chat = chat
        self._conversation = conversation
        self._turns: list[ChatTurn] = []
        #: Messages of the turn running now (kept across history re-fetches; answers are taken only for them).
        self.live_ids: set[str] = set()

    @property
    def running(self) -> ChatTurn | None:
        """The chat's turn that holds the session now, if any."""
        return next((t for t in self._turns if t.running), None)

    @property
    def waiting(self) -> int:
        """The chat's prompts shown as queued that have not started yet."""
        return sum(t.queued and not t.running for t in self._turns)

    def send(self, session_id: str, text: str, images: list[tuple[str, bytes]]) -> None:
        """Show the prompt (``queued`` while the session is busy) and run it after the session's earlier turns
        (package loop)."""
        if self.waiting >= inbound.MAX_QUEUED_PROMPTS:
            raise inbound.Refused(
                f"{self.waiting} prompts are already waiting; send this one when Hermes is done"
            )
        turn = ChatTurn(self._chat, self, text, images)
        turn.queued = bool(self._turns) or self._conversation.busy(session_id)
        self._chat.push([{"op": "message", "message": turn.user("queued" if turn.queued else None)}])
        self._turns.append(turn)
        self._chat.queued = self.waiting
        request = TurnRequest(
            prompt=text, session=session_id, images=images or None, turn_id=turn.turn_id, follow=False
        )
        turn.task = asyncio.get_running_loop().create_task(self._run(turn, request))

    def started(self, turn: ChatTurn) -> None:
        """The turn holds the session: its prompt is no longer queued, and the chat is busy."""
        self.live_ids = {f"user:{turn.turn_id}"}
        if turn.queued:
            self._chat.push([{"op": "message", "message": turn.user()}])
        self._chat.queued = self.waiting
        self._chat.busy = True

    async def _run(self, turn: ChatTurn, request: TurnRequest) -> None:
        try:
            outcome = await self._conversation.run(request, turn, turn.control)
            if turn.resync and turn.message_id is not None:
                self._chat.push([{"op": "message", "message": dict(outcome.message)}])
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            self._chat.finish_locally(turn.message_id, "error", str(exc))
            self._chat.fail("the turn", exc)
        finally:
            if turn in self._turns:  # a dropped prompt left already
                self._turns.remove(turn)
            if turn.running:
                self.live_ids = set()
                self._chat.busy = False
            self._chat.queued = self.waiting
            self._chat.turn_ended()

    def drop_waiting(self) -> None:
        """Cancel the prompts that have not started (the stop button, a session switch): shown as
        cancelled."""
        dropped = [t for t in self._turns if not t.running]
        for turn in dropped:
            if turn.task is not None:
                turn.task.cancel()
            self._turns.remove(turn)
        self._chat.queued = self.waiting
        if dropped:
            self._chat.push([{"op": "message", "message": t.user("cancelled")} for t in dropped])

    def stop(self) -> None:
        """Drop the waiting prompts and interrupt the running one."""
        self.drop_waiting()
        running = self.running
        if running is not None:
            running.control.stop()

    def cancel_all(self) -> None:
        """The chat closed: stop waiting for any of its turns."""
        for turn in list(self._turns):
            if turn.task is not None:
                turn.task.cancel()
