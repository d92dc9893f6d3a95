"""The static transcript of a huge session stays bounded: the newest messages plus a note."""

from __future__ import annotations

from typing import Any

from hermes_notebook.render import TRANSCRIPT_MAX_MESSAGES, bounded_messages, transcript_bundle


def _msg(i: int, text: str) -> dict[str, Any]:
    role = "user" if i % 2 == 0 else "assistant"
    part = {
        "id": "text:0",
        "kind": "text",
        "text": text,
        "name": None,
        "status": None,
        "arguments": None,
        "preview": None,
        "result": None,
        "duration": None,
        "interaction": None,
    }
    return {
        "id": f"{role}:{i}",
        "role": role,
        "status": "complete",
        "parts": [part],
        "usage": None,
        "error": None,
    }


def test_a_10000_message_session_keeps_the_newest_messages_and_says_how_many_are_left_out() -> None:
    """Every MIME type holds the newest TRANSCRIPT_MAX_MESSAGES messages and a note counting the rest."""
    messages = [_msg(i, f"MESSAGE-{i:05d} " + "words " * 40) for i in range(10_000)]
    bundle = transcript_bundle(messages)
    omitted = 10_000 - TRANSCRIPT_MAX_MESSAGES
    for mime, text in bundle.items():
        assert f"{omitted:,} earlier messages not shown" in text, mime
        assert "MESSAGE-09999" in text and f"MESSAGE-{omitted:05d}" in text, mime
        assert f"MESSAGE-{omitted - 1:05d}" not in text and "MESSAGE-00000" not in text, mime
    # Bounded: about TRANSCRIPT_MAX_MESSAGES messages' worth, far from the 2.6 MB of the whole session.
    assert sum(len(t) for t in bundle.values()) < 300_000


def test_a_character_budget_bounds_huge_messages_but_always_shows_the_newest() -> None:
    """Huge messages stop the transcript early, but the newest one is always there."""
    messages = [_msg(i, f"BIG-{i} " + "x" * 200_000) for i in range(5)]
    shown, omitted = bounded_messages(messages)
    assert [m["id"] for m in shown] == ["assistant:3", "user:4"] and omitted == 3
    one, left = bounded_messages(messages, max_chars=10)
    assert [m["id"] for m in one] == ["user:4"] and left == 4


def test_a_short_conversation_is_unchanged_and_has_no_note() -> None:
    """Below the bounds nothing is left out and no note is added."""
    messages = [_msg(i, f"hello {i}") for i in range(4)]
    bundle = transcript_bundle(messages)
    assert all("not shown" not in text for text in bundle.values())
    assert bounded_messages(messages) == (messages, 0)
