"""A reply's images as notebook values: :class:`ReplyImage` (an image output), and reading ``media`` ones in.

A turn's parts name images (:mod:`hermes_notebook.turns.images`): ``inline`` ones carry sniffed, bounded base64;
``media`` ones are files on the Hermes host, read here through the conversation (``Conversation.image``, the
Dashboard's ``/api/media``) once, when the turn ends, so ``Reply.images``, the ``%hermes`` cell and an export
have their bytes; ``remote`` ones are never fetched: displayed, they are a link the user may open.
"""

from __future__ import annotations

import base64
import binascii
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any
from urllib.parse import urlsplit

from ..inert import escape_html, html_block, is_safe_url, redact_urls, terminal_safe
from ..scrub import image_data, scrub

__all__ = ["MAX_READS", "ReplyImage", "read_media_images", "reply_images"]

log = logging.getLogger(__name__)

#: ``media`` images read per reply (each at most ``turns.images.MAX_SHOWN_BYTES``).
MAX_READS = 8


class ReplyImage:
    """One image a reply names. Displayed: an image output (``image/png`` ...) when its bytes are here, else a line
    saying what and where it is (a ``remote`` image as a link; it never loads by itself).

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
        """``image: chart.png (1,234 bytes, a file on the Hermes host)``: server text, no terminal control in it."""
        size = f"{self.ref['bytes']:,} bytes, " if isinstance(self.ref.get("bytes"), int) else ""
        where = {"inline": "sent with the message", "media": "a file on the Hermes host",
                 "remote": f"at {redact_urls(self.url or '')}"}.get(self.source, "")
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
                f'<div class="hn-image-ref">{escape_html(self.describe())}: <a href="{escape_html(self.url)}" '
                f'target="_blank" rel="noopener noreferrer nofollow">open it on {escape_html(host)}</a></div>')
        return bundle


def reply_images(message: Mapping[str, Any], *, secrets: tuple[object, ...] = ()) -> list[ReplyImage]:
    """The images every part of ``message`` names, in order."""
    return [ReplyImage(image, secrets=secrets) for part in message.get("parts") or ()
            for image in part.get("images") or () if isinstance(image, Mapping)]


async def read_media_images(message: Mapping[str, Any], load: Callable[[str], Awaitable[Any]]) -> dict[str, Any]:
    """``message`` with its ``media`` images read in (``load``: ``Conversation.image``) as ``inline`` ones keeping
    their path; one that cannot be read keeps its reference and gets a ``note`` saying why. At most
    :data:`MAX_READS` reads; the message is returned unchanged when it names none."""
    parts = message.get("parts") or []
    if not any(i.get("source") == "media" for p in parts for i in p.get("images") or () if isinstance(i, Mapping)):
        return dict(message)
    reads = 0
    out = []
    for part in parts:
        images = []
        for image in part.get("images") or ():
            if isinstance(image, Mapping) and image.get("source") == "media" and reads < MAX_READS:
                reads += 1
                images.append(await _read(image, load))
            else:
                images.append(image)
        out.append({**part, "images": images} if part.get("images") else part)
    return {**message, "parts": out}


async def _read(image: Mapping[str, Any], load: Callable[[str], Awaitable[Any]]) -> dict[str, Any]:
    try:
        read = await load(str(image.get("path")))
    except Exception as exc:  # outside the media folders, gone, not an image, no Dashboard: say so, keep the rest
        log.info("could not read the image %r: %s", image.get("path"), exc)
        return {**image, "note": f"not shown: {exc}"}
    return {**image, "source": "inline", "mime": read.mime, "data": base64.b64encode(read.data).decode("ascii"),
            "bytes": len(read.data), "note": None}
