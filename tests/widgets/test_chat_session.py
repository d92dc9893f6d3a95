"""The chat widget's model label, context gauge and slash commands, against the real Dashboards."""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest

from hermes_notebook._demo.local_hermes import LocalHermes
from hermes_notebook._demo.script import MODEL_ID, prompt_of
from hermes_notebook.widgets import Chat
from hermes_notebook.widgets.chat_session import context_state
from tests.helpers import eventually

pytestmark = pytest.mark.both_servers


def _open(hermes: LocalHermes) -> tuple[Chat, list[dict[str, Any]]]:
    chat = Chat(hermes.settings())
    sent: list[dict[str, Any]] = []
    chat.send = lambda content, buffers=None: sent.append(json.loads(json.dumps(content)))  # type: ignore[method-assign]
    chat.wait_ready(30)
    return chat, sent


def _of_type(sent: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [m for m in sent if m.get("type") == kind]


def test_chat_shows_the_model_and_the_context_after_a_turn(hermes: LocalHermes) -> None:
    """The model label is set once the session opens; after a turn the gauge holds the context breakdown."""
    chat, _ = _open(hermes)
    try:
        eventually(lambda: chat.model == MODEL_ID, 30, "the model label")
        assert chat.context_usage is None  # nothing in the window before the first turn
        chat._dispatch(chat, {"type": "send", "text": "fill the context", "images": []}, [])

        def with_the_turn() -> dict[str, Any] | None:  # a read while the turn ran may not hold it yet
            usage = chat.context_usage
            ids = {c["id"] for c in usage["categories"]} if usage else set()
            return usage if {"system_prompt", "conversation"} <= ids else None

        context = eventually(with_the_turn, 60, "the context gauge with the turn's conversation")
        assert context["max"] > 0 and context["used"] > 0
    finally:
        chat.close()


def test_chat_set_model_switches_the_session(hermes: LocalHermes) -> None:
    """``Chat.set_model`` switches the open session: the label follows and the next turn reaches that
    model."""
    chat, _ = _open(hermes)
    try:
        chat.set_model("chat-model").result(30)
        assert chat.model == "chat-model" and "chat-model" in chat.notice  # the provider does not list it
        prompt = f"after the chat switched {uuid.uuid4().hex[:6]}"
        chat._dispatch(chat, {"type": "send", "text": prompt, "images": []}, [])
        eventually(lambda: any(prompt_of(b) == prompt for b in hermes.model.requests), 60, "the request")
        assert [b["model"] for b in hermes.model.requests if prompt_of(b) == prompt] == ["chat-model"]
        eventually(lambda: not chat.busy and chat.model == "chat-model", 30, "the label after the turn")
    finally:
        chat.close()


def test_chat_lists_and_runs_hermes_commands(hermes: LocalHermes) -> None:
    """The view asks for the catalog and gets it as a message (never state); a command's output comes back as
    text."""
    chat, sent = _open(hermes)
    try:
        chat._dispatch(chat, {"type": "commands"}, [])
        catalog = eventually(lambda: _of_type(sent, "commands"), 30, "the catalog")[0]["commands"]
        names = {entry["name"] for entry in catalog}
        assert {"/help", "/model"} <= names
        assert "commands" not in chat.get_state()
        chat._dispatch(chat, {"type": "command", "line": "/model"}, [])
        output = eventually(lambda: _of_type(sent, "command_output"), 60, "the command's output")[0]
        assert output["command"] == "/model" and output["output"].startswith("Current model:")
        chat._dispatch(chat, {"type": "command", "line": "model"}, [])
        eventually(lambda: "starts with '/'" in chat.notice, 10, "the refusal")
    finally:
        chat.close()


def test_context_state_reads_the_breakdown() -> None:
    """The gauge's state comes from the breakdown's window and categories; without a window there is none."""
    breakdown = {
        "context_max": 1000,
        "context_used": 250,
        "context_percent": 25,
        "categories": [{"id": "conversation", "label": "Conversation", "tokens": 200, "color": "x"}],
    }
    assert context_state(None, breakdown) == {
        "used": 250,
        "max": 1000,
        "percent": 25,
        "categories": [{"id": "conversation", "label": "Conversation", "tokens": 200}],
    }
    assert context_state(None, {"context_max": 0, "categories": []}) is None
    assert context_state({"context_used": 5, "context_max": 10}, None) == {
        "used": 5,
        "max": 10,
        "percent": 50.0,
        "categories": [],
    }


async def test_a_model_switch_during_the_session_read_keeps_its_label() -> None:
    """A ``set_model`` that lands while the session's model is being read wins: the older read does not undo
    it."""
    import asyncio
    from types import SimpleNamespace

    from hermes_notebook.widgets.chat_session import refresh_session_info

    reading, release = asyncio.Event(), asyncio.Event()

    async def model(session: str) -> str:
        reading.set()
        await release.wait()
        return "fake-model"  # what the session had when the read started

    async def context_window(session: str) -> dict[str, Any]:
        return {}

    conversation = SimpleNamespace(model=model, context_window=context_window)
    chat = SimpleNamespace(
        conversation=conversation,
        model="",
        context_usage=None,
        notice="",
        session_id="s1",
        scrub_value=lambda value: value,
    )
    read = asyncio.ensure_future(refresh_session_info(chat))  # type: ignore[arg-type]
    await reading.wait()
    chat.model = "chat-model"  # what Chat._set_model writes when the switch is acknowledged
    release.set()
    await read
    assert chat.model == "chat-model"
