"""Images a kernel tool sends to the model: PNG outputs the kernel already produced, checked and bounded.

Why only these: an image is taken from a ``display_data`` / ``execute_result`` the kernel published (a cell's
plot, a figure the approved code made), never rendered on demand from an arbitrary object (a read must not run
user
code: ``savefig`` on the user's object would). Why PNG only: it is what Jupyter's plotting publishes, and its
size is in its header, so it can be checked without decoding the pixels (no imaging library). A bigger image
is named in the text instead of sent ("too large to send"): the model's context pays for every byte, on every
later turn too.
"""

from __future__ import annotations

import base64
import binascii
import struct
from dataclasses import dataclass
from typing import Any

__all__ = ["MAX_IMAGES", "MAX_SENT_BYTES", "MAX_SIDE", "PNG", "SentImage", "ToolAnswer", "take_png"]

#: Bytes of one PNG at most (a 640x480 matplotlib figure is 20-60 KB).
MAX_SENT_BYTES = 512 * 1024
#: Pixels of an image's longer side at most.
MAX_SIDE = 4096
#: Images one tool result carries at most (the newest are kept).
MAX_IMAGES = 4

PNG = "image/png"
_SIGNATURE = b"\x89PNG\r\n\x1a\n"


@dataclass(frozen=True)
class SentImage:
    """One PNG as it goes to the model: base64 ``data``, its size, and where it came from (``Out[5] display
    2``)."""

    data: str
    width: int
    height: int
    size: int
    label: str
    mime: str = PNG

    def describe(self) -> str:
        """``image/png 640x480, 34 KB (Out[5] display 2)``."""
        return f"{self.mime} {self.width}x{self.height}, {max(1, round(self.size / 1024))} KB ({self.label})"


@dataclass(frozen=True)
class ToolAnswer:
    """A tool's result: the text (bounded, scrubbed by the caller) and the images sent with it."""

    text: str
    images: tuple[SentImage, ...] = ()

    @classmethod
    def of(cls, value: str | ToolAnswer) -> ToolAnswer:
        return value if isinstance(value, ToolAnswer) else cls(value)


def take_png(data: Any, label: str) -> SentImage | str:
    """The PNG in an output's ``image/png`` value (base64 text, or bytes), or why it is not sent."""
    if isinstance(data, (bytes, bytearray)):
        raw = bytes(data)
    elif isinstance(data, str):
        if len(data) > MAX_SENT_BYTES * 4 // 3 + 8:
            return f"{label}: a PNG of about {len(data) * 3 // 4 // 1024:,} KB, too large to send"
        try:
            raw = base64.b64decode(data.replace("\n", ""), validate=True)
        except (binascii.Error, ValueError):
            return f"{label}: not a valid PNG"
    else:
        return f"{label}: not a valid PNG"
    if len(raw) > MAX_SENT_BYTES:
        return (
            f"{label}: a PNG of {len(raw) // 1024:,} KB, too large to send (at most "
            f"{MAX_SENT_BYTES // 1024} KB)"
        )
    if len(raw) < 24 or not raw.startswith(_SIGNATURE) or raw[12:16] != b"IHDR":
        return f"{label}: not a valid PNG"
    width, height = struct.unpack(">II", raw[16:24])
    if not 0 < width <= MAX_SIDE or not 0 < height <= MAX_SIDE:
        return f"{label}: a {width}x{height} PNG, too large to send (at most {MAX_SIDE} px a side)"
    return SentImage(base64.b64encode(raw).decode("ascii"), width, height, len(raw), label)
