"""What the kernel's cells printed and displayed, copied as it is published: the running cell's output so far
and recent cells' outputs (their plots as PNG), for reads that must neither run user code nor wait for a cell.

Why here and not from the notebook page: while a cell runs, ipykernel < 7.4 handles no message from the page,
a read must answer at once, and without the extension there is no page. Why publishing hooks: they are
ipykernel's own API (``register_hook``) on its output streams (stdout and stderr, called on the IO thread as
each chunk is flushed, about every 0.2 s), its display publisher (``display_data``, ``clear_output``) and,
from ipykernel 7.4, its displayhook (``execute_result``); on 6.x a cell's ``Out`` value is still read by
:mod:`.reading`. The hooks only copy what goes out, and never hold it up. An output belongs to the cell whose
``execute_request`` is its parent (the msg_id recorded when IPython starts the cell, ``pre_run_cell``).

The agent's own runs are captured apart (:meth:`OutputLog.capture`): what approved code displays goes back to
the agent with the result (and shows in its tool part), not into whichever cell happens to be current.

Bounds: per cell the last :data:`TEXT_CHARS` characters of its streams (and how many there were), the text of
its last :data:`MAX_TEXTS` displays, its last :data:`~.images.MAX_IMAGES` PNGs; the last :data:`MAX_CELLS`
cells, and :data:`MAX_IMAGE_TOTAL` bytes of images in all.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from .images import MAX_IMAGES, PNG, SentImage, take_png

__all__ = ["KEPT_MIMES", "MAX_CELLS", "OUTPUTS", "TEXT_CHARS", "Capture", "CellOutput", "OutputLog"]

log = logging.getLogger(__name__)

#: Characters of a cell's stdout/stderr kept (its end: what it printed last).
TEXT_CHARS = 4000
#: Displays whose text (``text/plain``) a cell keeps.
MAX_TEXTS = 5
#: Characters of one display's text kept.
DISPLAY_CHARS = 1500
#: Cells kept (the newest).
MAX_CELLS = 50
#: Bytes of PNG kept over all cells; older cells' images are dropped first.
MAX_IMAGE_TOTAL = 8 * 1024 * 1024
#: What the agent's run keeps of a display for the notebook cell it ran (a cell run for a ``%hermes`` turn).
KEPT_MIMES = ("text/plain", PNG)
#: Displays of one agent's run kept for its cell.
MAX_BUNDLES = 20


@dataclass
class CellOutput:
    """One cell's outputs as published (a copy is handed out: :meth:`OutputLog.cell`)."""

    count: int
    started: float
    ended: float | None = None
    cell_id: str = ""  # the notebook's cell id, when the front end sent it (JupyterLab does)
    text: str = ""  # the end of its stdout/stderr
    chars: int = 0  # characters printed in all
    displays: list[str] = field(default_factory=list)  # the text of its last displays and its result
    images: list[SentImage] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # images not kept, and why

    @property
    def running(self) -> bool:
        return self.ended is None

    def copy(self) -> CellOutput:
        return CellOutput(
            self.count,
            self.started,
            self.ended,
            self.cell_id,
            self.text,
            self.chars,
            list(self.displays),
            list(self.images),
            list(self.skipped),
        )


class Capture:
    """What the agent's run displayed (:meth:`OutputLog.capture`): PNGs and display texts, never published."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.images: list[SentImage] = []
        self.skipped: list[str] = []
        self.displays: list[str] = []
        self.bundles: list[dict[str, Any]] = []  # the displays as a notebook shows them (text and PNG only)

    def add(self, data: Mapping[str, Any], kind: str) -> None:
        """Keep one display's PNG (bounded) and text."""
        n = len(self.images) + len(self.skipped) + 1
        if PNG in data:
            taken = take_png(data[PNG], f"{self.label} {kind} {n}")
            if isinstance(taken, SentImage):
                self.images.append(taken)
                del self.images[:-MAX_IMAGES]
                data = {**data, PNG: taken.data}
            else:
                self.skipped.append(taken)
                data = {k: v for k, v in data.items() if k != PNG}
        kept = {k: v for k, v in data.items() if k in KEPT_MIMES and isinstance(v, str)}
        if kept and len(self.bundles) < MAX_BUNDLES:
            self.bundles.append(kept)
        text = data.get("text/plain")
        if isinstance(text, str) and text.strip():
            self.displays.append(text[:DISPLAY_CHARS])
            del self.displays[:-MAX_TEXTS]


