"""Hostile browser messages get a clear refusal and change nothing (widgets/inbound.py)."""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Iterator
from typing import Any

import pytest

from hermes_notebook.widgets import inbound
from hermes_notebook.widgets.chat import Chat
from tests.helpers import REPO, eventually, offline_jobs_widget
from tests.widgets.test_chat_widget import FakeConnection, browser, start_turn

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\0" * 8).decode()
JPEG = base64.b64encode(b"\xff\xd8\xff\xe0" + b"\0" * 8).decode()
IDS = {"message_id": "assistant:t1", "part_id": "tool:c1"}


@pytest.fixture
def conn() -> FakeConnection:
    return FakeConnection()


@pytest.fixture
def chat(conn: FakeConnection) -> Iterator[Chat]:
    widget = Chat(conn, session="stored-1")
    widget.wait_ready(5)
    yield widget
    widget.close()


MALFORMED: list[tuple[Any, str]] = [
    ("just a string", "a message must be an object, not str"),
    ([1, 2], "a message must be an object, not list"),
    ({"no": "type"}, "unknown message type 'nothing'"),
    ({"type": 7}, "unknown message type 'int'"),
    ({"type": "eval", "code": "import os"}, "unknown message type 'eval'"),
    ({"type": "send", "text": 42}, "text must be text, not int"),
    ({"type": "send", "text": "x" * (inbound.MAX_PROMPT_CHARS + 1)}, "text is too long"),
    ({"type": "send", "text": "x", "images": "not a list"}, "images must be a list, not str"),
    ({"type": "send", "text": "x", "images": [{"mime": "image/png", "data": PNG}] * 9}, "too many images (9"),
    (
        {"type": "send", "text": "x", "images": [{"mime": "image/svg+xml", "data": PNG}]},
        "only PNG, JPEG, GIF and WebP images can be attached (got image/svg+xml)",
    ),
    (
        {
            "type": "send",
            "text": "x",
            "images": [{"mime": "image/png", "data": "A" * (4 * ((inbound.MAX_IMAGE_BYTES + 2) // 3) + 4)}],
        },
        "that image is too large (more than",
    ),  # the base64 length, checked before any decoding
    ({"type": "send", "text": "x", "images": [{"mime": "image/png", "data": "***"}]}, "not valid base64"),
    (
        {"type": "send", "text": "x", "images": [{"mime": "image/png", "data": JPEG}]},
        "that file is not a PNG image",
    ),
    (
        {"type": "respond", **IDS, "request_id": ["a"], "response": "once"},
        "request_id must be text, not list",
    ),
    (
        {"type": "respond", **IDS, "request_id": "approval-1", "response": "y" * 20_000},
        "response is too long",
    ),
    (
        {"type": "respond", "part_id": "p", "request_id": "r", "response": "once"},
        "message_id must be text, not nothing",
    ),
    (
        {"type": "secret", **IDS, "request_id": "s1", "kind": "root", "value": "pw"},
        "kind must be one of sudo, secret",
    ),
    ({"type": "secret", **IDS, "request_id": "s1", "kind": "sudo"}, "value must be text, not nothing"),
    ({"type": "switch_session", "session_id": ""}, "session_id is empty"),
    ({"type": "switch_session", "session_id": {"id": 1}}, "session_id must be text, not dict"),
]


@pytest.mark.parametrize(("content", "reason"), MALFORMED, ids=[r for _, r in MALFORMED])
def test_malformed_messages_are_refused_and_change_nothing(
    chat: Chat,
    conn: FakeConnection,
    content: Any,
    reason: str,
) -> None:
    """Wrong types, huge strings, bad images, unknown types: a notice saying what was wrong, no call, no
    change."""
    before = (list(conn.calls), json.dumps(chat.snapshot()), chat.queued, chat.busy)
    browser(chat, **content) if isinstance(content, dict) else chat._dispatch(chat, content, [])
    eventually(lambda: chat.notice, what="refusal notice")
    assert chat.notice.startswith("Refused") and reason in chat.notice
    assert (conn.calls, json.dumps(chat.snapshot()), chat.queued, chat.busy) == before


def _approval(chat: Chat, conn: FakeConnection, choices: list[str]) -> None:
    start_turn(chat, conn, "DANGER x")
    conn.feed("tool.start", tool_id="c1", name="terminal", context="rm -rf x")
    conn.feed("approval.request", command="rm -rf x", description="recursive delete", choices=choices)
    eventually(lambda: "approval-1" in json.dumps(chat.snapshot()), what="approval shown")


ANSWERS: list[tuple[dict[str, Any], str]] = [
    (
        {"type": "respond", **IDS, "request_id": "approval-1", "response": "always"},
        "'always' is not one of the offered choices (once, deny)",
    ),
    (
        {"type": "respond", **IDS, "request_id": "approval-9", "response": "once"},
        "that request is not one this chat is waiting on",
    ),
    (
        {
            "type": "respond",
            "message_id": "assistant:nope",
            "part_id": "tool:c1",
            "request_id": "approval-1",
            "response": "once",
        },
        "that request is not one this chat is waiting on",
    ),
    (
        {"type": "secret", **IDS, "request_id": "approval-1", "kind": "sudo", "value": "hunter2"},
        "that request asks for approval, not sudo",
    ),
    (
        {"type": "secret", **IDS, "request_id": "sudo-1", "kind": "secret", "value": "hunter2"},
        "that request is not one this chat is waiting on",
    ),
]


@pytest.mark.parametrize(("content", "reason"), ANSWERS, ids=[r for _, r in ANSWERS])
def test_answers_must_match_a_pending_interaction(
    chat: Chat,
    conn: FakeConnection,
    content: dict[str, Any],
    reason: str,
) -> None:
    """An answer outside the choices, for an unknown request, or of the wrong kind never reaches Hermes."""
    _approval(chat, conn, ["once", "deny"])
    before = (list(conn.calls), json.dumps(chat.snapshot()))
    browser(chat, **content)
    eventually(lambda: chat.notice, what="refusal notice")
    assert chat.notice == f"Refused: {reason}."
    assert (conn.calls, json.dumps(chat.snapshot())) == before
    assert "hunter2" not in chat.notice
    # The real answer still goes through afterwards.
    browser(chat, type="respond", **IDS, request_id="approval-1", response="deny")
    eventually(lambda: ("respond", ("approval-1", "deny")) in conn.calls, what="the real answer")


def test_always_is_refused_when_the_server_offered_no_choices(chat: Chat, conn: FakeConnection) -> None:
    """With no choices from the server the approval offers the model's default pair, and the kernel accepts
    only those (turns.model.DEFAULT_APPROVAL_CHOICES: once/deny)."""
    _approval(chat, conn, [])
    browser(chat, type="respond", **IDS, request_id="approval-1", response="always")
    eventually(lambda: chat.notice, what="refusal notice")
    assert "not one of the offered choices (once, deny)" in chat.notice
    assert not any(c[0] == "respond" for c in conn.calls)


def test_the_queue_is_bounded(chat: Chat, conn: FakeConnection) -> None:
    """Prompts queue behind a running turn up to the limit; one more is refused and not queued."""
    start_turn(chat, conn, "first")
    for i in range(inbound.MAX_QUEUED_PROMPTS):
        browser(chat, type="send", text=f"queued {i}", images=[])
    eventually(lambda: chat.queued == inbound.MAX_QUEUED_PROMPTS, what="queue full")
    browser(chat, type="send", text="one too many", images=[])
    eventually(lambda: chat.notice, what="refusal notice")
    assert "prompts are already waiting" in chat.notice and chat.queued == inbound.MAX_QUEUED_PROMPTS
    assert "one too many" not in json.dumps(chat.snapshot())


def test_jobs_view_messages_are_checked_too() -> None:
    """The jobs widget refuses malformed messages with a notice and sends nothing to Hermes."""
    with offline_jobs_widget() as (w, seen):
        for content, reason in [
            (
                {"type": "action", "request": 1, "action": "rm -rf", "id": "abc"},
                "action must be one of pause",
            ),
            ({"type": "action", "request": 1, "action": "delete", "id": 5}, "id must be text, not int"),
            ({"type": "check_schedule", "request": 1, "schedule": "x" * 5000}, "schedule is too long"),
            ({"type": "save", "request": 1, "fields": "name=x"}, "fields must be an object, not str"),
            ({"type": "save", "request": {"x": 1}, "fields": {}}, "request must be a request number"),
            ({"type": "drop_tables"}, "unknown message type 'drop_tables'"),
        ]:
            assert w.handle_message(content) is None
            assert w.notice["kind"] == "error" and reason in w.notice["text"], (content, w.notice)
        assert seen == []


def _sent_types(folder: str) -> set[str]:
    """Message types the front end sends from ``js/src/<folder>`` (every ``send({ type: "..." ...})`` and
    ``messenger.command({ type: "..." ...})``, and every question asked through ``messenger.ask<...>({ type:
    "..." ...})`` or ``invoke<...>(model, { type: "..." ...})``, js/src/messenger.ts and js/src/invoke.ts)."""
    root = REPO / "js" / "src" / folder
    found: set[str] = set()
    for path in root.rglob("*.ts"):
        text = path.read_text(encoding="utf-8")
        found |= set(re.findall(r'(?:send|command)\(\{ ?type: "([a-z_]+)"', text))
        found |= set(re.findall(r'invoke<[^(]*>\([^,]+,\s*\{ ?type: "([a-z_]+)"', text))
        found |= set(re.findall(r'ask<[^(]*>\(\s*\{ ?type: "([a-z_]+)"', text))
        # a function that builds what a view sends (``): ChatOutgoing {``, e.g. the composer's chat/steer.ts)
        for body in re.findall(r"\): ChatOutgoing \{\n(.*?)\n\}", text, re.S):
            found |= set(re.findall(r'\{ ?type: "([a-z_]+)"', body))
    return found


def test_every_message_the_views_send_is_one_the_kernel_checks() -> None:
    """A view message the check does not know is refused as hostile: every type the front end sends is
    listed."""
    chat, jobs = _sent_types("chat"), _sent_types("jobs")
    assert {"send", "export", "steer", "send_files", "snapshot", "list_sessions"} <= chat
    assert {"save", "runs", "transcript", "job_errors", "refresh"} <= jobs
    assert chat - set(inbound.CHAT_MESSAGES) == set()
    assert jobs - set(inbound.JOBS_MESSAGES) == set()


@pytest.mark.parametrize(
    ("message", "open_ids", "reason"),
    [
        ({"id": "assistant:t1", "status": "interrupted"}, {"assistant:t2"}, "turn has ended"),
        ({"id": "assistant:t1", "status": "error"}, {"assistant:t1"}, "turn has ended"),
        (None, {"assistant:t1"}, "turn has ended"),
        (
            {"id": "assistant:t1", "status": "streaming"},
            {"user:t2", "assistant:t2"},
            "belongs to an earlier turn",
        ),
        ({"id": "assistant:t1", "status": "streaming"}, set(), "belongs to an earlier turn"),
    ],
)
def test_an_answer_is_bound_to_the_turn_running_now(
    message: dict[str, Any] | None,
    open_ids: set[str],
    reason: str,
) -> None:
    """Request ids repeat across turns, so an answer counts only for the streaming message of the open
    turn."""
    with pytest.raises(inbound.Refused, match=reason):
        inbound.check_open_turn(message, open_ids)
    inbound.check_open_turn({"id": "assistant:t2", "status": "streaming"}, {"user:t2", "assistant:t2"})


def test_the_turn_view_refuses_a_card_of_its_ended_turn() -> None:
    """%hermes: once the turn's message ended, a click on a card still shown pending reaches nobody."""
    from hermes_notebook.widgets.turn import TurnView

    answers: list[tuple[str, str]] = []
    view = TurnView(on_respond=lambda rid, value: answers.append((rid, value)))
    try:
        pending = {
            "kind": "approval",
            "request_id": "approval-1",
            "status": "pending",
            "command": "rm -rf x",
            "question": None,
            "description": None,
            "choices": ["once", "deny"],
            "response": None,
        }
        part = {
            "id": "tool:c1",
            "kind": "tool",
            "text": "",
            "name": "terminal",
            "status": "running",
            "arguments": None,
            "preview": None,
            "result": None,
            "duration": None,
            "interaction": pending,
        }
        message = {
            "id": "assistant:t1",
            "role": "assistant",
            "status": "streaming",
            "parts": [part],
            "usage": None,
            "error": None,
        }
        view.push([{"op": "message", "message": message}])
        view.push(
            [{"op": "finish", "message_id": "assistant:t1", "status": "error", "usage": None, "error": "x"}]
        )
        view._dispatch(
            view,
            {
                "type": "respond",
                "message_id": "assistant:t1",
                "part_id": "tool:c1",
                "request_id": "approval-1",
                "response": "once",
            },
            [],
        )
        eventually(lambda: view.notice, what="refusal notice")
        assert "turn has ended" in view.notice and answers == []
    finally:
        view.close()
