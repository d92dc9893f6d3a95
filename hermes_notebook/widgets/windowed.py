"""A streaming widget that keeps only a window of the newest messages in the kernel: the chat's.

Why: a chat open for days, or a long stored session, would keep every message it ever showed in the
kernel's store (and the views already hold only the newest ones, paging older ones in as the reader scrolls
up). The conversation is on the server; the kernel needs only what views may ask for soon. So at most
:data:`KERNEL_WINDOW` messages stay here: when more arrive, the oldest settled ones are dropped (never one
that still streams or waits), and :attr:`WindowedWidget.before` counts how many precede the first one held.
A view's ``older`` request for messages before the window is answered from the server's stored history
(``stored``, fetched on demand, never kept): by id where the stored copy has the same id, else by position.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import Any

from .. import runtime
from ._stream import OLDER_PAGE_MESSAGES, StreamingWidget

__all__ = ["KERNEL_WINDOW", "WindowedWidget"]

log = logging.getLogger(__name__)

#: Messages a chat keeps in the kernel (the newest): a snapshot sends 100, each older page 200 more.
KERNEL_WINDOW = 400
#: Reads the open session's stored history (the conversation's), for pages before the window.
Stored = Callable[[], Awaitable[Sequence[Mapping[str, Any]]]]
#: A message in one of these states is never dropped: changes still come for it.
UNSETTLED = ("streaming", "queued")


class WindowedWidget(StreamingWidget):
    """:class:`StreamingWidget` holding at most ``window`` messages; ``stored`` reads the rest from the
    server."""

    def __init__(self, *, window: int = KERNEL_WINDOW, stored: Stored | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.window = window
        self._stored = stored
        #: Messages of the conversation before the first one held here (on the server only).
        self.before = 0

    def push(self, changes: Sequence[dict[str, Any]]) -> None:
        """As :meth:`StreamingWidget.push`; a new message may push the oldest settled one out."""
        super().push(changes)
        if any(c.get("op") == "message" for c in changes):
            self._trim()

    def reset(
        self,
        messages: Iterable[Mapping[str, Any]],
        *,
        keep: Callable[[Mapping[str, Any]], bool] | None = None,
    ) -> None:
        """As :meth:`StreamingWidget.reset`: a history longer than the window keeps its newest messages."""
        with self._lock:
            self.before = 0
            super().reset(messages, keep=keep)
            self._trim()

    def _trim(self) -> None:
        with self._lock:
            dropped = self._store.drop_oldest(self.window, lambda m: m.get("status") not in UNSETTLED)
            for mid in dropped:
                self._revs.pop(mid, None)
                self._settled.pop(mid, None)
            self.before += len(dropped)

    def _on_older_request(self, content: dict[str, Any]) -> None:
        """The page before ``before``: from the store while it holds one, else from the server's history."""
        before = content["before"]
        with self._lock:
            ids = list(self._store)
            at = ids.index(before) if before in self._store else -1
            if at > 0 or (at == 0 and not self.before) or (at < 0 and self._stored is None):
                start = max(0, at - OLDER_PAGE_MESSAGES)
                page = [self._store[mid] for mid in ids[start : max(0, at)]]
                self._answer_older(before, page, self.before + start if at >= 0 else 0)
                return
            position = self.before if at == 0 else None
        if self._stored is None:
            self._answer_older(before, [], 0)
        else:
            runtime.submit(self._older_from_server(before, position))

    async def _older_from_server(self, before: str, position: int | None) -> None:
        """Answer a page before the window from the stored history, where ``before`` has its id, or (the
        window's first message, ``position``) where the window starts."""
        assert self._stored is not None
        try:
            history = list(await self._stored())
        except Exception as exc:  # a view asking for more must never see a traceback
            log.info("could not read the stored history for an older page: %s", exc)
            history = []
        ids = [m.get("id") for m in history]
        at = ids.index(before) if before in ids else min(position or 0, len(history))
        start = max(0, at - OLDER_PAGE_MESSAGES)
        self._answer_older(before, [self._scrubber.message(dict(m)) for m in history[start:at]], start)

    def _answer_older(self, before: str, page: list[dict[str, Any]], older: int) -> None:
        """Send one ``older`` answer as of the current seq (every batch up to it has gone out); ``older``:
        how many messages precede the page."""
        with self._lock:
            seq = self._coalescer.snapshot_seq()
            self._send_custom(
                {
                    "type": "older",
                    "seq": seq,
                    "before": before,
                    "messages": [dict(m) for m in page],
                    "revs": {m["id"]: self._revs.get(m["id"], 0) for m in page},
                    "older": older,
                }
            )
