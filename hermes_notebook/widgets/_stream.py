"""The streaming half of our widgets: change records in, coalesced custom messages out.

Why not traitlets for everything: resending a whole message per delta costs O(n^2) bytes and floods the
browser. So the kernel keeps the full state here, sends live changes as append-only custom messages
(coalesced, at most 30 batches a second), and syncs the ``messages`` traitlet only at message boundaries so a
re-rendered or reloaded view recovers. A view created mid-stream asks for a snapshot (custom messages sent
before a view exists are lost) and then applies only changes with a larger ``seq``.

Secrets: nothing that reaches a traitlet or a custom message here ever holds a key, token or sudo/secret
value; interaction responses for sudo/secret are already redacted by the turn model.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import anywidget
import traitlets

from .. import runtime
from ..coalesce import DEFAULT_MAX_RATE, Coalescer
from ..turns import apply_changes

__all__ = ["STATIC", "StreamingWidget"]

log = logging.getLogger(__name__)

STATIC = Path(__file__).resolve().parent.parent / "static"

_TERMINAL = {"complete", "interrupted", "error", "cancelled"}


class StreamingWidget(anywidget.AnyWidget):
    """Base for widgets that show messages made of parts (the chat and the ``%hermes`` live turn)."""

    _esm = STATIC / "chat.js"
    _css = STATIC / "chat.css"

    #: "chat" shows the composer and session controls; "turn" shows only the conversation (for ``%hermes``).
    mode = traitlets.Unicode("chat").tag(sync=True)
    #: Finished messages (message dicts of the turn-model contract), synced at message boundaries only.
    messages = traitlets.List(traitlets.Dict()).tag(sync=True)
    #: True while a turn runs (shows the stop button).
    busy = traitlets.Bool(False).tag(sync=True)
    #: Prompts waiting behind the running turn.
    queued = traitlets.Int(0).tag(sync=True)
    #: Connection banner: {"status", "retry_in", "message"}.
    connection = traitlets.Dict({"status": "connected", "retry_in": None, "message": None}).tag(sync=True)
    #: A one-line notice for the user (errors, refused attachments), "" when none.
    notice = traitlets.Unicode("").tag(sync=True)

    def __init__(self, *, max_rate: float = DEFAULT_MAX_RATE, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._lock = threading.RLock()
        self._store: dict[str, dict[str, Any]] = {m["id"]: m for m in self.messages}
        self._coalescer = Coalescer(self._send_changes, loop=runtime.get_loop(), max_rate=max_rate)
        self._actions: dict[str, Callable[[dict[str, Any]], None]] = {"snapshot": self._on_snapshot_request}
        #: Bytes of custom messages sent so far (benchmarks read it).
        self.bytes_sent = 0
        self.on_msg(self._dispatch)

    # --- kernel side: feeding changes ---------------------------------------------------------------

    def push(self, changes: Sequence[dict[str, Any]]) -> None:
        """Apply change records to the kernel-side state and stream them to every view. Thread-safe."""
        if not changes:
            return
        with self._lock:
            apply_changes(self._store, changes)
            boundary = any(c.get("op") in ("message", "finish") for c in changes)
        self._coalescer.push(changes)
        if boundary:
            self._sync_messages()

    def reset(self, messages: Iterable[dict[str, Any]]) -> None:
        """Replace the whole conversation (a session switch or a history re-fetch) and tell the views."""
        with self._lock:
            self._store = {m["id"]: m for m in messages}
        self._sync_messages()
        self._on_snapshot_request({})

    def snapshot(self) -> list[dict[str, Any]]:
        """All messages as the views should show them now, live ones included."""
        with self._lock:
            return [dict(m) for m in self._store.values()]

    def _sync_messages(self) -> None:
        # Only finished messages go into the traitlet: a live one would be resent with every boundary.
        with self._lock:
            finished = [m for m in self._store.values() if m.get("status") in _TERMINAL or m.get("role") == "user"]
        self.messages = [dict(m) for m in finished]

    def _send_changes(self, seq: int, changes: list[dict[str, Any]]) -> None:
        self._send_custom({"type": "changes", "seq": seq, "changes": changes})

    def _send_custom(self, content: dict[str, Any]) -> None:
        # Not named ``_send``: that is ipywidgets' own method for state updates (``_send(msg, buffers)``),
        # and overriding it broke every traitlet sync.
        if self.comm is None:  # closed widget
            return
        try:
            self.send(content)
        except Exception:  # a view can go away at any time; the kernel must not care
            log.debug("could not send to the widget's views", exc_info=True)
            return
        self.bytes_sent += _approx_size(content)

    # --- browser side: actions ----------------------------------------------------------------------

    def on_action(self, name: str, handler: Callable[[dict[str, Any]], None]) -> None:
        """Register what to do for a browser message ``{"type": name, ...}``."""
        self._actions[name] = handler

    def _dispatch(self, _widget: Any, content: Any, _buffers: Any) -> None:
        if not isinstance(content, dict) or not isinstance(content.get("type"), str):
            log.warning("ignoring a malformed message from the browser view")
            return
        handler = self._actions.get(content["type"])
        if handler is None:
            log.warning("ignoring unknown browser message type %r", content["type"])
            return
        try:
            handler(content)
        except Exception as exc:  # never let a click raise into the comm handler: show it instead
            log.exception("handling %r failed", content["type"])
            self.notice = f"{content['type']} failed: {exc}"

    def _on_snapshot_request(self, _content: dict[str, Any]) -> None:
        seq = self._coalescer.snapshot_seq()
        self._send_custom({"type": "snapshot", "seq": seq, "messages": self.snapshot()})


def _approx_size(content: dict[str, Any]) -> int:
    import json

    return len(json.dumps(content, separators=(",", ":"), default=str))
