"""Sanitized rendering of messages for places without our front end.

Model and tool output is untrusted. Markdown is rendered by markdown-it-py with raw HTML disabled (it is shown
as text), links limited by the shared link policy (:mod:`hermes_notebook.inert`: http, https, mailto) and
opened with ``rel="noopener noreferrer"``; images are never loaded: each becomes a link naming its host, so a
prompt-injected model cannot send data out in an image URL on every open of the notebook. Every other string
goes through :mod:`hermes_notebook.inert`. The static transcript (``text/plain`` and ``text/html``) is what a
saved notebook shows on GitHub, nbviewer or nbconvert, where no kernel and no widget JS run; there is no
``text/markdown`` in it, because JupyterLab renders raw HTML inside trusted markdown output.

Inputs are the message dicts of the turn model's contract (``docs/architecture.md``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache
from typing import Any
from urllib.parse import urlsplit

from markdown_it import MarkdownIt

from .formatting import usage_details, usage_line
from .inert import (
    escape_html,
    escape_markdown,
    html_block,
    is_safe_image_url,
    is_safe_url,
    markdown_code,
    markdown_fence,
    reveal,
    terminal_safe,
)
from .render_activity import (
    activity_css,
    activity_html,
    activity_markdown,
    activity_text,
    diff_html,
    diff_markdown,
    diff_text,
)
from .render_media import (
    images_html,
    images_markdown,
    images_text,
    media_css,
    risk_html,
    risk_markdown,
    risk_text,
)
from .scrub import scrub_value
from .turns.labels import label_of, result_text

__all__ = [
    "bounded_messages",
    "image_placeholder_html",
    "markdown_is_inert",
    "markdown_to_html",
    "model_markdown",
    "transcript_bundle",
    "transcript_html",
    "transcript_markdown",
    "transcript_text",
]

Message = Mapping[str, Any]

#: Tool results longer than this are cut in static transcripts (the live widget has "show all").
RESULT_PREVIEW_CHARS = 2000


def image_placeholder_html(src: str, alt: str) -> str:
    """What an image in model output becomes: a link naming the host (nothing is fetched until a click)."""
    label = f"image: {alt}" if alt else "image"
    if not is_safe_image_url(src):
        return f'<span class="hn-image-blocked">[{escape_html(label)}, not shown]</span>'
    host = urlsplit(src.strip()).hostname or "unknown host"
    return (
        f'<a class="hn-image-link" href="{escape_html(src.strip())}" target="_blank" '
        f'rel="noopener noreferrer nofollow">[{escape_html(label)} from {escape_html(host)}]</a>'
    )


@lru_cache(maxsize=1)
def _markdown() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False}).enable("table")
    md.validateLink = _valid_link  # type: ignore[method-assign]

    def render_link_open(renderer: Any, tokens: Any, idx: int, options: Any, env: Any) -> str:
        tokens[idx].attrSet("rel", "noopener noreferrer")
        tokens[idx].attrSet("target", "_blank")
        return str(renderer.renderToken(tokens, idx, options, env))

    def render_image(renderer: Any, tokens: Any, idx: int, options: Any, env: Any) -> str:
        token = tokens[idx]
        alt = "".join(child.content for child in token.children or ())
        return image_placeholder_html(str(token.attrGet("src") or ""), alt)

    md.add_render_rule("link_open", render_link_open)
    md.add_render_rule("image", render_image)
    return md


def _valid_link(url: str) -> bool:
    # Images go through the same check; a refused image stays literal text, an accepted one becomes a link.
    return is_safe_url(url)


def markdown_to_html(text: str) -> str:
    """Render untrusted markdown to HTML in which no raw HTML, script, unsafe link or loading image
    survives."""
    return _markdown().render(text)


@lru_cache(maxsize=1)
def _probe() -> MarkdownIt:
    # Parses the way a permissive renderer would (raw HTML on, every link accepted) to find what could go
    # live.
    md = MarkdownIt("gfm-like", {"html": True, "linkify": False})
    md.validateLink = lambda url: True  # type: ignore[method-assign]
    return md


# What MathJax typesets in rendered markdown (JupyterLab, nbviewer): $ and $$, \( and \[, environments
# (\begin{align}, also without $) and equation references; inert text has none of them.
_MATH = re.compile(r"\$|\\[(\[]|\\(?:begin|ref|eqref)\s*\{")


# The start of a tag, comment or declaration as an HTML parser reads it ("<img", "</x", "<!", "<?").
_TAG_OPEN = re.compile(r"<[A-Za-z/!?]")


def markdown_is_inert(text: str) -> bool:
    """Would ``text`` stay inert in a markdown renderer that allows raw HTML and typesets math? (no HTML,
    images, bad links or math delimiters: ``$``, ``\\(``, ``\\[``, ``\\begin{...}``, ``\\ref{...}``)

    Also when it is joined to other markdown in one document (an export puts every message in one file): no
    link reference definition (``[x]: javascript:...`` here would arm ``[x]`` in the next message) and no tag
    left open (``<img src=x onerror=...`` without its ``>`` here is closed by the ``>`` of the next tag)."""
    env: dict[str, Any] = {}
    stack = list(_probe().parse(text, env))
    if env.get("references"):
        return False
    while stack:
        token = stack.pop()
        if token.type in ("html_block", "html_inline", "image"):
            return False
        if token.type == "link_open" and not is_safe_url(str(token.attrGet("href") or "")):
            return False
        if token.type == "text" and _TAG_OPEN.search(token.content):
            return False
        stack.extend(token.children or ())
    return _MATH.search(text) is None


# --- helpers ------------------------------------------------------------------------------------------


def _parts(message: Message) -> Sequence[Mapping[str, Any]]:
    return message.get("parts") or ()


def _result_text(result: Any) -> str:
    return result_text(result)


def _clip(text: str, limit: int = RESULT_PREVIEW_CHARS) -> str:
    return text if len(text) <= limit else text[:limit] + f"\n… ({len(text) - limit} more characters)"


def _tool_summary(part: Mapping[str, Any]) -> str:
    label = label_of(part)
    duration = part.get("duration")
    timing = f", {duration:.2f} s" if isinstance(duration, (int, float)) else ""
    return f"{label['name']}({label['detail'] or ''}) [{part.get('status') or 'unknown'}{timing}]"


def _interaction_line(interaction: Mapping[str, Any]) -> str:
    kind = interaction.get("kind", "request")
    subject = reveal(
        str(interaction.get("command") or interaction.get("question") or interaction.get("description") or "")
    )
    status = interaction.get("status", "pending")
    answer = interaction.get("response")
    tail = f" -> {answer}" if answer is not None and status == "answered" else ""
    title = interaction.get("title")  # a card naming itself (a preview's): the transcript says what it was
    head = reveal(title) if isinstance(title, str) and title else kind
    return f"{head}: {subject} [{status}{tail}]"


def _run_undo_line(part: Mapping[str, Any]) -> str:
    """An approved run's Undo variables: what it would do, why it is not offered, or what a click did."""
    undo = part.get("run_undo")
    if not isinstance(undo, Mapping) or not undo.get("text"):
        return ""
    return f"Undo variables offered: {undo['text']}" if undo.get("offered") is True else str(undo["text"])


def _usage_line(usage: Any) -> str:
    return usage_line(usage)


# --- text/plain -----------------------------------------------------------------------------------------


def _scrubbed(messages: Iterable[Message], secrets: Sequence[object]) -> list[Message]:
    """Messages without secrets (keys, tokens, ``NAME_KEY=...``), scrubbed before rendering: escaping and
    clipping could otherwise hide a key's shape from the scrubber. Every static transcript is saved with the
    notebook."""
    return [scrub_value(message, secrets) for message in messages]


def transcript_text(messages: Iterable[Message], *, secrets: Sequence[object] = ()) -> str:
    """A plain-text transcript: who said what, tools one line each (no secrets: ``secrets`` and key
    shapes)."""
    return _transcript_text(_scrubbed(messages, secrets))


def _transcript_text(messages: Iterable[Message]) -> str:
    lines: list[str] = []
    for message in messages:
        role = "You" if message.get("role") == "user" else "Hermes"
        status = message.get("status")
        suffix = f" ({status})" if status not in (None, "complete", "streaming") else ""
        lines.append(f"{role}{suffix}:")
        for part in _parts(message):
            kind = part.get("kind")
            if kind == "text" and part.get("text"):
                if part.get("name"):  # a titled text part (the prompt as sent): its title, then the text
                    lines.append(f"[{part['name']}]")
                lines.append(str(part["text"]))
                lines.extend(images_text(part))
            elif kind == "reasoning" and part.get("text"):
                lines.append("[reasoning] " + str(part["text"]).replace("\n", " ")[:200])
            elif kind == "tool":
                lines.append("[tool] " + _tool_summary(part))
                if part.get("interaction"):
                    lines.append("  " + _interaction_line(part["interaction"]))
                if undo := _run_undo_line(part):
                    lines.append("  " + undo)
                lines.extend(risk_text(part))
                lines.extend(diff_text(part))
                lines.extend(images_text(part))
            elif kind == "marker" and part.get("text"):
                lines.append(f"--- {part['text']} ---")
            elif kind in ("todo", "subagent"):
                lines.extend(activity_text(part))
        if message.get("error"):
            lines.append(f"[error] {message['error']}")
        usage = _usage_line(message.get("usage"))
        if usage:
            lines.append(f"[{usage}]")
        lines.append("")
    # text/plain is what a terminal (or a notebook's plain output) shows: no escape sequence is obeyed there
    return terminal_safe("\n".join(lines).rstrip() + "\n" if lines else "(empty conversation)\n")


# --- text/markdown (an export: displayed bundles carry text/html and text/plain)
# ------------------------------


def model_markdown(text: str, *, quote: bool = False) -> str:
    """Model markdown as is when it is inert in any renderer, else as a literal fenced block."""
    if markdown_is_inert(text):
        return "> " + text.replace("\n", "\n> ") if quote else text
    return markdown_fence(text)


def transcript_markdown(
    messages: Iterable[Message], *, secrets: Sequence[object] = (), images: bool = False
) -> str:
    """A markdown transcript in which nothing is live even where raw HTML is rendered, and no secret is left.

    Names, statuses, errors and interactions are escaped; tool output goes in fences longer than any backtick
    run inside; model text stays markdown when it has no HTML, image, unsafe link or math, else it is fenced.
    ``images``: embed the parts' inline images as ``data:`` images (an export), else name them.
    """
    out: list[str] = []
    for message in _scrubbed(messages, secrets):
        role = "**You**" if message.get("role") == "user" else "**Hermes**"
        status = message.get("status")
        out.append(
            role
            + (
                f" _{escape_markdown(f'({status})')}_"
                if status not in (None, "complete", "streaming")
                else ""
            )
        )
        for part in _parts(message):
            kind = part.get("kind")
            if kind == "text" and part.get("text") and part.get("name"):  # the prompt as sent: verbatim
                out.append(f"_{escape_markdown(str(part['name']))}_")
                out.append(markdown_fence(str(part["text"])))
            elif kind == "text" and part.get("text"):
                out.append(model_markdown(str(part["text"])))
                out.extend(images_markdown(part, embed=images))
            elif kind == "reasoning" and part.get("text"):
                out.append(model_markdown(str(part["text"]), quote=True))
            elif kind == "tool":
                out.append(markdown_code(_tool_summary(part)))
                if part.get("interaction"):
                    out.append(f"_{escape_markdown(_interaction_line(part['interaction']))}_")
                if undo := _run_undo_line(part):
                    out.append(f"_{escape_markdown(undo)}_")
                out.extend(risk_markdown(part))
                result = _result_text(part.get("result"))
                if result:
                    out.append(markdown_fence(_clip(result)))
                out.extend(diff_markdown(part))
                out.extend(images_markdown(part, embed=images))
            elif kind == "marker" and part.get("text"):
                out.append(f"_— {escape_markdown(str(part['text']))} —_")
            elif kind in ("todo", "subagent"):
                out.extend(activity_markdown(part))
        if message.get("error"):
            out.append(f"_error: {escape_markdown(message['error'])}_")
        out.append("")
    return "\n\n".join(out).strip() + "\n"


# --- text/html ------------------------------------------------------------------------------------------

_CSS = (
    (
        ".hn-static{font-family:var(--jp-ui-font-family,system-ui,sans-serif);"
        "color:var(--jp-ui-font-color1,inherit);border:1px solid var(--jp-border-color2,#ccc);"
        "border-radius:4px;padding:8px 12px;max-width:60em}"
        ".hn-static .hn-role{font-weight:600;margin-top:8px}"
        ".hn-static .hn-user{background:var(--jp-layout-color2,rgba(127,127,127,.08));"
        "border-radius:4px;padding:2px 8px}"
        ".hn-static details{margin:4px 0}"
        ".hn-static .hn-tool{border-left:3px solid var(--jp-brand-color1,#1976d2);"
        "padding:2px 8px;margin:4px 0;"
        "font-family:var(--jp-code-font-family,monospace);font-size:var(--jp-code-font-size,12px)}"
        ".hn-static pre{white-space:pre-wrap;overflow-wrap:anywhere;"
        "background:var(--jp-cell-editor-background,rgba(127,127,127,.08));padding:6px;border-radius:3px}"
        ".hn-static .hn-meta{color:var(--jp-ui-font-color2,#666);font-size:smaller}"
        ".hn-static .hn-marker{text-align:center;color:var(--jp-ui-font-color2,#666);font-size:smaller;"
        "margin:6px 0;"
        "border-top:1px solid var(--jp-border-color2,#ccc);padding-top:2px}"
    )
    + activity_css()
    + media_css()
)


def _html_part(part: Mapping[str, Any], embed: bool = False) -> str:
    esc = escape_html
    kind = part.get("kind")
    if kind == "text" and part.get("name"):  # a titled text part (the prompt as sent): collapsed, verbatim
        return (
            f'<details class="hn-sent"><summary>{esc(str(part["name"]))}</summary>'
            f"<pre>{esc(str(part.get('text') or ''))}</pre></details>"
        )
    if kind == "text":
        html = markdown_to_html(str(part.get("text") or ""))
        return f'<div class="hn-text">{html}{images_html(part, embed=embed)}</div>'
    if kind == "reasoning":
        return (
            f'<details class="hn-reasoning"><summary>Reasoning</summary>'
            f"<pre>{esc(str(part.get('text') or ''))}</pre></details>"
        )
    if kind == "tool":
        body = [
            '<div class="hn-tool" '
            f'data-status="{esc(str(part.get("status") or ""))}">{esc(_tool_summary(part))}'
        ]
        if part.get("interaction"):
            body.append(f'<div class="hn-meta">{esc(_interaction_line(part["interaction"]))}</div>')
        if undo := _run_undo_line(part):
            body.append(f'<div class="hn-meta">{esc(undo)}</div>')
        body.append(risk_html(part))
        result = _result_text(part.get("result"))
        if result:
            body.append(f"<details><summary>Result</summary><pre>{esc(_clip(result))}</pre></details>")
        body.append(diff_html(part))
        body.append(images_html(part, embed=embed))
        body.append("</div>")
        return "".join(body)
    if kind == "marker":
        text = esc(str(part.get("text") or ""))
        return f'<div class="hn-marker" role="separator" aria-label="{text}">{text}</div>'
    if kind in ("todo", "subagent"):
        return activity_html(part)
    return ""


def transcript_html(
    messages: Iterable[Message], *, secrets: Sequence[object] = (), images: bool = False
) -> str:
    """A self-contained, sanitized HTML transcript styled with JupyterLab theme variables (no secrets);
    ``images``: embed the parts' inline images (an export), else name them."""
    return html_block(_transcript_html(_scrubbed(messages, secrets), embed=images))


def _transcript_html(messages: Iterable[Message], embed: bool = False) -> str:
    esc = escape_html
    chunks = [f"<style>{_CSS}</style>", '<div class="hn-static">']
    for message in messages:
        is_user = message.get("role") == "user"
        status = message.get("status")
        label = "You" if is_user else "Hermes"
        if status not in (None, "complete", "streaming"):
            label += f" ({status})"
        chunks.append(f'<div class="hn-role">{esc(label)}</div>')
        chunks.append(f'<div class="{"hn-user" if is_user else "hn-assistant"}">')
        chunks.extend(_html_part(part, embed) for part in _parts(message))
        if message.get("error"):
            chunks.append(f'<div class="hn-meta">error: {esc(str(message["error"]))}</div>')
        usage = _usage_line(message.get("usage"))
        if usage:
            details = usage_details(message.get("usage"))
            title = f' title="{esc(details)}"' if details else ""
            chunks.append(f'<div class="hn-meta hn-usage"{title}>{esc(usage)}</div>')
        chunks.append("</div>")
    chunks.append("</div>")
    return "".join(chunks)  # the caller puts it in the one inert container, with anything around it


# --- bounded transcripts -------------------------------------------------------------------------------

#: A static transcript keeps at most this many of the newest messages (a 10,000-message session would
#: otherwise put its whole history into every saved notebook, three times over).
TRANSCRIPT_MAX_MESSAGES = 200
#: ... and stops adding older messages once their text passes this many characters (the newest one always
# shows).
TRANSCRIPT_MAX_CHARS = 500_000


def bounded_messages(
    messages: Sequence[Message],
    max_messages: int = TRANSCRIPT_MAX_MESSAGES,
    max_chars: int = TRANSCRIPT_MAX_CHARS,
) -> tuple[Sequence[Message], int]:
    """The newest messages that fit the bounds, and how many earlier ones were left out."""
    kept = 0
    chars = 0
    for message in reversed(messages):
        size = sum(
            len(str(p.get("text") or "")) + min(len(_result_text(p.get("result"))), RESULT_PREVIEW_CHARS)
            for p in _parts(message)
        )
        if kept >= max_messages or (kept > 0 and chars + size > max_chars):
            break
        kept += 1
        chars += size
    return messages[len(messages) - kept :], len(messages) - kept


def _omitted_note(omitted: int) -> str:
    return (
        f"{omitted:,} earlier message{'s' if omitted != 1 else ''} not shown here "
        "(the live chat has the whole session)."
    )


def transcript_bundle(
    messages: Sequence[Message],
    *,
    secrets: Sequence[object] = (),
    notes: Sequence[str] = (),
) -> dict[str, str]:
    """The MIME bundle a saved notebook keeps for viewers without a kernel: the newest messages, bounded
    (:func:`bounded_messages`), with a note saying how many earlier ones it leaves out, then ``notes``
    (sentences that may quote model-chosen commands). No text/markdown: JupyterLab renders raw HTML inside
    trusted markdown, so only escaped HTML and plain text are offered; the HTML is one inert (MathJax-ignored)
    container."""
    shown, omitted = bounded_messages(messages)
    shown = _scrubbed(shown, secrets)  # once for both renderings
    notes = [str(note) for note in scrub_value(list(notes), secrets)]
    text = _transcript_text(shown) + terminal_safe("".join(f"[note] {note}\n" for note in notes))
    html = _transcript_html(shown) + "".join(
        f'<div class="hn-meta hn-note" style="opacity:.8">Note: {escape_html(note)}</div>' for note in notes
    )
    if omitted:
        note = _omitted_note(omitted)
        text = f"[{note}]\n\n{text}"
        html = f'<p class="hn-omitted">{escape_html(note)}</p>{html}'
    return {"text/plain": text, "text/html": html_block(html)}
