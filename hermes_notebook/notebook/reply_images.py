"""A reply's images as notebook values: :class:`ReplyImage` (an image output), and reading ``media`` ones in.

A turn's parts name images (:mod:`hermes_notebook.turns.images`): ``inline`` ones carry sniffed, bounded
base64; ``media`` ones are files on the Hermes host, read in through the conversation once, when the turn ends
(:mod:`hermes_notebook.session.media`), so ``Reply.images``, the ``%hermes`` cell and an export have their
bytes; ``remote`` ones are never fetched: displayed, they are a link the user may open.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from ..inert import escape_html, html_block, is_safe_url, redact_urls, terminal_safe
from ..scrub import image_data, scrub

__all__ = ["ReplyImage", "reply_images"]


class ReplyImage:
    """One image a reply names. Displayed: an image output (``image/png`` ...) when its bytes are here, else a
    line saying what and where it is (a ``remote`` image as a link; it never loads by itself).

    ``source`` (``inline``, ``media``, ``remote``), ``mime``, ``alt``, ``path`` (on the Hermes host), ``url``
    (remote), ``note`` (why it is not shown), and ``data`` (the bytes, or None).
    """

    def __init__(self, image: Mapping[str, Any], *, secrets: tuple[object, ...] = ()) -> None:
        self.ref = dict(image)
        self.source: str = str(image.get("source") or "")
        self.mime: str | None = image.get("mime") if image_data(image) else None
        self.alt: str = scrub(str(image.get("alt") or "image"), secrets)
        self.path: str | None = scrub(image["path"], secrets) if isinstance(image.get("path"), str) else None
        self.url: str | None = image.get("url") if isinstance(image.get("url"), str) else None
        self.note: str | None = str(image["note"]) if image.get("note") else None

    @property
    def data(self) -> bytes | None:
        """The image's bytes (a sniffed PNG, JPEG, GIF or WebP), or None when they are not here."""
        if self.mime is None:
            return None
        try:
            return base64.b64decode(str(self.ref["data"]), validate=True)
        except (binascii.Error, ValueError):
            return None

    def describe(self) -> str:
        """``image: chart.png (1,234 bytes, a file on the Hermes host)``: server text, no terminal control in
        it."""
        size = f"{self.ref['bytes']:,} bytes, " if isinstance(self.ref.get("bytes"), int) else ""
        where = {
            "inline": "sent with the message",
            "media": "a file on the Hermes host",
            "remote": f"at {redact_urls(self.url or '')}",
        }.get(self.source, "")
        note = f"; {self.note}" if self.note else ""
        return terminal_safe(f"image: {self.alt} ({size}{where}{note})")

    def __repr__(self) -> str:
        return f"<ReplyImage {self.describe()}>"

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        if self.mime is not None:
            return {self.mime: self.ref["data"], "text/plain": f"<{self.describe()}>"}
        bundle = {"text/plain": f"[{self.describe()}]"}
        if self.source == "remote" and self.url and is_safe_url(self.url):
            host = urlsplit(self.url).hostname or "the link"
            bundle["text/html"] = html_block(
                f'<div class="hn-image-ref">{escape_html(self.describe())}: <a '
                f'href="{escape_html(self.url)}" '
                f'target="_blank" rel="noopener noreferrer nofollow">open it on {escape_html(host)}</a></div>'
            )
        return bundle


def reply_images(message: Mapping[str, Any], *, secrets: tuple[object, ...] = ()) -> list[ReplyImage]:
    """The images every part of ``message`` names, in order."""
    return [
        ReplyImage(image, secrets=secrets)
        for part in message.get("parts") or ()
        for image in part.get("images") or ()
        if isinstance(image, Mapping)
    ]
