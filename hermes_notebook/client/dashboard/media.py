"""Reading an image Hermes made on its host (a ``media`` reference) through the Dashboard's ``GET
/api/media``.

Why through the Dashboard: the file is on the Hermes host, which may not be this machine; the route answers
``{"data_url": "data:<type>;base64,..."}`` for an image file inside Hermes' media folders (``images/``,
``screenshots/``, ``cache/``), at most 25 MB (docs/protocol/dashboard-newer.md §13). The type it names comes
from the file's suffix and SVG is among them, so the bytes are sniffed here: only PNG, JPEG, GIF and WebP are
returned, at most :data:`~hermes_notebook.turns.images.MAX_SHOWN_BYTES`. A path is checked before anything is
sent.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from dataclasses import dataclass

from ...errors import HermesHTTPError, HermesProtocolError, HermesUsageError
from ...settings import Settings
from ...turns.changes import ImageDict
from ...turns.images import MAX_SHOWN_BYTES, sniff

__all__ = ["MediaImage", "fetch_media"]

_MAX_PATH = 1000
_REFUSED = {
    403: "outside the Hermes media folders",
    404: "not there (any more)",
    413: "too large for Hermes to send",
    415: "not an image file",
}


@dataclass(frozen=True)
class MediaImage:
    """An image read from the Hermes host: its sniffed type and bytes (``to_ref()``: as an inline
    reference)."""

    mime: str
    data: bytes
    path: str

    def to_ref(self, alt: str = "") -> ImageDict:
        """The image as an ``inline`` reference (what a view shows, or an export embeds)."""
        return {
            "source": "inline",
            "mime": self.mime,
            "data": base64.b64encode(self.data).decode("ascii"),
            "path": self.path,
            "url": None,
            "alt": alt or self.path.rsplit("/", 1)[-1],
            "bytes": len(self.data),
            "note": None,
        }


async def fetch_media(settings: Settings, path: str) -> MediaImage:
    """The image at ``path`` on the Hermes host, or :class:`HermesUsageError` saying why it cannot be
    shown."""
    from .._http import HttpTransport

    if (
        not isinstance(path, str)
        or not path.startswith(("/", "~/"))
        or len(path) > _MAX_PATH
        or "\x00" in path
    ):
        raise HermesUsageError(f"a media path is an absolute path on the Hermes host; got {str(path)[:80]!r}")
    async with HttpTransport(
        settings.dashboard_url,
        settings.dashboard_token,
        connect_timeout=settings.connect_timeout,
        request_timeout=settings.request_timeout,
        auth_header="X-Hermes-Session-Token",
        auth_scheme=None,
        missing_key_hint="pass token=... or set HERMES_DASHBOARD_TOKEN",
        proxy=settings.proxy_for(settings.dashboard_url),
    ) as http:
        try:
            body = await http.request_json("GET", "/api/media", params={"path": path})
        except HermesHTTPError as exc:
            if exc.status in _REFUSED:
                raise HermesUsageError(f"the image {path!r} is {_REFUSED[exc.status]}") from None
            raise
    url = body.get("data_url") if isinstance(body, Mapping) else None
    if not isinstance(url, str) or ";base64," not in url:
        raise HermesProtocolError("GET /api/media answered without a data_url")
    encoded = url.split(";base64,", 1)[1]
    if len(encoded) * 3 // 4 > MAX_SHOWN_BYTES:
        raise HermesUsageError(f"the image {path!r} is over {MAX_SHOWN_BYTES // (1024 * 1024)} MB: not shown")
    try:
        data = base64.b64decode(encoded, validate=True)
    except (binascii.Error, ValueError):
        raise HermesProtocolError("GET /api/media answered a data_url that is not base64") from None
    mime = sniff(data)
    if mime is None:
        raise HermesUsageError(f"the file {path!r} is not a PNG, JPEG, GIF or WebP image: not shown")
    return MediaImage(mime=mime, data=data, path=path)
