"""Sanitized rendering of messages for places without our front end.

Model and tool output is untrusted. Markdown is rendered by markdown-it-py with raw HTML disabled (it is shown
as text), links limited to http(s)/mailto and opened with ``rel="noopener noreferrer"``; every other string is
HTML-escaped. The static transcript (``text/plain``, ``text/markdown``, ``text/html``) is what a saved
notebook shows on GitHub, nbviewer or nbconvert, where no kernel and no widget JS run.

Inputs are the message dicts of the turn model's contract (``docs/architecture.md``).
"""

from __future__ import annotations

import html
import json
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache
from typing import Any

from markdown_it import MarkdownIt

from .formatting import usage_details, usage_line

__all__ = ["bounded_messages", "markdown_to_html", "transcript_bundle", "transcript_html", "transcript_markdown", "transcript_text"]

Message = Mapping[str, Any]

#: Tool results longer than this are cut in static transcripts (the live widget has "show all").
RESULT_PREVIEW_CHARS = 2000

@lru_cache(maxsize=1)
def _markdown() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False}).enable("table")
    # markdown-it's own validateLink already refuses javascript:, vbscript:, file: and non-image data: URLs.

    def render_link_open(renderer: Any, tokens: Any, idx: int, options: Any, env: Any) -> str:
        tokens[idx].attrSet("rel", "noopener noreferrer")
        tokens[idx].attrSet("target", "_blank")
        return renderer.renderToken(tokens, idx, options, env)

    md.add_render_rule("link_open", render_link_open)
    return md


def markdown_to_html(text: str) -> str:
    """Render untrusted markdown to HTML in which no raw HTML, script or unsafe link survives."""
    return _markdown().render(text)


# --- helpers ------------------------------------------------------------------------------------------

def _parts(message: Message) -> Sequence[Mapping[str, Any]]:
    return message.get("parts") or ()


def _result_text(result: Any) -> str:
    if result is None:
        return ""
    if isinstance(result, str):
        return result
    try:
        return json.dumps(result, ensure_ascii=False, indent=2)
    except (TypeError, ValueError):
        return str(result)


def _clip(text: str, limit: int = RESULT_PREVIEW_CHARS) -> str:
    return text if len(text) <= limit else text[:limit] + f"\n… ({len(text) - limit} more characters)"


def _tool_summary(part: Mapping[str, Any]) -> str:
    args = part.get("preview") or part.get("arguments") or ""
    if not isinstance(args, str):
        args = _result_text(args)
    duration = part.get("duration")
    timing = f", {duration:.2f} s" if isinstance(duration, (int, float)) else ""
    return f"{part.get('name') or 'tool'}({args}) [{part.get('status') or 'unknown'}{timing}]"


def _interaction_line(interaction: Mapping[str, Any]) -> str:
    kind = interaction.get("kind", "request")
    subject = interaction.get("command") or interaction.get("question") or interaction.get("description") or ""
    status = interaction.get("status", "pending")
    answer = interaction.get("response")
    tail = f" -> {answer}" if answer is not None and status == "answered" else ""
    return f"{kind}: {subject} [{status}{tail}]"


def _usage_line(usage: Any) -> str:
    return usage_line(usage)


# --- text/plain -----------------------------------------------------------------------------------------

def transcript_text(messages: Iterable[Message]) -> str:
    """A plain-text transcript: who said what, tools one line each."""
    lines: list[str] = []
    for message in messages:
        role = "You" if message.get("role") == "user" else "Hermes"
        status = message.get("status")
        suffix = f" ({status})" if status not in (None, "complete", "streaming") else ""
        lines.append(f"{role}{suffix}:")
        for part in _parts(message):
            kind = part.get("kind")
            if kind == "text" and part.get("text"):
                lines.append(str(part["text"]))
            elif kind == "reasoning" and part.get("text"):
                lines.append("[reasoning] " + str(part["text"]).replace("\n", " ")[:200])
            elif kind == "tool":
                lines.append("[tool] " + _tool_summary(part))
                if part.get("interaction"):
                    lines.append("  " + _interaction_line(part["interaction"]))
        if message.get("error"):
            lines.append(f"[error] {message['error']}")
        usage = _usage_line(message.get("usage"))
        if usage:
            lines.append(f"[{usage}]")
        lines.append("")
    return "\n".join(lines).rstrip() + "\n" if lines else "(empty conversation)\n"


# --- text/markdown --------------------------------------------------------------------------------------

def _fence(text: str) -> str:
    longest = max((len(run) for run in text.split("\n") if set(run) == {"`"}), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}\n{text}\n{fence}"


def transcript_markdown(messages: Iterable[Message]) -> str:
    """A markdown transcript. Model text is already markdown; tool output goes in fenced blocks."""
    out: list[str] = []
    for message in messages:
        role = "**You**" if message.get("role") == "user" else "**Hermes**"
        status = message.get("status")
        out.append(role + (f" _({status})_" if status not in (None, "complete", "streaming") else ""))
        for part in _parts(message):
            kind = part.get("kind")
            if kind == "text" and part.get("text"):
                out.append(str(part["text"]))
            elif kind == "reasoning" and part.get("text"):
                out.append("> " + str(part["text"]).replace("\n", "\n> "))
            elif kind == "tool":
                out.append(f"`{_tool_summary(part)}`")
                if part.get("interaction"):
                    out.append(f"_{_interaction_line(part['interaction'])}_")
                result = _result_text(part.get("result"))
                if result:
                    out.append(_fence(_clip(result)))
        if message.get("error"):
            out.append(f"_error: {message['error']}_")
        out.append("")
    return "\n\n".join(out).strip() + "\n"


