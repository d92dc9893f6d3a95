"""Images a turn refers to: found in reply text, tool results and history rows, kept as bounded references.

Where they come from (docs/protocol/dashboard-newer.md §13, docs/protocol/api-server.md §11):

* ``MEDIA:<absolute path>``: a file the agent wrote on the Hermes host (an MCP image result, a screenshot, a
  chart); a ``media`` reference, read through the Dashboard's ``/api/media``, so it comes from the connected
  Hermes itself and may load without a click;
* ``data:image/...;base64,...`` (a Markdown image in a reply the API Server resolved, an ``image_url`` content
  part of a history row): ``inline``, the bytes are here. Shown only when they sniff as PNG, JPEG, GIF or WebP
  and are at most :data:`MAX_SHOWN_BYTES`; larger ones keep a ``note`` and no data;
* an ``http(s)`` image URL: ``remote``, never loaded without the user's click (no remote resource loads
  unasked);
* ``@image:<path>`` lines a newer Hermes stores after a user's prompt: the files the user attached
  (``media``).

Pure and bounded: at most :data:`MAX_IMAGES` references per part, scanned text capped. The handlers use the
folder's public vocabulary only (:class:`~.vocabulary.FolderOps`).
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from ..inert import is_safe_url
from .changes import ChangeRecord, ImageDict
from .model import Part

if TYPE_CHECKING:
    from .vocabulary import FolderOps

__all__ = [
    "MAX_IMAGES",
    "MAX_SHOWN_BYTES",
    "SHOWN_TYPES",
    "image_from_url",
    "images_in_content",
    "images_in_result",
    "images_in_text",
    "sniff",
    "split_image_refs",
    "text_images",
    "tool_images",
]

#: Largest image shown inline (decoded bytes): Hermes' own bound for inlining a media file into a reply.
MAX_SHOWN_BYTES = 5 * 1024 * 1024
#: References kept per part.
MAX_IMAGES = 8
#: The only image types shown: raster formats a browser decodes without running anything (never SVG).
SHOWN_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")
_SUFFIXES = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
}
_MAX_SCAN = 8_000_000  # characters of one text scanned for references (a 5 MB image in base64, and more)
_MAX_STRINGS = 200  # strings of one tool result scanned
_MAX_PATH = 1000
_MAX_ALT = 200
# A MEDIA: tag as Hermes writes it (gateway/platforms/base.py MEDIA_TAG_CLEANUP_RE): quoted, or an absolute
# path.
_MEDIA = re.compile(
    r"""MEDIA:\s*(?:`([^`\n]+)`|"([^"\n]+)"|'([^'\n]+)'|((?:~/|/|[A-Za-z]:[\\/])[^\s`"'<>*]+))"""
)
_MARKDOWN_IMAGE = re.compile(
    r"!\[([^\]\n]{0,200})\]\(\s*(data:[^)\s]+|https?://[^)\s]+)(?:\s+\"[^\"\n]*\")?\s*\)"
)
_IMAGE_LINE = re.compile(r"""^@image:(?:`([^`\n]+)`|"([^"\n]+)"|'([^'\n]+)'|(\S+))\s*$""", re.M)
_DATA_URL = re.compile(r"data:(image/[A-Za-z0-9.+-]+)?(?:;[^,;]*)*;base64,([A-Za-z0-9+/=\s]*)\Z", re.S)


def sniff(data: bytes) -> str | None:
    """The image type of ``data`` by its first bytes (PNG, JPEG, GIF or WebP), else None; a declared type is
    never trusted."""
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if data.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


def _image(source: str, alt: str = "", **fields: Any) -> ImageDict:
    image: ImageDict = {
        "source": source,  # type: ignore[typeddict-item]
        "mime": None,
        "data": None,
        "path": None,
        "url": None,
        "alt": alt[:_MAX_ALT],
        "bytes": None,
        "note": None,
    }
    image.update(fields)  # type: ignore[typeddict-item]
    return image


def _media(path: str, alt: str = "") -> ImageDict | None:
    path = path.strip().rstrip(".,;:)]}")
    suffix = path[path.rfind(".") :].lower() if "." in path else ""
    if not path or len(path) > _MAX_PATH or suffix not in _SUFFIXES:
        return None
    return _image("media", alt or path.rsplit("/", 1)[-1], path=path, mime=_SUFFIXES[suffix])


