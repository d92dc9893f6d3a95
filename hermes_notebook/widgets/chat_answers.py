"""Answers to the cards of a chat's turns: an approval, a clarify, a Run card, a sudo password or a secret.

Why apart from the chat: an answer is checked against the card it claims to answer (its message, part and
request id, its kind and choices, a turn still open here: :mod:`.inbound`) and goes once: a second click on
the same card is refused, and a request id repeats across turns (``approval-1`` in every turn), so answers
are kept by message too. A secret's value lives only in the coroutine that sends it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from . import inbound

if TYPE_CHECKING:
    from ..session import Conversation
    from .chat_turns import ChatTurns

__all__ = ["AnsweringChat", "ChatAnswers"]


class AnsweringChat(Protocol):
    """What the answers use of :class:`~hermes_notebook.widgets.chat.Chat`."""

    notice: str
    conversation: Conversation
    turns: ChatTurns

    @property
    def session_id(self) -> str | None: ...

    def message(self, message_id: str | None) -> dict[str, Any] | None: ...


class ChatAnswers:
    """The answers a chat sent for the open session (see the module docstring)."""

    def __init__(self, chat: AnsweringChat) -> None:
        self._chat = chat
        self._answered: set[tuple[str, str]] = set()  # (message id, request id)

    def clear(self) -> None:
        """Another session opened: its cards are new."""
        self._answered.clear()

    async def respond(self, content: dict[str, Any], response: str, secret: str = "") -> None:
        """Answer the card ``content`` names with ``response`` (``secret``: its kind, sudo or secret, and
        ``response`` the value: sent once, recorded nowhere)."""
        chat = self._chat
        key, part_id = (content["message_id"], content["request_id"]), content["part_id"]
        if key in self._answered:
            chat.notice = "That request was already answered."
            return
        message = chat.message(key[0])
        interaction = inbound.find_interaction(message, part_id, key[1])
        if secret:
            inbound.check_answer(interaction, (secret,))
        else:
            inbound.check_answer(interaction, ("approval", "clarify", "code", "run"), response)
        inbound.check_open_turn(message, chat.turns.live_ids)
        session_id = chat.session_id
        if session_id is None:
            chat.notice = "That request is no longer waiting for an answer."
            return
        self._answered.add(key)
        try:  # the conversation marks it answered on its turn (a sudo/secret one "********", never the value)
            if secret:
                await chat.conversation.answer_secret(secret, key[1], response)
            else:
                await chat.conversation.respond(session_id, key[1], response)
        except Exception:
            self._answered.discard(key)
            raise
        finally:
            del response
