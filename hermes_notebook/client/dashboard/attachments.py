"""Attachments for ``prompt.submit``: inline images only, checked before anything is sent.

Seed 000 ("发出的请求"): only inline ``image/*`` attachments; anything else raises an error whose code is
``UNSUPPORTED_ATTACHMENT`` without sending a request. The Dashboard takes images through
``image.attach_bytes`` (base64, at most 25 MB, docs/protocol/dashboard.md §3.1 prompt.submit).
"""

from __future__ import annotations

import base64
import mimetypes
import os
from collections.abc import Iterable
from pathlib import Path

from ...errors import HermesUnsupportedAttachmentError, HermesUsageError

__all__ = ["MAX_IMAGE_BYTES", "ImageInput", "attach_params", "extension", "prepare_images"]

#: ``image.attach_bytes`` refuses images over 25 MB (§3.1, §7 "Other limits"); we refuse first.
MAX_IMAGE_BYTES = 25 * 1024 * 1024

ImageInput = tuple[str, bytes] | str | os.PathLike[str]


def extension(mime: str) -> str:
    ext = mimetypes.guess_extension(mime) or "." + mime.split("/", 1)[1].split("+", 1)[0]
    return ext.lstrip(".")


def attach_params(live_id: str, mime: str, data: bytes) -> dict[str, str]:
    """``image.attach_bytes`` params: the image is queued for the session's next ``prompt.submit``."""
    return {
        "session_id": live_id,
        "content_base64": base64.b64encode(data).decode("ascii"),
        "ext": extension(mime),
    }


def prepare_images(images: Iterable[ImageInput] | None) -> list[tuple[str, bytes]]:
    """Validate every attachment before anything is sent (inline image/* only: docs/protocol/dashboard.md
    §3.1)."""
    out: list[tuple[str, bytes]] = []
    for item in images or ():
        if isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], str):
            mime, data = item
            if not mime.lower().startswith("image/") or not isinstance(data, (bytes, bytearray, memoryview)):
                raise HermesUnsupportedAttachmentError(
                    f"only inline image/* attachments are supported, not {mime!r}"
                )
            data = bytes(data)
        elif isinstance(item, (str, os.PathLike)):
            path = Path(item)
            mime = mimetypes.guess_type(path.name)[0] or ""
            if not mime.startswith("image/"):
                raise HermesUnsupportedAttachmentError(f"only image files can be attached, not {path.name!r}")
            try:
                data = path.read_bytes()
            except OSError as exc:
                raise HermesUsageError(f"cannot read the image {path.name!r}: {exc.strerror}") from exc
        else:
            raise HermesUnsupportedAttachmentError(
                f"an attachment must be a (mime_type, bytes) pair or an image path, not {type(item).__name__}"
            )
        if not data:
            raise HermesUsageError("an attached image is empty")
        if len(data) > MAX_IMAGE_BYTES:
            raise HermesUsageError(
                f"an attached image is {len(data):,} bytes; the Dashboard takes at most 25 MB"
            )
        out.append((mime.lower(), data))
    return out
