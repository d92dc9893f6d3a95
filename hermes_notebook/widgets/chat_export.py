"""The chat widget's Export button: the conversation to a file next to the notebook.

Why kernel-side: the file is written where the kernel runs (a notebook's kernel starts in the notebook's
directory), from the kernel's copy of the conversation (already scrubbed with the connection's key and token
as it came in) and through the export scrubber again, so the browser never handles a secret. The view sends
``{"type": "export", "format": "md" | "html" | "ipynb"}``; the answer is the widget's ``notice`` line naming
the file (or saying why not). A click never replaces a file: a taken name gets a ``-1``, ``-2``... suffix.
The file embeds the images the conversation shows (the user asked for a file that stands alone): images Hermes
made are read in through the conversation first (:mod:`hermes_notebook.session.media`); a remote one stays a
named link and is never fetched.
"""

from __future__ import annotations

import re
import time
from collections.abc import Coroutine
from pathlib import Path
from typing import Any, Protocol

from ..errors import HermesUsageError
from ..export import export_messages

__all__ = ["EXPORT_FORMATS", "ExportingView", "export_chat", "on_export"]


class ImageReader(Protocol):
    """Reads in the images Hermes made that messages name (:meth:`Conversation.with_images`)."""

    async def with_images(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]: ...


class ExportingView(Protocol):
    """What the Export button uses of :class:`~hermes_notebook.widgets.chat.Chat` (its public surface
    only)."""

    session: dict[str, Any] | None
    notice: str
    conversation: ImageReader

    def snapshot(self) -> list[dict[str, Any]]: ...
    def run_in_background(self, coro: Coroutine[Any, Any, None], what: str) -> Any: ...


#: What the view may ask for -> file suffix.
EXPORT_FORMATS = {"md": ".md", "html": ".html", "ipynb": ".ipynb"}
#: Fresh names tried (``name-1`` ... ``name-N``) before giving up.
MAX_SUFFIX = 99


def export_chat(
    widget: ExportingView,
    fmt: str = "md",
    directory: str | Path = ".",
    messages: list[dict[str, Any]] | None = None,
) -> Path:
    """Write the widget's conversation (or ``messages``: it with its images read in) to ``directory`` as
    ``hermes-chat-<session>-<time>[-n].<fmt>`` (a new file), its inline images embedded."""
    suffix = EXPORT_FORMATS[fmt]
    session = widget.session or {}
    stem = re.sub(r"[^A-Za-z0-9_-]+", "-", str(session.get("id") or "session")).strip("-")[:60] or "session"
    name = f"hermes-chat-{stem}-{time.strftime('%Y%m%d-%H%M%S')}"
    title = str(session.get("title") or "Hermes chat")
    messages = widget.snapshot() if messages is None else messages
    for n in range(MAX_SUFFIX + 1):
        target = Path(directory) / f"{name}{f'-{n}' if n else ''}{suffix}"
        if target.exists() or target.is_symlink():
            continue
        try:
            return export_messages(messages, target, title=title, images=True)
        except HermesUsageError:
            if not (target.exists() or target.is_symlink()):  # not a name taken meanwhile: a real refusal
                raise
    raise HermesUsageError(
        f"{name}{suffix} and {MAX_SUFFIX} numbered names after it are taken in {directory}"
    )


def on_export(widget: ExportingView, content: dict[str, Any]) -> None:
    """Handle the view's ``export`` message (comm thread): write on the package loop, answer in ``notice``."""
    fmt = content.get("format", "md")
    if fmt not in EXPORT_FORMATS:
        widget.notice = f"Cannot export as {fmt!r}: choose md, html or ipynb."
        return

    async def write() -> None:
        path = export_chat(
            widget, str(fmt), messages=await widget.conversation.with_images(widget.snapshot())
        )
        widget.notice = f"Exported to {path.resolve()}"

    widget.run_in_background(write(), "exporting the conversation")