def image_from_url(url: str, alt: str = "") -> ImageDict | None:
    """A ``data:`` URL as an inline image (bounded, sniffed), an ``http(s)`` URL as a remote one, else
    None."""
    url = url.strip()
    if url.startswith("data:"):
        match = _DATA_URL.match(url[:_MAX_SCAN])
        if match is None:
            return None
        b64 = re.sub(r"\s+", "", match.group(2))
        size = len(b64) * 3 // 4
        if size > MAX_SHOWN_BYTES:
            note = f"not shown: {size:,} bytes (at most {MAX_SHOWN_BYTES // (1024 * 1024)} MB)"
            return _image("inline", alt, mime=match.group(1), bytes=size, note=note)
        try:
            raw = base64.b64decode(b64, validate=True)
        except (binascii.Error, ValueError):
            return None
        mime = sniff(raw)
        if mime is None:
            return _image("inline", alt, bytes=len(raw), note="not shown: not a PNG, JPEG, GIF or WebP image")
        return _image("inline", alt, mime=mime, data=base64.b64encode(raw).decode("ascii"), bytes=len(raw))
    if url.startswith(("http://", "https://")) and len(url) <= 4000 and is_safe_url(url):
        return _image("remote", alt or "image", url=url)
    return None


def _dedupe(images: Iterable[ImageDict | None]) -> list[ImageDict]:
    out: list[ImageDict] = []
    seen: set[tuple[Any, ...]] = set()
    for image in images:
        if image is None:
            continue
        data = image["data"]
        key = (
            image["source"],
            image["path"],
            image["url"],
            data and hash(data),
            image["alt"],
            image["bytes"],
        )
        if key not in seen:
            seen.add(key)
            out.append(image)
            if len(out) == MAX_IMAGES:
                break
    return out


def images_in_text(text: str) -> list[ImageDict]:
    """``MEDIA:`` tags and Markdown images (``data:`` or ``http(s)``) in a reply's text, in order."""
    if "MEDIA:" not in text and "![" not in text:
        return []
    text = text[:_MAX_SCAN]
    found: list[tuple[int, ImageDict | None]] = []
    for match in _MEDIA.finditer(text):
        found.append((match.start(), _media(next(g for g in match.groups() if g))))
    for match in _MARKDOWN_IMAGE.finditer(text):
        found.append((match.start(), image_from_url(match.group(2), match.group(1))))
    return _dedupe(image for _, image in sorted(found, key=lambda item: item[0]))


def split_image_refs(text: str) -> tuple[str, list[ImageDict]]:
    """A stored user prompt without its ``@image:<path>`` lines (what the user typed), and those files."""
    if "@image:" not in text:
        return text, []
    images = [_media(next(g for g in m.groups() if g)) for m in _IMAGE_LINE.finditer(text)]
    return _IMAGE_LINE.sub("", text).rstrip(), _dedupe(images)


def _content_url(part: Mapping[str, Any]) -> str:
    url = part.get("image_url")
    if isinstance(url, Mapping):
        url = url.get("url")
    return url if isinstance(url, str) else ""


def images_in_content(content: Any) -> list[ImageDict]:
    """The image parts of a message's content list (``image_url``, ``input_image``, ``image``), in order."""
    if not isinstance(content, list):
        return []
    parts = (
        p
        for p in content
        if isinstance(p, Mapping) and p.get("type") in ("image_url", "input_image", "image")
    )
    return _dedupe(image_from_url(_content_url(part)) for part in parts)


def _strings(value: Any, out: list[str], depth: int = 0) -> None:
    if len(out) >= _MAX_STRINGS or depth > 3:
        return
    if isinstance(value, str):
        out.append(value)
    elif isinstance(value, Mapping):
        for item in value.values():
            _strings(item, out, depth + 1)
    elif isinstance(value, list):
        for item in value:
            _strings(item, out, depth + 1)


def images_in_result(result: Any) -> list[ImageDict]:
    """Images a tool's result names: image content parts, and ``MEDIA:`` tags or Markdown images in its
    strings."""
    strings: list[str] = []
    _strings(result, strings)
    found: list[ImageDict | None] = list(images_in_content(result))
    for text in strings:
        found.extend(images_in_text(text))
    return _dedupe(found)


def _set_images(f: FolderOps, part: Part, images: list[ImageDict]) -> list[ChangeRecord]:
    if not images or part.images == images:
        return []
    part.images = images
    return [f.patch(part, {"images": images})]


def tool_images(f: FolderOps, part: Part, result: Any) -> list[ChangeRecord]:
    """After a tool completed: the images its result names onto its part."""
    return _set_images(f, part, images_in_result(result)) if result is not None else []


def text_images(f: FolderOps) -> list[ChangeRecord]:
    """At the end of a turn (its text final): the images each text part names onto that part."""
    changes: list[ChangeRecord] = []
    for part in f.parts_of("text"):
        changes.extend(_set_images(f, part, images_in_text(part.text)))
    return changes
