"""``Chat.compress()`` against the real Dashboards: the next reply in the widget opens with the marker
part."""

from __future__ import annotations

from typing import Any

import pytest

from hermes_notebook.widgets import Chat
from tests.helpers import eventually

pytestmark = pytest.mark.both_servers


def _send(chat: Chat, text: str) -> dict[str, Any]:
    """Send as the browser does and wait for the turn's reply."""

    def replies() -> list[dict[str, Any]]:
        chat.flush()
        return [m for m in chat.snapshot() if m["role"] == "assistant" and m["status"] != "streaming"]

    before = len(replies())
    chat._dispatch(chat, {"type": "send", "text": text, "images": []}, [])
    eventually(lambda: len(replies()) > before and not chat.busy, 60, "the end of the turn")
    return replies()[-1]


def test_chat_compress_marks_the_next_reply(hermes: Any) -> None:
    """Four turns, Chat.compress(), one more turn: its reply is [marker, text] and the marker is in the
    index."""
    chat = Chat(hermes.settings())
    try:
        chat.wait_ready(30)
        for i in range(4):
            assert [p["kind"] for p in _send(chat, f"chat warm-up {i}")["parts"]] == ["text"]
        chat.compress().result(30)
        assert not chat.notice
        reply = _send(chat, "after the chat compressed")
        assert reply["role"] == "assistant" and reply["status"] == "complete"
        assert [p["kind"] for p in reply["parts"]] == ["marker", "text"]
        assert reply["parts"][0]["text"].startswith("Context compress")
        assert "Context compress" in chat.transcript_bundle()["text/plain"]
    finally:
        chat.close()
