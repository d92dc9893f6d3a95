"""Making untrusted strings inert, once, for every output format the package writes.

Server and model strings (session titles and previews, job names, errors, versions, commands, model text)
reach notebook outputs, where JupyterLab renders trusted ``text/markdown`` and ``text/html`` with raw HTML
live. Every repr builds its output from these helpers and nothing else:

- ``text/html``: :func:`escape_html` for text, :func:`html_block` around the whole output (it also keeps
  MathJax from typesetting ``$...$`` in server text), :func:`html_table` for tables.
- ``text/markdown`` (exports only; displayed reprs use HTML plus text): :func:`escape_markdown` writes every
  ASCII punctuation mark as a character reference, which CommonMark shows literally; :func:`markdown_code` and
  :func:`markdown_fence` use a backtick run longer than any inside.
- commands shown before an approval (card or terminal): :func:`reveal` makes control, bidi, zero-width and
  blank characters visible (by Unicode category) and marks long whitespace runs, so nothing can hide after
  padding.
- text printed to a terminal or a notebook stream: :func:`terminal_safe` shows every control character, so no
  escape sequence or carriage return can hide what follows.
- URLs: :func:`is_safe_url` is the link policy (``link_policy.json``, shared with the front end's
  ``markdown.ts``); :func:`redact_url` drops userinfo before a URL is shown.
"""

from __future__ import annotations

import html
import json
import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache
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
    "html_line",
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
    "terminal_safe",
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

# Browsers drop control characters and whitespace inside a scheme ("java\tscript:"), so they go before the
# check.
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


# --- HTML
# -----------------------------------------------------------------------------------------------------

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
    columns: Sequence[str],
    rows: Iterable[Mapping[str, Any]],
    *,
    cell: Any = _plain_cell,
    mark: Any = None,
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
    rows: Sequence[Mapping[str, Any]],
    columns: Sequence[str],
    *,
    current: object = None,
    empty: str = "",
    cell: Any = _plain_cell,
) -> str:
    """A displayed table (sessions, jobs): escaped cells in the inert container; the ``current`` id is
    bold."""
    if not rows:
        return html_block(f"<i>{escape_html(empty)}</i>")
    mark = (lambda row: row.get("id") == current) if current is not None else None
    return html_block(html_table(columns, rows, cell=cell, mark=mark))


def lines_html(lines: Iterable[str]) -> str:
    """Lines of server text (a status report) as an escaped list in the inert container."""
    return html_block("<ul>" + "".join(f"<li>{escape_html(line)}</li>" for line in lines) + "</ul>")


# --- markdown
# -------------------------------------------------------------------------------------------------

_MD_PUNCT = re.compile(r"""([!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~])""")


def escape_markdown(value: object) -> str:
    """One line of literal text in markdown: every ASCII punctuation mark as a numeric character reference.

    CommonMark shows a character reference as the character and never parses it as markup, so no tag, entity,
    link, emphasis, table cell break or math delimiter (JupyterLab looks for ``$`` and ``\\(`` before
    markdown) survives. Newlines become spaces.
    """
    text = " ".join(("" if value is None else str(value)).splitlines())
    return _MD_PUNCT.sub(lambda m: f"&#{ord(m.group())};", reveal(text))


def html_line(value: object) -> str:
    """One line of literal text inside a raw-HTML line of a markdown document (an export's ``<summary>``),
    escaped no more than it must be, so it reads as written in the file: ``&`` and ``<`` (all HTML needs in
    text), then ``$`` and a backslash that would open math (``\\(``, ``\\[``, ``\\begin{``, ``\\ref{``:
    JupyterLab reads math before markdown) as character references. Newlines become spaces (a blank line
    would end the HTML)."""
    text = " ".join(("" if value is None else str(value)).splitlines())
    text = reveal(text).replace("&", "&amp;").replace("<", "&lt;").replace("$", "&#36;")
    return re.sub(r"\\(?=[(\[]|(?:begin|ref|eqref)\s*\{)", "&#92;", text)


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


# --- revealing what a command hides
# ---------------------------------------------------------------------------

