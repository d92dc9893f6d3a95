"""The live view of one ``%hermes`` turn: the chat front end without a composer (``mode == "turn"``).

Why a separate class: the magic needs only the conversation part of the chat view (parts streaming in,
approval/clarify buttons, a stop button), and the answers must go to whoever is waiting for the turn, not to
a chat session. So the browser actions here only hand values over: ``respond``/``secret`` call
``on_respond(request_id, value)`` and ``stop`` calls ``on_stop()``.

Those callbacks may run on the kernel's main thread (the comm pump), on a JupyterLab comm subshell thread, or
elsewhere, so they must be thread-safe and tiny (``future.set_result``-style), and must never print: output
from a comm handler is attributed to the comm message and Lab does not show it in the cell.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import traitlets

from . import inbound
from ._stream import StreamingWidget
from .base import Bundle, bundle_hash, bundle_text
from .replies import answer

__all__ = ["TurnView"]

log = logging.getLogger(__name__)

Respond = Callable[[str, str], object]


class TurnView(StreamingWidget):
    """Shows one turn as it streams; its buttons answer interactions and stop the turn.

    Its ESM is a small loader (js/src/turn.ts) that asks for the chat view's code once per page (``bundle``):
    as the widget's state it would travel, and be imported again, with every turn.
    """

    mode = traitlets.Unicode("turn").tag(sync=True)
    _esm = Bundle("turn.js")
    _css = traitlets.Unicode("").tag(sync=True)  # the loader adds the chat view's stylesheet, once per page
    #: Which chat view the loader needs (pages keep the module per hash).
    bundle_hash = traitlets.Unicode("").tag(sync=True)

    @traitlets.default("bundle_hash")
    def _default_bundle_hash(self) -> str:
        return bundle_hash("chat.js", "chat.css")

    def __init__(
        self,
        *,
        on_respond: Respond | None = None,
        on_stop: Callable[[], None] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self._on_respond = on_respond
        self._on_stop = on_stop
        #: Browser actions received so far, by type (tests and the magic read it; values are never kept).
        self.actions_seen: dict[str, int] = {}
        self.on_action("respond", self._respond)
        self.on_action("secret", self._secret)
        self.on_action("stop", self._stop)
        self.on_action("bundle", self._send_bundle)

    def _send_bundle(self, question: dict[str, Any]) -> None:
        """Answer the loader's ``bundle`` question with the chat view's code and stylesheet."""
        self.send_to_views(
            answer(
                question, {"type": "bundle", "esm": bundle_text("chat.js"), "css": bundle_text("chat.css")}
            )
        )

    def _count(self, name: str) -> None:
        self.actions_seen[name] = self.actions_seen.get(name, 0) + 1

    def _pending(self, content: dict[str, Any], kinds: tuple[str, ...], response: str | None) -> None:
        """Refuse an answer unless it is for a pending interaction of this turn, of that kind, among its
        choices."""
        with self._lock:
            message = self._store.get(content["message_id"])
            interaction = inbound.find_interaction(message, content["part_id"], content["request_id"])
        inbound.check_answer(interaction, kinds, response)
        # This view shows one turn: its message is the open one for as long as it streams.
        inbound.check_open_turn(message, (content["message_id"],))

    def _respond(self, content: dict[str, Any]) -> None:
        # ``content`` was checked by inbound.validate in StreamingWidget._dispatch.
        self._count("respond")
        self._pending(content, ("approval", "clarify", "code", "run"), content["response"])
        if self._on_respond is not None:
            self._on_respond(content["request_id"], content["response"])

    def _secret(self, content: dict[str, Any]) -> None:
        # The value goes straight to the waiting turn and is sent once; it is never stored or logged here. It
        # is taken out of the comm message at once: the kernel keeps that message as its shell parent (and
        # IPython as ``parent_header``) until the next shell message arrives.
        self._count("secret")
        value = content.pop("value")
        self._pending(content, (content["kind"],), None)
        if self._on_respond is not None:
            self._on_respond(content["request_id"], value)

    def _stop(self, _content: dict[str, Any]) -> None:
        self._count("stop")
        if self._on_stop is not None:
            self._on_stop()