class OutputLog:
    """The kernel's published outputs by cell (see the module docstring); one per process: :data:`OUTPUTS`."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._cells: OrderedDict[int, CellOutput] = OrderedDict()
        self._by_parent: dict[str, int] = {}  # execute_request msg_id -> execution count
        self._running: CellOutput | None = None
        self._executing = 0  # IPython's pre_execute/post_execute: any cell, silent ones too
        self._captures: list[Capture] = []  # the agent's runs, innermost last (main thread only)
        self._shells: list[Any] = []

    # --- following a shell ----------------------------------------------------------------------------------

    def follow(self, shell: Any) -> None:
        """Record ``shell``'s cells from now on (once per shell; call it on the main thread; None: not
        IPython)."""
        if shell is None or any(s is shell for s in self._shells) or not hasattr(shell, "events"):
            return
        self._shells.append(shell)
        shell.events.register("pre_execute", self._pre_execute)
        shell.events.register("post_execute", self._post_execute)
        shell.events.register("pre_run_cell", lambda info=None: self._started(shell, info))
        shell.events.register("post_run_cell", lambda result=None: self._ended())
        for publisher in (getattr(shell, "display_pub", None), getattr(shell, "displayhook", None)):
            register = getattr(publisher, "register_hook", None)
            if callable(register):  # ipykernel (the displayhook's from 7.4)
                register(self._on_display)
        import sys

        for stream in (sys.stdout, sys.stderr):
            register, schedule = (
                getattr(stream, "register_hook", None),
                getattr(getattr(stream, "pub_thread", None), "schedule", None),
            )
            if callable(register) and callable(schedule):
                # OutStream keeps its hooks per thread and calls them on its IO thread, where it flushes.
                schedule(lambda r=register: r(self._on_stream))

    @property
    def busy(self) -> bool:
        """True while the kernel runs a cell (the user's, or a ``%hermes`` cell)."""
        return self._executing > 0

    def _pre_execute(self) -> None:
        self._executing += 1

    def _post_execute(self) -> None:
        self._executing = max(0, self._executing - 1)

    def _started(self, shell: Any, info: Any) -> None:
        # The cell's number is the next In[] slot: IPython stores its input right after pre_run_cell. (Its
        # execution_count is no guide: IPython 9 has counted the cell already, 8 had not.)
        history = getattr(getattr(shell, "history_manager", None), "input_hist_parsed", None)
        if not isinstance(history, list):
            return
        count = len(history)
        header = getattr(getattr(shell, "display_pub", None), "parent_header", None) or {}
        parent = header.get("msg_id") if isinstance(header, Mapping) else None
        cell_id = getattr(info, "cell_id", None)
        record = CellOutput(count, time.monotonic(), cell_id=cell_id if isinstance(cell_id, str) else "")
        with self._lock:
            self._cells[count] = record
            self._cells.move_to_end(count)
            while len(self._cells) > MAX_CELLS:
                self._cells.popitem(last=False)
            if isinstance(parent, str):
                self._by_parent[parent] = count
                while len(self._by_parent) > MAX_CELLS:
                    self._by_parent.pop(next(iter(self._by_parent)))
            self._running = record

    def _ended(self) -> None:
        with self._lock:
            if self._running is not None:
                self._running.ended = time.monotonic()
            self._running = None

    # --- the hooks (they copy, and always pass the message on) ---------------------------------------------

    def _record_of(self, msg: Mapping[str, Any]) -> CellOutput | None:
        parent = msg.get("parent_header")
        msg_id = parent.get("msg_id") if isinstance(parent, Mapping) else None
        count = self._by_parent.get(msg_id) if isinstance(msg_id, str) else None
        return None if count is None else self._cells.get(count)

    def _on_stream(self, msg: Any) -> Any:
        try:
            content = msg.get("content") or {}
            text = content.get("text")
            if isinstance(text, str) and text:
                with self._lock:
                    record = self._record_of(msg)
                    if record is not None:
                        record.text = (record.text + text)[-TEXT_CHARS:]
                        record.chars += len(text)
        except Exception:  # a hook must never stop the kernel's output
            log.debug("output log: a stream message was not recorded", exc_info=True)
        return msg

    def _on_display(self, msg: Any) -> Any:
        try:
            kind = (msg.get("header") or {}).get("msg_type")
            content = msg.get("content") or {}
            if self._captures and threading.current_thread() is threading.main_thread():
                if kind in ("display_data", "execute_result") and isinstance(content.get("data"), Mapping):
                    self._captures[-1].add(content["data"], "display")
                return None if kind in ("display_data", "update_display_data", "clear_output") else msg
            with self._lock:
                record = self._record_of(msg)
                if record is None:
                    return msg
                if kind == "clear_output":  # what the notebook shows of the cell is gone too
                    record.text, record.displays, record.images = "", [], []
                elif kind in ("display_data", "update_display_data", "execute_result"):
                    self._add(
                        record, content.get("data"), "result" if kind == "execute_result" else "display"
                    )
        except Exception:  # a hook must never stop the kernel's output
            log.debug("output log: a display message was not recorded", exc_info=True)
        return msg

    def _add(self, record: CellOutput, data: Any, kind: str) -> None:
        if not isinstance(data, Mapping):
            return
        text = data.get("text/plain")
        if (
            kind != "result" and isinstance(text, str) and text.strip()
        ):  # a result's value is read from Out[n]
            record.displays.append(text[:DISPLAY_CHARS])
            del record.displays[:-MAX_TEXTS]
        if PNG in data:
            n = len(record.images) + len(record.skipped) + 1
            taken = take_png(data[PNG], f"In[{record.count}] {kind} {n}")
            if isinstance(taken, SentImage):
                record.images.append(taken)
                del record.images[:-MAX_IMAGES]
                self._trim_images()
            else:
                record.skipped.append(taken)
                del record.skipped[:-MAX_IMAGES]

    def _trim_images(self) -> None:
        total = sum(image.size for cell in self._cells.values() for image in cell.images)
        for cell in self._cells.values():  # oldest first
            while total > MAX_IMAGE_TOTAL and cell.images:
                total -= cell.images.pop(0).size

    # --- reading (any thread) -------------------------------------------------------------------------------

    def running(self) -> CellOutput | None:
        """A copy of the running cell's record (its output so far), None when no cell runs."""
        with self._lock:
            return None if self._running is None else self._running.copy()

    def cell(self, count: int) -> CellOutput | None:
        """A copy of cell ``count``'s record, None when it was not recorded (before sharing, or long ago)."""
        with self._lock:
            record = self._cells.get(count)
            return None if record is None else record.copy()

    # --- the agent's runs (main thread) ---------------------------------------------------------------------

    @contextlib.contextmanager
    def capture(self, label: str) -> Iterator[Capture]:
        """Take what runs inside displays (on this, the main, thread) instead of publishing it."""
        captured = Capture(label)
        self._captures.append(captured)
        try:
            yield captured
        finally:
            self._captures.remove(captured)

    def take(self, data: Mapping[str, Any]) -> bool:
        """Keep one display in the innermost capture (main thread): True when a capture took it (a preview's
        copy publishes nothing: its display publisher calls this instead)."""
        if not self._captures or threading.current_thread() is not threading.main_thread():
            return False
        self._captures[-1].add(data, "display")
        return True


#: The one log of this process.
OUTPUTS = OutputLog()
