"""What reaches a chat from elsewhere: the connection's banner, turns nobody here started, lists that changed.

Why apart from the chat: these arrive on the connection's listener (any thread) and only ever re-render or
re-fetch: the banner follows the connection (disconnected, reconnecting, reconnected: then the history is
fetched again), a turn another client (or a reconnect) left running streams in as it is, and a newer
Dashboard's ``sessions.changed`` re-lists the picker.
"""

from __future__ import annotations

from collections.abc import Coroutine, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from .. import runtime
from .chat_session import banner, short

if TYPE_CHECKING:
    from ..client import ListenerItem
    from .chat_turns import ChatTurns

__all__ = ["ListeningChat", "on_change", "on_listen"]


class ListeningChat(Protocol):
    """What the events use of :class:`~hermes_notebook.widgets.chat.Chat`."""

    connection: dict[str, object]  # the banner (chat_session.banner)
    turns: ChatTurns

    @property
    def closed(self) -> bool: ...

    def run_in_background(self, coro: Coroutine[Any, Any, None], what: str) -> Any: ...

    async def refetch(self) -> None: ...

    async def refresh_sessions(self) -> None: ...

    def holds(self, message_id: str | None) -> bool: ...

    def push(self, changes: Sequence[dict[str, Any]]) -> None: ...


def on_change(chat: ListeningChat, kind: str) -> None:
    """A newer Dashboard says a list changed elsewhere (another client, a cron run): re-list the picker."""
    if kind == "sessions" and not chat.closed:
        chat.run_in_background(chat.refresh_sessions(), "listing sessions")


def on_listen(chat: ListeningChat, item: ListenerItem) -> None:
    """The connection's listener (any thread): drive the banner; re-fetch after a reconnect; stream a turn
    nobody submitted here."""
    if item.kind == "connection":
        retry = float(item.retry_in) if item.retry_in else None
        message = short(item.error) if item.error else None
        if item.status == "disconnected":
            chat.connection = banner("disconnected", retry, message or "The connection to Hermes dropped.")
        elif item.status == "reconnecting":
            chat.connection = banner("reconnecting", retry, message)
        elif item.status in ("reconnected", "connected"):
            chat.connection = banner("reconnected", None, None)
            chat.run_in_background(chat.refetch(), "re-fetching the history after the reconnect")
    elif item.kind == "event":
        if not (item.turn_id or "").startswith("unsolicited-"):
            return  # our own turns stream through their Turn objects
        # A turn nobody submitted here (still running after a reconnect, or from another client).
        runtime.call_soon(_push_unsolicited, chat, list(item.changes or []))
        if item.event is not None and item.event.type == "message.complete" and chat.turns.running is None:
            chat.run_in_background(chat.refetch(), "re-fetching the history")


def _push_unsolicited(chat: ListeningChat, changes: list[dict[str, Any]]) -> None:
    if changes and all(c.get("op") == "message" or chat.holds(c.get("message_id")) for c in changes):
        chat.push(changes)
