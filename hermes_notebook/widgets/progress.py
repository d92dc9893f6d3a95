"""The progress bar of ``hermes.map``: one bar in the cell for many prompts (done / failed / running, elapsed,
ETA) with a Stop button.

Why a widget of its own rather than one view per prompt: a thousand prompts would make a thousand live views
(and comms); the bar is one small model whose counts change as prompts end. The view ticks the
elapsed time itself from ``started`` and counts down to ``eta_end``, so the kernel sends a message only when
a prompt starts or ends. When the map ends, :meth:`MapProgress.settle` replaces the bar with a static line
(what a saved notebook keeps) and closes the widget.

Stop comes from a comm message, on whatever thread the kernel handles it (the comm pump, a subshell): the
handler only calls ``on_stop``, which must be thread-safe and quick.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable
from typing import Any

import traitlets

from ..shell.subshells import follow_frontend_subshells
from . import inbound
from .base import Bundle, LeanWidget

__all__ = ["MapProgress"]

log = logging.getLogger(__name__)


class MapProgress(LeanWidget):
    """One bar for a batch of prompts; ``on_stop`` is called (any thread) when the user clicks Stop."""

    _esm = Bundle("progress.js")
    _css = Bundle("progress.css")

    #: Prompts in the batch, and how many have ended each way / run now.
    total = traitlets.Int(0).tag(sync=True)
    done = traitlets.Int(0).tag(sync=True)
    failed = traitlets.Int(0).tag(sync=True)
    running = traitlets.Int(0).tag(sync=True)
    #: When the batch started and when it should end at the pace so far (epoch milliseconds; 0: unknown).
    started = traitlets.Float(0.0).tag(sync=True)
    eta_end = traitlets.Float(0.0).tag(sync=True)
    #: "running", "stopping" (Stop was clicked: no more start, the running ones are ending), "ended".
    state = traitlets.Unicode("running").tag(sync=True)

    def __init__(self, total: int, *, on_stop: Callable[[], None], **kwargs: Any) -> None:
        super().__init__(total=total, started=time.time() * 1000, **kwargs)
        self._on_stop = on_stop
        self.display_id = uuid.uuid4().hex
        self.on_msg(self._dispatch)
        self.comm_routing = follow_frontend_subshells(self)

    def _dispatch(self, _widget: object, content: object, _buffers: object) -> None:
        try:
            message = inbound.validate(content, inbound.PROGRESS_MESSAGES)
        except inbound.Refused as exc:
            log.warning("refused a message from the progress bar: %s", exc)
            return
        if message["type"] == "stop" and self.state == "running":
            self.state = "stopping"
            self._on_stop()

    def show(self) -> MapProgress:
        """Display the bar under its display id (the one :meth:`settle` replaces)."""
        from IPython.display import display

        display(self, display_id=self.display_id)
        return self

    def update(self, *, done: int, failed: int, running: int, eta_end: float) -> None:
        """New counts (any thread: the package loop sends them as prompts start and end)."""
        with self.hold_sync():
            self.done, self.failed, self.running, self.eta_end = done, failed, running, eta_end

    def settle(self, bundle: dict[str, str]) -> None:
        """The batch ended: the bar becomes ``bundle`` (static: a saved notebook keeps it) and closes."""
        from IPython.display import update_display

        if self.comm is None:
            return
        self.state = "ended"
        update_display(bundle, raw=True, display_id=self.display_id)
        self.close()
