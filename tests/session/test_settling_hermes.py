"""A prompt sent right after a turn ended waits until Hermes has let go of the session (session/settling.py).

Hermes emits a turn's ``message.complete`` and only then clears the session's "running" flag (after its
post-turn work: the ``/goal`` judge, titles). A prompt landing in between is taken as busy: queued, and the
default ``busy_input_mode`` interrupts the running turn for it, an interrupt that can hit the queued prompt's
own run ("Operation interrupted: waiting for model response"). The scripted model's ``JUDGE 1`` goal keeps
Hermes in that window for a second after each turn, so an ask sent at once always lands in it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from hermes_notebook import runtime
from hermes_notebook.notebook.handle import TurnHandle
from hermes_notebook.session import Conversation
from hermes_notebook.settings import Settings
from tests.session.test_runner import Clients, options, start


@pytest.fixture
def conversation(settings: Settings) -> Iterator[Conversation]:
    """A conversation over fresh clients."""
    clients = Clients(settings)
    yield Conversation(dashboard=clients.dashboard, api=clients.api)
    runtime.run_sync(clients.close(), timeout=10)


@pytest.mark.both_servers
def test_a_prompt_right_after_a_turn_is_never_taken_as_busy(conversation: Conversation) -> None:
    """Three times: a ``/goal`` turn whose judge holds the session for 1 s after ``message.complete``, then an
    ask at once. The ask is sent only once Hermes reports the session idle: never queued behind the turn that
    already ended, and it gets its own complete reply."""
    first = start(conversation, "settling start", "dashboard", new=True).future.result(timeout=60)
    session = first.session_id
    assert first.ok and session
    for i in range(3):
        goal = runtime.run_sync(conversation.command("/goal JUDGE 1 settle", session), timeout=30)
        assert (
            goal.kind == "send" and goal.message == "JUDGE 1 settle"
        )  # the goal is set; its kickoff is ours
        kickoff = start(conversation, goal.message, "dashboard", session=session).future.result(timeout=60)
        assert kickoff.ok
        handle = TurnHandle(options(f"right after {i}", "dashboard", session=session), conversation)
        batches: list[list[Any]] = []
        handle.add_listener(batches.append)
        reply = handle.start().future.result(timeout=60)
        statuses = [c["message"]["status"] for batch in batches for c in batch if c["op"] == "message"]
        assert "queued" not in statuses, f"ask {i} was queued behind a turn that had ended: {statuses}"
        assert reply.ok and reply.status == "complete" and reply.text.endswith(f"right after {i}")
