"""How a turn is shown in a cell: a live :class:`~hermes_notebook.widgets.turn.TurnView` in a kernel, streamed
text in terminal IPython, nothing in plain Python; at the end each leaves a static result behind.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import logging
import queue
import sys
import threading
import uuid
from typing import TYPE_CHECKING, Any

from ..inert import terminal_safe
from ..shell import host
from ..turns import sent_prompt_message
from ..turns.labels import label_of
from .results import Reply

if TYPE_CHECKING:
    from ..widgets.turn import TurnView
    from .running import RunningTurn

__all__ = ["Presenter", "TextPresenter", "WidgetPresenter", "presenter_for"]

log = logging.getLogger(__name__)


class Presenter:
    """Shows a turn somewhere; the base class shows nothing."""

    buttons = False

    def finish(self, reply: Reply) -> None:
        """The turn ended: leave a static result behind."""

    def abandon(self) -> None:
        """The turn ended with no reply (it failed, or the wait for it was given up): settle what is shown."""

    def drain(self) -> None:
        """Main-thread housekeeping between pump rounds."""

    def finish_when_done(self, future: concurrent.futures.Future[Reply]) -> None:
        """Leave the static result behind when a turn nobody waits for (``%hermes -b``) ends, well or not."""
        if not self.buttons:  # only a live view has something to replace
            return
        # The future keeps its callbacks, and the handle (``hermes.last_turn``) keeps the future: the callback
        # lets go of this presenter, and so of its closed view, once it ran.
        waiting = [self]

        def finish(done: concurrent.futures.Future[Reply]) -> None:
            presenter = waiting.pop()
            with contextlib.suppress(Exception):
                if not done.cancelled() and done.exception() is None:
                    presenter.finish(done.result())
                else:
                    presenter.abandon()

        future.add_done_callback(finish)


class WidgetPresenter(Presenter):
    """A :class:`TurnView` under a display id; at the end that output becomes the static transcript."""

    buttons = True

    def __init__(self, handle: RunningTurn) -> None:
        from IPython.display import display

        from ..widgets.turn import TurnView

        self.view: TurnView = TurnView(
            on_respond=handle.answer, on_stop=handle.stop, secrets=handle.secrets, images=handle.image
        )
        self.view.busy = True  # shows the stop button while the turn runs
        self.display_id = uuid.uuid4().hex
        if (
            handle.filled
        ):  # what the placeholders became, collapsed above the reply (the cell shows the template)
            self.view.push(
                [
                    {
                        "op": "message",
                        "message": sent_prompt_message(
                            self.display_id, handle.prompt, handle.filled
                        ).to_dict(),
                    }
                ]
            )
        handle.add_listener(self.view.push)
        self.execution_count = getattr(host.ipython(), "execution_count", None)
        display(self.view, display_id=self.display_id)

    def finish(self, reply: Reply) -> None:
        from IPython.display import display

        self._settle(reply.bundle())
        # What the live view showed stays, as image outputs under the transcript (a remote image never loads);
        # only while the turn's cell runs: a turn ending later (``%hermes -b``) would put them in another
        # cell.
        for image in reply.images if host.same_cell(self.execution_count) else ():
            if image.mime is not None:
                display(image)
        reply.shown_live(self.display_id, self.execution_count)

    def abandon(self) -> None:
        from ..render import transcript_bundle

        self._settle(transcript_bundle(self.view.snapshot(), secrets=self.view.secrets))

    def _settle(self, bundle: dict[str, str]) -> None:
        """The live view becomes ``bundle`` (its static twin: what a saved notebook keeps) and closes, so the
        finished turn keeps no comm, widget or store in the kernel (once: a second call does nothing)."""
        from IPython.display import update_display

        if self.view.comm is None:
            return
        self.view.busy = False
        update_display(bundle, raw=True, display_id=self.display_id)
        with contextlib.suppress(Exception):
            self.view.close()


class TextPresenter(Presenter):
    """Terminal IPython: prints the answer as it streams and a line per tool."""

    def __init__(self, handle: RunningTurn, *, direct: bool = False) -> None:
        self._queue: queue.Queue[list[Any]] = queue.Queue()
        self._kinds: dict[str, str] = {}
        self._direct = direct
        self._open_line = False
        from ..widgets.stream_scrub import (
            StreamScrubber,  # pure; loaded here so the facade loads no widget library
        )

        # Keys are scrubbed here too: in a kernel without widgets this text is the cell's saved output.
        self._scrubber = StreamScrubber(handle.secrets)
        handle.add_listener(self._queue.put if not direct else self._print)

    def drain(self) -> None:
        while True:
            try:
                changes = self._queue.get_nowait()
            except queue.Empty:
                return
            self._print(changes)

    def _write(self, text: str) -> None:
        """The one place streamed text reaches the terminal: no escape sequence, ``\\r`` or other control in
        it (model text printed just before an approval prompt could otherwise conceal or overwrite the
        command)."""
        text = terminal_safe(text)
        sys.stdout.write(text)
        sys.stdout.flush()
        self._open_line = not text.endswith("\n")

    def _print(self, changes: list[Any]) -> None:
        for change in self._scrubber.records(changes, lambda _message, part: part in self._kinds):
            op = change.get("op")
            if op == "part":
                part = change["part"]
                self._kinds[part["id"]] = part["kind"]
                if part["kind"] == "tool":
                    label = label_of(part)
                    self._write(
                        ("\n" if self._open_line else "")
                        + f"[tool] {label['name']}: {label['detail'] or ''}\n"
                    )
                elif part["kind"] == "reasoning":
                    self._write(("\n" if self._open_line else "") + "[thinking] " + part.get("text", ""))
                else:
                    self._write(("\n" if self._open_line else "") + part.get("text", ""))
            elif op == "append":
                self._write(change["text"])
            elif op == "patch":
                status = change["fields"].get("status")
                if status in ("error", "cancelled"):
                    self._write(("\n" if self._open_line else "") + f"[tool {status}]\n")
            elif op == "finish":
                if self._open_line:
                    self._write("\n")
                if change.get("error"):
                    self._write(f"[error] {change['error']}\n")

    def finish(self, reply: Reply) -> None:
        self.drain()
        for note in reply.notes:
            self._write(f"[note] {note}\n")
        reply.shown_live(None, getattr(host.ipython(), "execution_count", None))


def presenter_for(handle: RunningTurn, *, blocking: bool) -> Presenter:
    """How ``handle`` shows: nothing (``show=False``, off the main thread, plain Python: no view is made), a
    live view in a kernel, text in terminal IPython."""
    on_main = threading.current_thread() is threading.main_thread()
    where = host.environment()
    if not handle.show or not on_main:
        return Presenter()
    if where == "kernel":
        try:
            return WidgetPresenter(handle)
        except Exception as exc:  # widgets unusable here: fall back to text
            log.warning("cannot show the live view (%s); showing text", exc)
            return TextPresenter(handle, direct=not blocking)
    if where == "terminal":
        return TextPresenter(handle, direct=not blocking)
    return Presenter()