# What draws nothing or reorders text, by Unicode category: controls (Cc; not \n, \t), format characters (Cf:
# bidi controls, zero-width characters, tag characters, the BOM, soft hyphen), private use (Co), surrogates
# (Cs), unassigned code points (Cn), line and paragraph separators (Zl, Zp) and every space but U+0020 (Zs).
_HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Co", "Cs", "Cn", "Zl", "Zp", "Zs"})
# Combining marks: fine on a letter (accents), hidden or misleading on nothing, on a blank or stacked high.
_MARK_CATEGORIES = frozenset({"Mn", "Me"})
# Named because no category rule catches them: blank letters and symbols (the Hangul fillers are Lo, the
# braille blank is So: letters that draw as empty space) and marks that draw nothing even on a letter (the
# grapheme joiner, Khmer inherent vowels, Mongolian and Unicode variation selectors: Mn, default-ignorable).
# The same ranges are in js/src/chat/reveal.ts.
_BLANK_RANGES = (
    (0x034F, 0x034F),
    (0x115F, 0x1160),
    (0x17B4, 0x17B5),
    (0x180B, 0x180F),
    (0x2800, 0x2800),
    (0x3164, 0x3164),
    (0xFE00, 0xFE0F),
    (0xFFA0, 0xFFA0),
    (0xE0100, 0xE01EF),
)
#: Combining marks on one letter from this many on are shown as code points (Vietnamese, Thai, Hebrew use
# fewer).
MARK_RUN: int = int(_POLICY["mark_run"])
_WHITESPACE_RUN = re.compile(rf"[ \t]{{{WHITESPACE_RUN},}}")
_PLAIN = re.compile(r"[\x20-\x7e\n\t]+")
# Caveat: the kernel's Python and the browser may know different Unicode versions; a character only the newer
# one has assigned is Cn (shown as a code point) in the older. The shared cases use long-assigned characters.


_SHOWN, _HIDDEN, _MARK = 0, 1, 2  # what _kind says of a character


@lru_cache(maxsize=4096)  # a text uses few distinct characters; this keeps long non-ASCII text fast
def _kind(ch: str) -> int:
    """``_HIDDEN`` when ``ch`` draws nothing (or reorders what follows) wherever it stands, ``_MARK`` for a
    combining mark (fine on a letter), else ``_SHOWN``."""
    if ch in " \n\t":
        return _SHOWN
    code = ord(ch)
    if unicodedata.category(ch) in _HIDDEN_CATEGORIES or any(lo <= code <= hi for lo, hi in _BLANK_RANGES):
        return _HIDDEN
    return _MARK if unicodedata.category(ch) in _MARK_CATEGORIES else _SHOWN


def _markers(chars: str) -> str:
    """Each character as ``⟦U+XXXX⟧``; a run of one character at least ``WHITESPACE_RUN`` long as ``⟦400 ×
    U+2800⟧``."""
    out: list[str] = []
    i = 0
    while i < len(chars):
        j = i
        while j < len(chars) and chars[j] == chars[i]:
            j += 1
        code = f"U+{ord(chars[i]):04X}"
        out.append(
            f"\u27e6{j - i} \u00d7 {code}\u27e7"
            if j - i >= WHITESPACE_RUN
            else f"\u27e6{code}\u27e7" * (j - i)
        )
        i = j
    return "".join(out)


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
    is what runs. Hidden characters are found by category (see ``_HIDDEN_CATEGORIES``) plus a few named
    blanks; combining marks stay on a letter (``é``) but are shown with no letter under them (at the start,
    after a blank) or stacked ``MARK_RUN`` or more high. Newlines and single tabs stay (they are visible as
    layout).
    """
    text = text.replace("\r\n", "\n")
    out: list[str] = []
    i = 0
    while i < len(text):
        plain = _PLAIN.match(text, i)  # printable ASCII, newlines and tabs: the common case, taken whole
        if plain:
            out.append(plain.group())
            i = plain.end()
            continue
        kind, j = _kind(text[i]), i + 1
        while j < len(text) and _kind(text[j]) == kind:
            j += 1
        if kind == _HIDDEN:
            out.append(_markers(text[i:j]))
        elif kind == _MARK:
            on_letter = i > 0 and text[i - 1] not in " \n\t" and _kind(text[i - 1]) != _HIDDEN
            out.append(text[i:j] if on_letter and j - i < MARK_RUN else _markers(text[i:j]))
        else:
            out.append(text[i:j])
        i = j
    return _WHITESPACE_RUN.sub(_run, "".join(out))


def reveal_lines(text: str, limit: int = CARD_LINES) -> tuple[list[str], int]:
    """The first ``limit`` revealed lines and how many more are hidden."""
    lines = reveal(text).split("\n")
    return lines[:limit], max(0, len(lines) - limit)


# --- terminals
# ------------------------------------------------------------------------------------------------

# C0 controls but \n and \t, DEL, C1 controls (0x9B is a one-byte CSI) and lone surrogates (unprintable).
_TERMINAL_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]")


def _control(match: re.Match[str]) -> str:
    return f"\u27e6U+{ord(match.group()):04X}\u27e7"


def terminal_safe(text: str) -> str:
    """``text`` for a terminal or a notebook stream: every control character shown as ``⟦U+001B⟧``, none
    obeyed.

    Model text and tool previews are printed right before an approval prompt; a raw ``ESC[8m`` (conceal),
    cursor move, line erase, OSC title or hyperlink, or a bare ``\\r`` could hide or overwrite the command the
    prompt shows. Only ``\\n`` and ``\\t`` pass (``\\r\\n`` becomes ``\\n``); layout and other characters stay
    as they are (commands also go through :func:`reveal`).
    """
    return _TERMINAL_CONTROL.sub(_control, text.replace("\r\n", "\n"))
