"""One conversation, many faces (session/conversation.py, session/queue.py), on the real servers: a facade ask
and a Chat prompt on the same session wait for each other in the conversation's one turn queue.

Without it, each face would send its prompt to the busy session at once (the Dashboard then interrupts the
running turn, or queues the prompt where no face can show or stop it).
"""

from __future__ import annotations

import time
import uuid
from typing import Any

import pytest

import hermes_notebook as hn
from hermes_notebook._demo.local_hermes import LocalHermes
from hermes_notebook._demo.script import prompt_of
from tests.helpers import eventually

pytestmark = pytest.mark.both_servers


#: A turn's statuses while it runs on the server. The queue lets the next turn go once the turn ended there, a
#: moment before the face's own handle or busy flag says so: the checks below wait on the turn's status.
RUNNING = ("submitting", "queued", "streaming")


def _reached_model(hermes: LocalHermes, prompt: str) -> bool:
    return any(prompt_of(body) == prompt for body in list(hermes.model.requests))


def _chat_message(chat: Any, text: str) -> dict[str, Any] | None:
    return next((m for m in chat.snapshot() if m["role"] == "user" and m["parts"][0]["text"] == text), None)


def _reply_status(chat: Any, text: str) -> str | None:
    """The status of the chat's reply to its prompt ``text`` (the turn's messages share its id)."""
    user = _chat_message(chat, text)
    reply_id = "assistant:" + user["id"].split(":", 1)[1] if user else None
    return next((m["status"] for m in chat.snapshot() if m["id"] == reply_id), None)


def test_an_ask_and_a_chat_prompt_on_one_session_run_one_after_the_other(hermes: LocalHermes) -> None:
    """A Chat prompt sent while ``hermes.start()`` streams on the same session shows queued and reaches Hermes
    only after that turn ended; then an ask started while the chat's turn streams waits, unsent, for it. No
    turn is interrupted by the other, and each completes."""
    tag = uuid.uuid4().hex[:6]
    facade = hn.connect(hermes.settings())
    try:
        slow = f"SLOW 8 ask-{tag}"
        first = facade.start(slow, session=f"shared-{tag}")
        eventually(lambda: _reached_model(hermes, slow), 90, "the ask's turn streaming")
        chat = facade.chat(f"shared-{tag}").wait_ready(30)
        try:
            assert chat.session_id == first.session_id
            prompt = f"chat-{tag}"
            chat.send_prompt(prompt)
            eventually(lambda: chat.queued == 1, 10, "the chat prompt queued behind the ask")
            assert (_chat_message(chat, prompt) or {}).get("status") == "queued"
            while True:  # the ask's whole turn: the chat's prompt never reaches Hermes meanwhile
                reached, busy = (
                    _reached_model(hermes, prompt),
                    chat.busy,
                )  # seen first, then whether it still ran
                if first.status not in RUNNING:
                    break
                assert not reached and not busy
                time.sleep(0.05)
            reply = first.wait(60)
            assert reply.ok and reply.status == "complete" and "tick 7" in reply.text
            eventually(lambda: _reached_model(hermes, prompt), 30, "the chat prompt sent after the ask")
            eventually(lambda: _reply_status(chat, prompt) == "complete", 60, "the chat's turn to end")

            slow_chat, after = f"SLOW 6 chat-{tag}", f"after the chat {tag}"
            chat.send_prompt(slow_chat)
            eventually(
                lambda: chat.busy and _reached_model(hermes, slow_chat), 30, "the chat's turn streaming"
            )
            second = facade.start(after, session=f"shared-{tag}")
            deadline = time.monotonic() + 90
            while True:  # the ask waits in the same queue, unsent, for the chat's whole turn
                waiting, reached = second.status == "submitting", _reached_model(hermes, after)
                if _reply_status(chat, slow_chat) not in (*RUNNING, None):
                    break
                assert waiting and not reached and time.monotonic() < deadline
                time.sleep(0.05)
            second_reply = second.wait(60)
            assert second_reply.ok and second_reply.session_id == chat.session_id
            assert _reply_status(chat, slow_chat) == "complete"  # the ask did not interrupt the chat's turn
        finally:
            chat.close()
    finally:
        facade.close()
