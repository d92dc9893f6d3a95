"""The chat widget's Export button, kernel side, on the REAL Dashboard: the file lands next to the
notebook."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import nbformat
import pytest

from hermes_notebook.widgets import Chat
from tests.helpers import eventually


def test_export_button_writes_the_conversation_next_to_the_notebook(
    hermes_factory: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``export`` writes md/ipynb into the kernel's directory, names the file in the notice, and scrubs
    secrets."""
    hermes = hermes_factory()  # its own server: the token typed below must not reach other tests' sessions
    monkeypatch.chdir(tmp_path)  # a notebook's kernel runs in the notebook's directory
    settings = hermes.settings()
    marker = f"chat-export-{uuid.uuid4().hex[:8]}"
    chat = Chat(settings)
    try:
        chat.wait_ready(30)
        chat.send_prompt(f"RUN echo {marker} {settings.dashboard_token.reveal()}")
        eventually(
            lambda: any(m["role"] == "assistant" and m["status"] == "complete" for m in chat.snapshot()),
            60,
            "the reply",
        )
        eventually(lambda: not chat.busy, 30, "the end of the turn")
        for fmt in ("md", "ipynb"):
            chat.notice = ""
            chat._dispatch(chat, {"type": "export", "format": fmt}, [])
            eventually(lambda: chat.notice.startswith("Exported to "), 30, f"the {fmt} export")
            path = Path(chat.notice.removeprefix("Exported to "))
            assert path.parent == tmp_path.resolve() and path.suffix == f".{fmt}"
            text = path.read_text(encoding="utf-8")
            assert f"RUN echo {marker}" in text and "Tool terminal(echo " in text
            assert settings.dashboard_token.reveal() not in text and settings.api_key.reveal() not in text
        notebook = nbformat.read(path, as_version=4)
        nbformat.validate(notebook)
        assert [c.metadata["hermes"]["role"] for c in notebook.cells[1:]] == ["user", "assistant"]
        chat._dispatch(chat, {"type": "export", "format": "pdf"}, [])
        assert chat.notice == "Cannot export as 'pdf': choose md, html or ipynb."
    finally:
        chat.close()