# --- text/html ------------------------------------------------------------------------------------------

_CSS = (
    ".hn-static{font-family:var(--jp-ui-font-family,system-ui,sans-serif);"
    "color:var(--jp-ui-font-color1,inherit);border:1px solid var(--jp-border-color2,#ccc);"
    "border-radius:4px;padding:8px 12px;max-width:60em}"
    ".hn-static .hn-role{font-weight:600;margin-top:8px}"
    ".hn-static .hn-user{background:var(--jp-layout-color2,rgba(127,127,127,.08));border-radius:4px;padding:2px 8px}"
    ".hn-static details{margin:4px 0}"
    ".hn-static .hn-tool{border-left:3px solid var(--jp-brand-color1,#1976d2);padding:2px 8px;margin:4px 0;"
    "font-family:var(--jp-code-font-family,monospace);font-size:var(--jp-code-font-size,12px)}"
    ".hn-static pre{white-space:pre-wrap;overflow-wrap:anywhere;background:var(--jp-cell-editor-background,"
    "rgba(127,127,127,.08));padding:6px;border-radius:3px}"
    ".hn-static .hn-meta{color:var(--jp-ui-font-color2,#666);font-size:smaller}"
)


def _html_part(part: Mapping[str, Any]) -> str:
    esc = html.escape
    kind = part.get("kind")
    if kind == "text":
        return f'<div class="hn-text">{markdown_to_html(str(part.get("text") or ""))}</div>'
    if kind == "reasoning":
        return (f'<details class="hn-reasoning"><summary>Reasoning</summary>'
                f'<pre>{esc(str(part.get("text") or ""))}</pre></details>')
    if kind == "tool":
        body = [f'<div class="hn-tool" data-status="{esc(str(part.get("status") or ""))}">{esc(_tool_summary(part))}']
        if part.get("interaction"):
            body.append(f'<div class="hn-meta">{esc(_interaction_line(part["interaction"]))}</div>')
        result = _result_text(part.get("result"))
        if result:
            body.append(f"<details><summary>Result</summary><pre>{esc(_clip(result))}</pre></details>")
        body.append("</div>")
        return "".join(body)
    return ""


def transcript_html(messages: Iterable[Message]) -> str:
    """A self-contained, sanitized HTML transcript styled with JupyterLab theme variables."""
    esc = html.escape
    chunks = [f"<style>{_CSS}</style>", '<div class="hn-static">']
    for message in messages:
        is_user = message.get("role") == "user"
        status = message.get("status")
        label = "You" if is_user else "Hermes"
        if status not in (None, "complete", "streaming"):
            label += f" ({status})"
        chunks.append(f'<div class="hn-role">{esc(label)}</div>')
        chunks.append(f'<div class="{"hn-user" if is_user else "hn-assistant"}">')
        chunks.extend(_html_part(part) for part in _parts(message))
        if message.get("error"):
            chunks.append(f'<div class="hn-meta">error: {esc(str(message["error"]))}</div>')
        usage = _usage_line(message.get("usage"))
        if usage:
            details = usage_details(message.get("usage"))
            title = f' title="{esc(details)}"' if details else ""
            chunks.append(f'<div class="hn-meta hn-usage"{title}>{esc(usage)}</div>')
        chunks.append("</div>")
    chunks.append("</div>")
    return "".join(chunks)


# --- bounded transcripts -------------------------------------------------------------------------------

#: A static transcript keeps at most this many of the newest messages (a 10,000-message session would
#: otherwise put its whole history into every saved notebook, three times over).
TRANSCRIPT_MAX_MESSAGES = 200
#: ... and stops adding older messages once their text passes this many characters (the newest one always shows).
TRANSCRIPT_MAX_CHARS = 500_000


def bounded_messages(messages: Sequence[Message], max_messages: int = TRANSCRIPT_MAX_MESSAGES,
                     max_chars: int = TRANSCRIPT_MAX_CHARS) -> tuple[Sequence[Message], int]:
    """The newest messages that fit the bounds, and how many earlier ones were left out."""
    kept = 0
    chars = 0
    for message in reversed(messages):
        size = sum(len(str(p.get("text") or "")) + min(len(_result_text(p.get("result"))), RESULT_PREVIEW_CHARS)
                   for p in _parts(message))
        if kept >= max_messages or (kept > 0 and chars + size > max_chars):
            break
        kept += 1
        chars += size
    return messages[len(messages) - kept:], len(messages) - kept


def _omitted_note(omitted: int) -> str:
    return (f"{omitted:,} earlier message{'s' if omitted != 1 else ''} not shown here "
            "(the live chat has the whole session).")


def transcript_bundle(messages: Sequence[Message]) -> dict[str, str]:
    """The MIME bundle a saved notebook keeps for viewers without a kernel: the newest messages, bounded
    (:func:`bounded_messages`), with a note saying how many earlier ones it leaves out."""
    shown, omitted = bounded_messages(messages)
    bundle = {
        "text/plain": transcript_text(shown),
        "text/markdown": transcript_markdown(shown),
        "text/html": transcript_html(shown),
    }
    if omitted:
        note = _omitted_note(omitted)
        bundle["text/plain"] = f"[{note}]\n\n{bundle['text/plain']}"
        bundle["text/markdown"] = f"*{note}*\n\n{bundle['text/markdown']}"
        bundle["text/html"] = f'<p class="hn-omitted">{html.escape(note)}</p>{bundle["text/html"]}'
    return bundle
