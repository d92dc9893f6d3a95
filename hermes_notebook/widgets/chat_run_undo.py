"""The Run card's Undo variables, on the kernel side: ``{"type": "undo_run", "run"}`` from a tool part
undoes that approved run's variables (:data:`~hermes_notebook.kernel.undo.last_run.LAST_RUN`) and shows what
was done, or why not, as the chat's notice line and on the run's tool part, whose ``run_undo`` then says it
(no button any more): so the static transcript a saved notebook keeps says it too.

Why here: the offer and the namespace are the kernel's; the chat only carries the click. The click is a user
action handled like Run: on the kernel's main thread, between cells (a comm message arrives there; from any
other thread it is queued for the main thread, :data:`~hermes_notebook.kernel.execute.JOBS`). An older run's
card is refused (a later run replaced its savepoint).
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

from ..kernel.execute import JOBS
from ..kernel.undo.last_run import LAST_RUN

__all__ = ["RunUndoChat", "install_run_undo", "show_outcome", "user_namespace"]


class RunUndoChat(Protocol):
    """What this uses of :class:`~hermes_notebook.widgets.chat.Chat`."""

    notice: str

    def on_action(self, name: str, handler: Callable[[dict[str, Any]], None]) -> None: ...

    def snapshot(self) -> list[dict[str, Any]]: ...

    def push(self, changes: Sequence[dict[str, Any]]) -> None: ...

    def update_static(self) -> None: ...


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
            said = LAST_RUN.undo(namespace(), run)
            chat.notice = said
            show_outcome(chat, run, said)

        if threading.current_thread() is threading.main_thread():
            undo()
        else:
            JOBS.submit(undo)

    chat.on_action("undo_run", on_undo)


def show_outcome(chat: RunUndoChat, run: int, said: str) -> None:
    """Put what Undo of run ``run`` did (``said``) on the tool parts that offered it, and re-render the
    static transcript."""
    patches = [
        {
            "op": "patch",
            "message_id": message["id"],
            "part_id": part["id"],
            "fields": {"run_undo": {"run": run, "offered": False, "text": said}},
        }
        for message in chat.snapshot()
        for part in message.get("parts") or ()
        if isinstance(part.get("run_undo"), Mapping) and part["run_undo"].get("run") == run
    ]
    if patches:
        chat.push(patches)
        chat.update_static()
