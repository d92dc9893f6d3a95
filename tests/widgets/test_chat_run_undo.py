"""The chat's Undo variables button on the kernel side: ``undo_run`` is checked, undoes that approved run's
variables on the main thread and shows what was done as the notice line; an older run's card is refused."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from hermes_notebook.kernel.undo.last_run import LAST_RUN, REPLACED
from hermes_notebook.turns.changes import RunUndoDict
from hermes_notebook.widgets import inbound
from hermes_notebook.widgets.chat_run_undo import install_run_undo


class NoticeChat:
    """A chat as the handler sees it: its actions and its notice line."""

    def __init__(self) -> None:
        self.notice = ""
        self.actions: dict[str, Callable[[dict[str, Any]], None]] = {}

    def on_action(self, name: str, handler: Callable[[dict[str, Any]], None]) -> None:
        self.actions[name] = handler


def test_undo_run_restores_the_runs_variables_and_refuses_an_older_runs_card() -> None:
    """Two approved runs: the first run's card is refused (a later run replaced it), nothing changes; the
    last run's card restores ``x`` and deletes ``y``, said on the notice line; a bad run number is named."""
    namespace: dict[str, Any] = {"x": [1]}
    chat, cards = NoticeChat(), list[RunUndoDict]()
    install_run_undo(chat, lambda: namespace)
    LAST_RUN.run(namespace, "x = [2]", None, cards.append)
    LAST_RUN.run(namespace, "x = x + [3]\ny = 1", None, cards.append)
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
    with pytest.raises(inbound.Refused, match="run must be a run number"):
        inbound.validate({"type": "undo_run", "run": "all"}, inbound.CHAT_MESSAGES)
