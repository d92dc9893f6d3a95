"""The one message idiom of our widgets, kernel side: a view's question carries a ``request`` id, and the
answer carries it back.

Both widgets (the chat and the jobs table) speak it the same way, after anywidget's ``invoke``: the view sends
``{"type": kind, "request": id, ...}`` and waits for the kernel's message with that ``request`` (or an
``{"type": "error", "request": id, "message"}``) until its own timeout (``js/src/invoke.ts``). Messages that
are commands (send, stop, respond, ...) carry no id: their effect arrives as state and change records. The
message types of both directions are TypedDicts in :mod:`.messages`, checked against ``js/src/types/`` by
tests/test_contract.py.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["answer", "refusal"]


def answer(question: Mapping[str, Any] | None, content: dict[str, Any]) -> dict[str, Any]:
    """``content`` as the answer to ``question`` (its ``request`` id copied); unchanged when nobody asked."""
    request = None if question is None else question.get("request")
    return content if request is None else {**content, "request": request}


def refusal(question: Mapping[str, Any], message: str) -> dict[str, Any]:
    """The answer saying a question could not be answered (the view's ``invoke`` rejects with ``message``)."""
    return answer(question, {"type": "error", "message": message})
