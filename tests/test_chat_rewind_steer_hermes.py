"""The chat's Undo with files, its subagent Steer/Stop and ``hermes.steer`` on an API Server run, on the real servers.

Undo with files: the view asks ``turn_files`` for the last reply; the newer server names the files the turn's
checkpoint holds and the undo puts them back; 0.19.0 cannot rewind, so the question is refused and the view offers
nothing (no notice: nobody clicked).
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from hermes_notebook._demo.local_hermes import LocalHermes
from tests.helpers import eventually

pytestmark = pytest.mark.both_servers


def _chat(hermes: LocalHermes) -> tuple[Any, list[dict[str, Any]]]:
    from hermes_notebook.widgets import Chat

    chat = Chat(hermes.settings())
    sent: list[dict[str, Any]] = []
    chat.send = lambda content, buffers=None: sent.append(content)  # type: ignore[method-assign]
    chat.wait_ready(30)
    return chat, sent


def _settled(chat: Any) -> dict[str, Any]:
    eventually(lambda: not chat.busy and any(m["role"] == "assistant" and m.get("status") == "complete"
                                             for m in chat.snapshot()), 90, "the reply")
    return [m for m in chat.snapshot() if m["role"] == "assistant"][-1]


def _answer(sent: list[dict[str, Any]], request: str) -> dict[str, Any]:
    eventually(lambda: any(m.get("request") == request for m in sent), 30, "the answer")
    return next(m for m in sent if m.get("request") == request)


def test_the_chats_undo_with_files_names_the_files_and_puts_them_back(
    hermes: LocalHermes, hermes_server: str
) -> None:
    """``turn_files`` names the file the last turn edited (newer) and ``undo`` with ``files`` restores it and says
    which; on 0.19.0 the question is refused (the choice is not offered) and nothing changes."""
    target = hermes.workdir / f"chat-undo-{uuid.uuid4().hex[:8]}.txt"
    target.write_text("alpha\n")
    chat, sent = _chat(hermes)
    try:
        chat._dispatch(chat, {"type": "send", "text": f"EDIT {target} alpha ALPHA", "images": []}, [])
        reply = _settled(chat)
        assert target.read_text() == "ALPHA\n"
        chat._dispatch(chat, {"type": "turn_files", "request": "q1", "message_id": reply["id"]}, [])
        answered = _answer(sent, "q1")
        if hermes_server != "newer":
            assert answered["type"] == "error" and "not offered" in answered["message"]
            assert chat.notice == "" and target.read_text() == "ALPHA\n"
            return
        assert answered["type"] == "turn_files" and answered["message_id"] == reply["id"]
        assert [f["path"] for f in answered["files"]] == [target.name]
        assert answered["files"][0]["added"] == 1 and answered["files"][0]["removed"] == 1
        chat._dispatch(chat, {"type": "undo", "message_id": reply["id"], "files": True}, [])
        eventually(lambda: "Put back 1 file(s)" in chat.notice, 60, "the undo's notice")
        assert target.name in chat.notice and target.read_text() == "alpha\n"
        assert not [m for m in chat.snapshot() if m["role"] == "assistant"]
    finally:
        chat.close()
