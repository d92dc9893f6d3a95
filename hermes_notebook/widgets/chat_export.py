"""The chat widget's Export button: the conversation to a file next to the notebook.

Why kernel-side: the file is written where the kernel runs (a notebook's kernel starts in the notebook's
directory), from the kernel's copy of the conversation, and goes through the export scrubber, so the browser
never handles a secret. The view sends ``{"type": "export", "format": "md" | "html" | "ipynb"}``; the answer
is the widget's ``notice`` line naming the file (or saying why not).
"""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

from ..notebook.export import export_messages

__all__ = ["EXPORT_FORMATS", "export_chat", "on_export"]

#: What the view may ask for -> file suffix.
EXPORT_FORMATS = {"md": ".md", "html": ".html", "ipynb": ".ipynb"}


def _secrets(widget: Any) -> list[object]:
    """The API key and Dashboard token the widget's connection uses (to scrub from the file)."""
    found: list[object] = []
    for holder in (getattr(widget, "_settings", None), getattr(getattr(widget, "_conn", None), "_settings", None)):
        if holder is not None:
            found += [getattr(holder, "api_key", None), getattr(holder, "dashboard_token", None)]
    found.append(getattr(getattr(widget, "_conn", None), "_token", None))
    return [s for s in found if s is not None]


def export_chat(widget: Any, fmt: str = "md", directory: str | Path = ".") -> Path:
    """Write the widget's conversation to ``directory`` as ``hermes-chat-<session>-<time>.<fmt>``."""
    suffix = EXPORT_FORMATS[fmt]
    session = widget.session or {}
    stem = re.sub(r"[^A-Za-z0-9_-]+", "-", str(session.get("id") or "session")).strip("-")[:60] or "session"
    name = f"hermes-chat-{stem}-{time.strftime('%Y%m%d-%H%M%S')}{suffix}"
    title = session.get("title") or "Hermes chat"
    return export_messages(widget.snapshot(), Path(directory) / name, title=str(title), secrets=_secrets(widget))


def on_export(widget: Any, content: dict[str, Any]) -> None:
    """Handle the view's ``export`` message (comm thread): write on the package loop, answer in ``notice``."""
    fmt = content.get("format", "md")
    if fmt not in EXPORT_FORMATS:
        widget.notice = f"Cannot export as {fmt!r}: choose md, html or ipynb."
        return

    async def write() -> None:
        path = export_chat(widget, str(fmt))
        widget.notice = f"Exported to {path.resolve()}"

    widget._run(write(), "exporting the conversation")
