"""Reading the ``media`` images a message names (files Hermes made on its host) into ``inline`` ones with
bytes.

Why here: a turn's reply (``Reply.images``), a session's history read for an export, and the chat's Export all
read them the same way, through ``Conversation.image`` (the Dashboard's ``/api/media``: sniffed, bounded), at
most :data:`MAX_READS` per message; one that cannot be read keeps its reference with a note saying why.
"""

from __future__ import annotations

import base64
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

__all__ = ["MAX_READS", "read_media_images"]

log = logging.getLogger(__name__)

#: ``media`` images read per message (each at most ``turns.images.MAX_SHOWN_BYTES``).
MAX_READS = 8


async def read_media_images(
    message: Mapping[str, Any], load: Callable[[str], Awaitable[Any]]
) -> dict[str, Any]:
    """``message`` with its ``media`` images read in (``load``: ``Conversation.image``) as ``inline`` ones
    keeping their path; one that cannot be read keeps its reference and gets a ``note`` saying why. At most
    :data:`MAX_READS` reads; the message is returned unchanged when it names none."""
    parts = message.get("parts") or []
    if not any(
        i.get("source") == "media" for p in parts for i in p.get("images") or () if isinstance(i, Mapping)
    ):
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
    except (
        Exception
    ) as exc:  # outside the media folders, gone, not an image, no Dashboard: say so, keep the rest
        log.info("could not read the image %r: %s", image.get("path"), exc)
        return {**image, "note": f"not shown: {exc}"}
    return {
        **image,
        "source": "inline",
        "mime": read.mime,
        "data": base64.b64encode(read.data).decode("ascii"),
        "bytes": len(read.data),
        "note": None,
    }
