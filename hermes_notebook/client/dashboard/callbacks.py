"""Running a connection's user callbacks: ``listen`` callbacks, ``on_change`` and ``on_error``, and their
tasks.

One bad callback never stops the others, the read loop or a reconnect: what it raises goes to ``on_error``
(``"listener"``), else to the log. An awaitable a listener returns is awaited in a background task, which
:meth:`Callbacks.cancel` ends when the connection closes.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Awaitable, Callable
from typing import Any, Literal

from .session import Listener, ListenerItem

__all__ = ["Callbacks", "ErrorKind", "OnChange", "OnError"]

logger = logging.getLogger("hermes_notebook.client.dashboard.connection")

#: What ``on_error(kind, error)`` is told about: a bad frame, a callback that raised, a failed resume.
ErrorKind = Literal["frame", "listener", "listen"]
OnError = Callable[[str, BaseException], Any]
#: ``on_change(kind)`` for a newer Dashboard's "refetch" broadcasts: ``sessions``, ``cron``, ``platforms``...
OnChange = Callable[[str], Any]


class Callbacks:
    """The user callbacks of one connection and the background tasks started for it."""

    def __init__(self, on_error: OnError | None) -> None:
        self.on_error = on_error
        self.change_listeners: list[OnChange] = []  # copy-on-write: a callback may remove itself
        self.background: set[asyncio.Task[Any]] = set()

    def deliver(self, listeners: list[Listener], item: ListenerItem) -> None:
        """Hand ``item`` to each listener; an awaitable result is awaited in the background."""
        for callback in listeners:
            try:
                result = callback(item)
                if inspect.isawaitable(result):
                    self.spawn(self._await_listener(result))
            except Exception as exc:  # noqa: BLE001 - one bad callback must not stop the others
                self.report("listener", exc)

    def on_change(self, callback: OnChange) -> Callable[[], None]:
        """Add an ``on_change`` callback; returns ``off()``."""
        self.change_listeners = [*self.change_listeners, callback]

        def off() -> None:
            self.change_listeners = [c for c in self.change_listeners if c is not callback]

        return off

    def changed(self, kind: str) -> None:
        """A refetch broadcast: call every ``on_change`` callback with its kind."""
        for callback in self.change_listeners:
            try:
                callback(kind)
            except Exception as exc:  # noqa: BLE001 - one bad callback must not stop the others
                self.report("listener", exc)

    def report(self, kind: str, error: BaseException) -> None:
        """An internal fault (``frame``, ``listener``, ``listen``): to ``on_error``, else the log."""
        if self.on_error is not None:
            try:
                self.on_error(kind, error)
                return
            except Exception:  # noqa: BLE001 - fall back to the log
                logger.exception("on_error(%r) raised", kind)
        logger.warning("Dashboard %s error: %s", kind, error, exc_info=kind == "listener")

    def spawn(self, coro: Awaitable[Any]) -> None:
        """Run ``coro`` in a task kept until it ends (or :meth:`cancel`)."""
        task = asyncio.ensure_future(coro)
        self.background.add(task)
        task.add_done_callback(self.background.discard)

    def cancel(self) -> None:
        """Cancel every background task (the connection closed)."""
        for task in list(self.background):
            task.cancel()

    async def _await_listener(self, awaitable: Awaitable[Any]) -> None:
        try:
            await awaitable
        except Exception as exc:  # noqa: BLE001
            self.report("listener", exc)
