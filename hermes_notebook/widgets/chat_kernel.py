"""The chat header's kernel permission modes: what Hermes may do in this notebook's kernel for the chat's
conversation (reads, edits, runs), and Revoke for what was allowed for this session.

Why here: the modes are the kernel's (``kernel/grants.py`` owns them) and change from cells, cards and other
faces; the chat only shows them. The facade hands a source (``KERNEL``) to :func:`follow_kernel_modes`, which
keeps the small synced ``kernel_modes`` traitlet current (None while the conversation does not share the
kernel) and answers the header's ``kernel_revoke`` message by revoking through that source: runs ``allow`` go
back to ``ask``, and sessions allowed reads from a card lose them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from ..session import Conversation

__all__ = ["ModesChat", "ModesSource", "follow_kernel_modes"]


class ModesSource(Protocol):
    """Who owns the modes (:class:`~hermes_notebook.kernel.share.KernelTools`), by sharing conversation."""

    def watch(
        self, conversation: object, callback: Callable[[dict[str, Any] | None], None]
    ) -> Callable[[], None]: ...

    def revoke(self, conversation: object) -> bool: ...


class ModesChat(Protocol):
    """What this uses of :class:`~hermes_notebook.widgets.chat.Chat`."""

    kernel_modes: dict[str, Any] | None
    #: The kernel's tools serve the chat's conversation; a chat moved off it (a profile switch,
    # chat_profiles.py) shows no modes.
    conversation: Conversation

    def on_action(self, name: str, handler: Callable[[dict[str, Any]], None]) -> None: ...


def follow_kernel_modes(chat: ModesChat, source: ModesSource) -> Callable[[], None]:
    """Show the kernel modes of ``chat``'s conversation in its header from now on; returns the
    unsubscribe."""

    shared = chat.conversation

    def show(state: dict[str, Any] | None) -> None:
        chat.kernel_modes = (
            None
            if state is None or chat.conversation is not shared
            else {
                key: state.get(key)
                for key in ("reads", "edits", "runs", "granted", "server", "cells", "notebook")
            }
        )

    def revoke(_content: dict[str, Any]) -> None:
        source.revoke(shared)

    chat.on_action("kernel_revoke", revoke)
    return source.watch(shared, show)
