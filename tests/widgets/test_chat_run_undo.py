"""The chat's Undo variables button on the kernel side: ``undo_run`` is checked, undoes that approved run's
variables on the main thread and shows what was done as the notice line and on the run's tool part, so the
static transcript a saved notebook keeps says it; an older run's card is refused."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from hermes_notebook.kernel.undo.last_run import LAST_RUN, REPLACED
from hermes_notebook.render import transcript_bundle
from hermes_notebook.turns.changes import RunUndoDict
from hermes_notebook.widgets import inbound
from hermes_notebook.widgets._stream import StreamingWidget
from hermes_notebook.widgets.chat_run_undo import install_run_undo


class NoticeChat(StreamingWidget):
    """A chat as the handler sees it: the real message store (push, snapshot), its actions, its notice line
    and its static twin, rendered as the chat's (:func:`~hermes_notebook.render.transcript_bundle`)."""

    def __init__(self) -> None:
        self.actions: dict[str, Callable[[dict[str, Any]], None]] = {}
        super().__init__(mode="chat")
        self.notice = ""
        self.static: dict[str, str] = {}

    def on_action(self, name: str, handler: Callable[[dict[str, Any]], object]) -> None:
        self.actions[name] = handler  # type: ignore[assignment]

    def update_static(self) -> None:
        self.static = transcript_bundle(self.snapshot())


def _reply_with_run(chat: NoticeChat, card: RunUndoDict) -> None:
    """A finished reply whose run_code tool part offered ``card`` (as the turn linked it)."""
    part = {
        "id": "tool:t1",
        "kind": "tool",
        "text": None,
        "name": "run_code",
        "status": "complete",
        "arguments": None,
        "preview": None,
        "result": "ran",
        "duration": None,
        "interaction": None,
        "run_undo": card,
    }
    message = {"id": "m1", "role": "assistant", "status": "complete", "parts": [part], "usage": None}
    chat.push([{"op": "message", "message": {**message, "error": None}}])


def test_undo_run_restores_the_runs_variables_and_refuses_an_older_runs_card() -> None:
    """Two approved runs: the first run's card is refused (a later run replaced it), nothing changes; the
    last run's card restores ``x`` and deletes ``y``, said on the notice line; a bad run number is named."""
    namespace: dict[str, Any] = {"x": [1]}
    chat, cards = NoticeChat(), list[RunUndoDict]()
    install_run_undo(chat, lambda: namespace)
    LAST_RUN.run(namespace, "x = [2]", None, cards.append)
    LAST_RUN.run(namespace, "x = x + [3]\ny = 1", None, cards.append)
    _reply_with_run(chat, cards[1])
    chat.update_static()
    assert (
        "Undo variables offered: Puts back x and deletes y, as before this run." in chat.static["text/plain"]
    )
    chat.actions["undo_run"](
        inbound.validate({"type": "undo_run", "run": cards[0]["run"]}, inbound.CHAT_MESSAGES)
    )
    assert chat.notice == REPLACED and namespace["x"] == [2, 3]
    chat.actions["undo_run"](
        inbound.validate({"type": "undo_run", "run": cards[1]["run"]}, inbound.CHAT_MESSAGES)
    )
    assert (
        chat.notice.startswith("Undone: restored x; deleted y. Files")
        and namespace["x"] == [2]
        and "y" not in namespace
    )
    part = chat.snapshot()[0]["parts"][0]  # the tool part says what was done: no button any more
    assert part["run_undo"] == {"run": cards[1]["run"], "offered": False, "text": chat.notice}
    for mime in ("text/plain", "text/html"):  # what the saved notebook keeps
        assert "Undone: restored x; deleted y." in chat.static[mime]
        assert "other effects of the run were not undone" in chat.static[mime]
        assert "Undo variables offered" not in chat.static[mime]
    with pytest.raises(inbound.Refused, match="run must be a run number"):
        inbound.validate({"type": "undo_run", "run": "all"}, inbound.CHAT_MESSAGES)
