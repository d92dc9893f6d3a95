"""The Run card's Undo variables, on the kernel side: ``{"type": "undo_run", "run"}`` from a tool part
undoes that approved run's variables (:data:`~hermes_notebook.kernel.undo.last_run.LAST_RUN`) and shows what
was done, or why not, as the chat's notice line.

Why here: the offer and the namespace are the kernel's; the chat only carries the click. The click is a user
action handled like Run: on the kernel's main thread, between cells (a comm message arrives there; from any
other thread it is queued for the main thread, :data:`~hermes_notebook.kernel.execute.JOBS`). An older run's
card is refused (a later run replaced its savepoint).
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from typing import Any, Protocol

from ..kernel.execute import JOBS
from ..kernel.undo.last_run import LAST_RUN

__all__ = ["RunUndoChat", "install_run_undo", "user_namespace"]


class RunUndoChat(Protocol):
    """What this uses of :class:`~hermes_notebook.widgets.chat.Chat`."""

    notice: str

    def on_action(self, name: str, handler: Callable[[dict[str, Any]], None]) -> None: ...


def user_namespace() -> dict[str, Any]:
    """The kernel's user namespace (IPython's, else ``__main__``'s): where approved runs ran."""
    try:
        from IPython import get_ipython
    except ImportError:  # a plain Python process
        shell = None
    else:
        shell = get_ipython()
    return shell.user_ns if shell is not None else vars(sys.modules["__main__"])


def install_run_undo(chat: RunUndoChat, namespace: Callable[[], dict[str, Any]] = user_namespace) -> None:
    """Answer the tool part's Undo variables button from now on."""

    def on_undo(content: dict[str, Any]) -> None:
        run = content["run"]

        def undo() -> None:
            chat.notice = LAST_RUN.undo(namespace(), run)

        if threading.current_thread() is threading.main_thread():
            undo()
        else:
            JOBS.submit(undo)

    chat.on_action("undo_run", on_undo)
