"""The page's Preview button: a user's click, handled like Run (the fork queued on the kernel's main thread,
between cells), its report sent back to that page.

The page sends ``{"type": "preview", "id", "change", "source"}`` (the proposed code cell's source, exactly as
its diff shows it) and may send ``{"type": "preview_stop", "id"}``; the kernel answers
``{"type": "previewed", "id", "report"}`` (:meth:`.report.PreviewReport.to_dict`). The comm's thread only
starts the wait on a thread of its own.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from ...shell.host import ipython
from ..document import DOCUMENT, DocumentLink
from .limits import PreviewLimits
from .report import PreviewReport
from .service import PreviewRequest

__all__ = ["CLICKS", "MAX_ID", "MAX_SOURCE", "PreviewClicks", "follow"]

#: Longest click id and source accepted from the page.
MAX_ID = 100
MAX_SOURCE = 100_000


class PreviewClicks:
    """The page's running previews by click id (so Stop finds them)."""

    def __init__(self, document: DocumentLink) -> None:
        self.document = document
        self._lock = threading.Lock()
        self._running: dict[str, PreviewRequest] = {}

    def clicked(self, client: str, data: Mapping[str, Any]) -> None:
        click, source = data.get("id"), data.get("source")
        if not isinstance(click, str) or not 0 < len(click) <= MAX_ID:
            return
        if not isinstance(source, str) or len(source) > MAX_SOURCE:
            self._tell(client, click, PreviewReport("failed", "the page sent no code to preview"))
            return
        shell = ipython()
        namespace = shell.user_ns if shell is not None else {}
        try:
            limits = PreviewLimits.resolve()
        except ValueError as exc:
            self._tell(client, click, PreviewReport("failed", str(exc)))
            return
        request = PreviewRequest(shell, namespace, source, limits)
        with self._lock:
            self._running[click] = request
        threading.Thread(target=self._wait, args=(client, click, request), daemon=True).start()

    def _wait(self, client: str, click: str, request: PreviewRequest) -> None:
        try:
            report = request.result()
        except Exception as exc:  # told to the page, never raised on a kernel thread
            report = PreviewReport("failed", f"{type(exc).__name__}: {exc}"[:500])
        finally:
            with self._lock:
                self._running.pop(click, None)
        self._tell(client, click, report)

    def stopped(self, client: str, data: Mapping[str, Any]) -> None:
        with self._lock:
            request = self._running.get(str(data.get("id")))
        if request is not None:
            request.stop()

    def _tell(self, client: str, click: str, report: PreviewReport) -> None:
        self.document.tell(client, {"type": "previewed", "id": click, "report": report.to_dict()})


def follow(document: DocumentLink = DOCUMENT) -> PreviewClicks:
    """Handle ``document``'s Preview clicks from now on."""
    clicks = PreviewClicks(document)
    document.on_action("preview", clicks.clicked)
    document.on_action("preview_stop", clicks.stopped)
    return clicks


CLICKS = follow()
