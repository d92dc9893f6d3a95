"""A part's risk badge and images in static transcripts and exports (text, Markdown, HTML), inert.

Risk findings are Hermes' pattern ids (server text): escaped everywhere. Images: a saved notebook's transcript
names each image and where it is, and embeds none (it would keep every image in the file, and a remote one
must never load unasked); an export (``embed=True``, the user asked for a file) embeds the ``inline`` images
whose bytes were sniffed as PNG, JPEG, GIF or WebP (:mod:`hermes_notebook.turns.images`), as ``data:`` URLs,
so the file loads nothing from anywhere. A ``media`` image is embedded once the caller has read it into an
inline one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .inert import escape_html, escape_markdown, redact_urls
from .scrub import image_data
from .turns.images import SHOWN_TYPES

__all__ = [
    "images_html",
    "images_markdown",
    "images_text",
    "media_css",
    "risk_html",
    "risk_markdown",
    "risk_text",
]

_LEVEL_WORDS = {
    "high": "risky output",
    "medium": "risky output",
    "low": "marked untrusted for the model",  # Hermes wrapped the output as untrusted data (nothing found)
    "untrusted": "marked untrusted for the model",
}


def _icon(part: Mapping[str, Any], findings: list[str]) -> str:
    """A warning sign for flagged output; none for the plain "marked untrusted" note."""
    level = (part.get("risk") or {}).get("level")
    return "" if level in ("low", "untrusted") and not findings else "⚠ "


def _risk(part: Mapping[str, Any]) -> tuple[str, list[str]] | None:
    risk = part.get("risk")
    if not isinstance(risk, Mapping):
        return None
    findings = [str(f) for f in risk.get("findings") or ()]
    return _LEVEL_WORDS.get(str(risk.get("level")), "risky output"), findings


def _risk_line(part: Mapping[str, Any]) -> str:
    found = _risk(part)
    if found is None:
        return ""
    words, findings = found
    return f"{words}: {', '.join(findings)}" if findings else words


def risk_text(part: Mapping[str, Any]) -> list[str]:
    """``["  [risk] risky output: prompt_injection"]`` for a flagged tool part, else ``[]``."""
    line = _risk_line(part)
    return [f"  [risk] {line}"] if line else []


def risk_markdown(part: Mapping[str, Any]) -> list[str]:
    """The badge as one escaped Markdown line."""
    line = _risk_line(part)
    found = _risk(part)
    return [f"_{_icon(part, found[1] if found else [])}{escape_markdown(line)}_"] if line else []


def risk_html(part: Mapping[str, Any]) -> str:
    """The badge: a labelled span with the findings (escaped), ``""`` without a risk."""
    found = _risk(part)
    if found is None:
        return ""
    words, findings = found
    level = escape_html(str((part.get("risk") or {}).get("level")))
    items = "".join(f"<li>{escape_html(f)}</li>" for f in findings)
    listed = f"<ul>{items}</ul>" if items else ""
    icon = _icon(part, findings)
    return f'<div class="hn-risk" data-level="{level}" role="note">{icon}{escape_html(words)}{listed}</div>'


def _images(part: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    images = part.get("images")
    return [i for i in images if isinstance(i, Mapping)] if isinstance(images, list) else []


def _describe(image: Mapping[str, Any]) -> str:
    """``image: chart.png (1,234 bytes, on the Hermes host)``: what it is and where, never a live URL."""
    alt = str(image.get("alt") or "image")
    size = f"{image['bytes']:,} bytes, " if isinstance(image.get("bytes"), int) else ""
    where = {
        "inline": "sent with the message",
        "media": "a file on the Hermes host",
        "remote": f"at {redact_urls(str(image.get('url') or ''))}",
    }.get(str(image.get("source")), "")
    note = f"; {image['note']}" if image.get("note") else ""
    return f"image: {alt} ({size}{where}{note})"


def _embeddable(image: Mapping[str, Any]) -> bool:
    """Bytes here, sniffed as a raster image by their base64 (:func:`~hermes_notebook.scrub.image_data`)."""
    return image.get("source") == "inline" and image.get("mime") in SHOWN_TYPES and image_data(image)


def images_text(part: Mapping[str, Any]) -> list[str]:
    """One ``[image: ...]`` line per image."""
    return [f"[{_describe(image)}]" for image in _images(part)]


def images_markdown(part: Mapping[str, Any], *, embed: bool = False) -> list[str]:
    """Each image described; with ``embed`` an inline raster image is a ``data:`` Markdown image."""
    out = []
    for image in _images(part):
        if embed and _embeddable(image):
            alt = escape_markdown(str(image.get("alt") or "image"))
            out.append(f"![{alt}](data:{image['mime']};base64,{image['data']})")
        else:
            out.append(f"_{escape_markdown(f'[{_describe(image)}]')}_")
    return out


def images_html(part: Mapping[str, Any], *, embed: bool = False) -> str:
    """Each image described; with ``embed`` an inline raster image is an ``<img>`` of its ``data:`` URL."""
    out = []
    for image in _images(part):
        if embed and _embeddable(image):
            out.append(
                f'<img class="hn-image" alt="{escape_html(str(image.get("alt") or "image"))}" '
                f'src="data:{escape_html(str(image["mime"]))};base64,{escape_html(str(image["data"]))}">'
            )
        else:
            out.append(f'<div class="hn-meta hn-image-ref">[{escape_html(_describe(image))}]</div>')
    return "".join(out)


def media_css() -> str:
    """The badge and image styles, theme variables only."""
    return (
        ".hn-static .hn-risk{border-left:3px solid var(--jp-warn-color1,#f57c00);padding:2px "
        "8px;margin:4px 0;"
        "color:var(--jp-ui-font-color1,inherit);font-size:smaller}"
        ".hn-static .hn-risk ul{margin:2px 0 0 1.2em;padding:0}"
        # a note, not a warning: Hermes handed the output over marked as untrusted data
        ".hn-static .hn-risk[data-level=low],.hn-static .hn-risk[data-level=untrusted]"
        "{border-left-color:var(--jp-border-color2,#e0e0e0);color:var(--jp-ui-font-color2,inherit)}"
        ".hn-static .hn-image{max-width:100%;max-height:40em;display:block;margin:4px 0}"
    )
