"""The chat's ``/reproduce``: it is listed among the composer's commands, finds the chat's notebook (the
page's, or ``JPY_SESSION_NAME``), runs the reproducibility check there (a real fresh kernel) and answers the
view with the report as command output; where the notebook cannot be told it says so."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path
from typing import Any

import pytest

from hermes_notebook.kernel.document import DOCUMENT
from hermes_notebook.widgets import chat_reproduce
from hermes_notebook.widgets.chat_session import install_session_details
from tests.helpers import FIXTURES


class FakeChat:
    """What the chat's session handlers use of the Chat: its actions, the answers sent to the view."""

    session_id = None
    model = ""
    context_usage = None
    notice = ""

    def __init__(self) -> None:
        self.actions: dict[str, Any] = {}
        self.sent: list[dict[str, Any]] = []
        self.conversation = self
        self.pending: list[Any] = []

    async def commands(self, session: Any) -> list[dict[str, str]]:
        return [{"name": "/model", "description": "Switch models", "category": "Session"}]

    def on_action(self, name: str, handler: Any) -> None:
        self.actions[name] = handler

    def observe(self, handler: Any, names: Any = None, type: str = "change") -> None:
        pass

    def run_in_background(self, coro: Any, what: str) -> None:
        self.pending.append(coro)

    def send_to_views(self, content: dict[str, Any]) -> None:
        self.sent.append(content)

    def scrub_value(self, value: Any) -> Any:
        return value


def _ask(chat: FakeChat, action: str, **question: Any) -> dict[str, Any]:
    chat.actions[action]({"request": 7, **question})
    for coro in chat.pending:
        try:
            asyncio.run(coro)
        except Exception:  # the view got the refusal; the chat's notice line would show it
            pass
    chat.pending.clear()
    return chat.sent[-1]


def test_reproduce_from_the_chat_checks_its_notebook_and_shows_the_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``/reproduce`` is in the command list; with ``JPY_SESSION_NAME`` naming the notebook it runs the check
    (cell 4 changed, cell 5's NameError, cell 6 not reached) and the view gets the report's text; without a
    notebook, or with arguments, a refusal says what to do instead."""
    path = tmp_path / "drifted.ipynb"
    shutil.copy(FIXTURES / "reproduce_drift.ipynb", path)
    chat = FakeChat()
    install_session_details(chat)  # type: ignore[arg-type]
    listed = _ask(chat, "commands")
    assert [c["name"] for c in listed["commands"]] == ["/model", "/reproduce"]

    monkeypatch.chdir(tmp_path / "..")
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    assert not DOCUMENT.attached and chat_reproduce.chat_notebook() is None
    refused = _ask(chat, "command", line="/reproduce")
    assert "cannot tell which notebook" in str(refused), refused

    monkeypatch.setenv("JPY_SESSION_NAME", str(path))
    assert chat_reproduce.chat_notebook() == path
    assert "takes no arguments" in str(_ask(chat, "command", line="/reproduce other.ipynb"))
    out = _ask(chat, "command", line="/reproduce")
    assert (out["type"], out["command"]) == ("command_output", "/reproduce"), out
    assert out["output"].startswith(
        "drifted.ipynb does not reproduce: 3 same, 1 changed, 1 error, 1 not reached"
    )
    assert "NameError: name 'scale' is not defined" in out["output"] and "-41" in out["output"]
    assert out["warning"].startswith("drifted.ipynb does not reproduce")
