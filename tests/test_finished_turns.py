"""What a finished turn and a long chat leave in the kernel, without a server: one widget class for every
instance, a closed widget freed with its layout, the chat's bounded window of messages, and ``hermes.map`` and
``ask(show=False)`` refusing bad input before anything is sent.

The real-kernel soak is tests/test_soak.py; ``map`` against the real servers is tests/test_map_hermes.py.
"""

from __future__ import annotations

import asyncio
import gc
import json
import warnings
import weakref
from collections.abc import Sequence
from typing import Any

import ipywidgets
import pytest

import hermes_notebook as hn
from hermes_notebook.errors import HermesUsageError
from hermes_notebook.notebook.map_results import NOT_RUN, MapFailure, MapResult
from hermes_notebook.notebook.results import Reply
from hermes_notebook.settings import Secret, Settings
from hermes_notebook.widgets.base import bundle_hash, bundle_text
from hermes_notebook.widgets.progress import MapProgress
from hermes_notebook.widgets.turn import TurnView
from hermes_notebook.widgets.windowed import WindowedWidget
from tests.helpers import eventually

#: Nothing listens here: a request that went out would fail with a connection error, not a usage error.
OFFLINE = Settings(
    api_url="http://127.0.0.1:9",
    api_key=Secret("k" * 32),
    dashboard_url="http://127.0.0.1:9",
    dashboard_token=Secret("t" * 32),
)


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


def test_map_and_quiet_asks_refuse_bad_input_before_sending() -> None:
    """Every bad input is one HermesUsageError naming what is wrong, raised before anything is sent (nothing
    listens at OFFLINE: a request would fail otherwise)."""
    hermes = hn.connect(OFFLINE)
    policies = {"approve": "deny", "clarify": "A"}
    try:
        cases: list[tuple[Any, dict[str, Any], str]] = [
            (["a", "b"], {"concurrency": 0, **policies}, "a whole number >= 1, not 0"),
            (["a"], {"concurrency": 2.5, **policies}, "a whole number >= 1"),
            (["a", 3], policies, "prompt 1 is int, not text"),
            (["a", "  "], policies, "prompt 1 is empty"),
            ("one prompt", policies, "for one prompt use hermes.ask"),
            (["a"], {}, "pass approve= "),
            (["a"], {"approve": "deny"}, "pass clarify= "),
            (["a"], {"approve": "maybe", "clarify": "A"}, "approve= must be one of"),
            (["a"], {"session": "x", **policies}, "does not take session"),
            (["a"], {"resume": ["x"], **policies}, "resume= takes what an earlier hermes.map returned"),
        ]
        for prompts, options, says in cases:
            with pytest.raises(HermesUsageError) as caught:
                hermes.map(prompts, **options)
            assert says in str(caught.value), (options, str(caught.value))
        with pytest.raises(HermesUsageError, match="nobody could answer an approval"):
            hermes.ask("hello", show=False)
        hermes.approve, hermes.clarify = "deny", "A"  # the connection's defaults answer
        with pytest.raises(HermesUsageError, match="resume= holds 1 prompts and this map 2"):
            hermes.map(["a", "b"], resume=MapResult([MapFailure("a", NOT_RUN)]))
        # via="api" asks no questions: an approval policy is enough there.
        hermes.clarify = None
        with pytest.raises(HermesUsageError, match="pass clarify="):
            hermes.ask("hello", show=False)
        with pytest.raises(HermesUsageError, match="clarify is not available with via='api'"):
            hermes.ask("hello", show=False, via="api", clarify="A")
    finally:
        hermes.close()


def test_a_map_result_reads_in_input_order_and_resumes_only_what_did_not_finish() -> None:
    """MapResult: replies and failures in input order, counts, a short inert table, a DataFrame with the
    Series' index; resume= keeps the finished replies and plans only the rest."""
    from hermes_notebook.notebook.mapping import plan_map

    done = Reply(
        {
            "id": "a:1",
            "role": "assistant",
            "status": "complete",
            "parts": [{"kind": "text", "text": "<b>4</b>"}],
        },
        prompt="2+2",
    )
    failed = MapFailure("boom", "failed", RuntimeError("the model failed"))
    result = MapResult([done, failed, MapFailure("later", NOT_RUN)])
    assert result.replies == [done] and result.failures == [failed, result[2]] and not result.ok
    assert result.counts() == {"done": 1, "failed": 1, "stopped": 0, "not run": 1}
    assert repr(result) == "<MapResult 1 done, 1 failed, 1 not run of 3>"
    html = result._repr_html_()
    assert (
        "&lt;b&gt;4&lt;/b&gt;" in html and "<b>4</b>" not in html and "RuntimeError: the model failed" in html
    )
    pandas = pytest.importorskip("pandas")
    frame = result.to_frame(pandas.Index(["x", "y", "z"]))
    assert list(frame.index) == ["x", "y", "z"] and list(frame["status"]) == ["done", "failed", "not run"]

    class Face:
        settings, show, timeout, last_map = OFFLINE, True, None, None

    made: list[str] = []

    def turn(prepared: Any, preview: bool, **options: Any) -> Any:
        made.append(prepared.text)
        return object()

    plan = plan_map(Face(), ["2+2", "boom", "later"], turn, resume=frame, approve="deny", clarify="A")
    assert plan.todo == [1, 2] and plan.kept[0] is done and made == ["boom"]  # the options checked once
    assert asyncio.iscoroutinefunction(hn.Hermes.map_async)
