"""What a finished view and a long chat leave in the kernel, without a server: one widget class for every
instance (the %hermes view, the map's progress bar), a closed widget freed with its layout, and the chat's
bounded window of messages that pages older ones in from the server.

The real-kernel soak is tests/notebook/test_soak.py.
"""

from __future__ import annotations

import gc
import json
import warnings
import weakref
from collections.abc import Sequence
from typing import Any

import ipywidgets

from hermes_notebook.widgets.base import bundle_hash, bundle_text
from hermes_notebook.widgets.progress import MapProgress
from hermes_notebook.widgets.turn import TurnView
from hermes_notebook.widgets.windowed import WindowedWidget
from tests.helpers import eventually


def _widgets() -> int:
    """How many widgets ipywidgets has registered (``Widget.widgets``, deprecated in 8 but still the one)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return len(ipywidgets.Widget.widgets)


def test_views_share_one_class_and_a_closed_one_is_freed_with_its_layout() -> None:
    """Each TurnView (and the progress bar) is of its class itself, not a subclass made per instance; closed,
    it leaves no registered widget (its Layout included) and nothing holding it alive."""
    before = _widgets()
    views = [TurnView() for _ in range(3)]
    assert {type(v) for v in views} == {TurnView}
    # Each view's state holds the small loader and the chat view's hash, not the 250 KB view itself.
    assert all(v._esm == bundle_text("turn.js") and len(v._esm) < 2000 for v in views)
    assert {v.bundle_hash for v in views} == {bundle_hash("chat.js", "chat.css")}
    assert all(v._anywidget_id.endswith(".TurnView") and v._css == "" for v in views)
    sent: list[dict[str, Any]] = []
    views[0].send = lambda content, buffers=None: sent.append(content)  # type: ignore[method-assign]
    views[0]._dispatch(views[0], {"type": "bundle", "request": "7"}, None)  # the loader's one question
    assert sent == [
        {"type": "bundle", "request": "7", "esm": bundle_text("chat.js"), "css": bundle_text("chat.css")}
    ]
    bar = MapProgress(3, on_stop=lambda: None)
    assert type(bar) is MapProgress and bar.layout is not None
    assert _widgets() == before + 8  # each widget and its layout
    refs = [weakref.ref(v) for v in (*views, bar)]
    for widget in (*views, bar):
        widget.close()
    del views, bar, widget
    gc.collect()
    assert _widgets() == before
    assert [r() for r in refs] == [None] * 4


def _message(mid: str, role: str = "assistant", status: str = "complete") -> dict[str, Any]:
    text = {"id": "text:0", "kind": "text", "text": f"text of {mid}"}
    return {"id": mid, "role": role, "status": status, "parts": [text], "usage": None, "error": None}


class _Wire:
    def __init__(self, widget: WindowedWidget) -> None:
        self.sent: list[dict[str, Any]] = []
        widget.send = lambda content, buffers=None: self.sent.append(json.loads(json.dumps(content)))  # type: ignore[method-assign]

    def last(self, kind: str) -> dict[str, Any]:
        return next(m for m in reversed(self.sent) if m["type"] == kind)


def test_the_chat_keeps_a_bounded_window_and_pages_older_messages_in_from_the_server() -> None:
    """A chat holds at most ``window`` messages in the kernel (the oldest settled ones go, a streaming one
    stays); snapshots count the rest as older; an older page comes from the store while it holds one, then
    from the server's stored history, by id or by position."""
    stored = [_message(f"m{i}") for i in range(30)]
    reads: list[int] = []

    async def history() -> Sequence[dict[str, Any]]:
        reads.append(1)
        return stored

    widget = WindowedWidget(mode="chat", window=10, stored=history)
    wire = _Wire(widget)
    try:
        widget.reset(stored[:25])
        assert [e["id"] for e in widget.index] == [f"m{i}" for i in range(15, 25)] and widget.before == 15
        widget.push([{"op": "message", "message": _message("live", status="streaming")}])
        widget.push([{"op": "message", "message": _message("m25")}])
        assert widget.before == 17 and len(widget.snapshot()) == 10
        widget._dispatch(widget, {"type": "snapshot"}, None)
        snap = wire.last("snapshot")
        assert snap["partial"] and snap["older"] == 17 and len(snap["messages"]) == 10
        # From the store: the page before m20 (m17..m19), 17 before it.
        widget._dispatch(widget, {"type": "older", "before": "m20"}, None)
        page = wire.last("older")
        assert [m["id"] for m in page["messages"]] == ["m17", "m18", "m19"] and page["older"] == 17
        assert reads == []
        # Before the window's first message: from the server, by id; then before a paged-in one.
        widget._dispatch(widget, {"type": "older", "before": "m17"}, None)
        eventually(lambda: len(reads) == 1 and wire.last("older")["before"] == "m17", what="a server page")
        page = wire.last("older")
        assert [m["id"] for m in page["messages"]] == [f"m{i}" for i in range(17)] and page["older"] == 0
        # A streaming message is never dropped, however many arrive after it.
        for i in range(26, 40):
            widget.push([{"op": "message", "message": _message(f"m{i}")}])
        assert "live" in [e["id"] for e in widget.index]
    finally:
        widget.close()
