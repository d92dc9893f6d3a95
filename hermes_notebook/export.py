"""Take a conversation away as a document: Markdown, a standalone HTML page, or a notebook (``.ipynb``).

Why its own module: the exports must read well where no kernel runs (GitHub, nbviewer) and must never carry
a secret. Every export goes through :func:`scrub`, which removes the connection's API key and Dashboard token,
bearer/token parameters, and strings shaped like provider keys (in each message string before escaping, and in
the whole document). Model and server text is untrusted and goes through the package's one escaping path
(:mod:`hermes_notebook.inert`, :func:`hermes_notebook.render.model_markdown`): model markdown is kept only
when no raw HTML, image, unsafe link or math delimiter is in it, else it is a literal fenced block; names,
statuses, errors and titles are escaped; tool output sits in fences longer than any backtick run inside. So an
export opened where raw HTML is rendered (JupyterLab, GitHub) holds nothing live and loads nothing remote.

Input is the turn model's message dicts (``docs/architecture.md``): ``{"role", "parts", "status", "usage"}``.
"""

from __future__ import annotations

import contextlib
import html
import json
import os
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from .errors import HermesUsageError
from .inert import escape_markdown, html_line, markdown_code, markdown_fence
from .render import model_markdown, transcript_html
from .render_media import images_markdown, risk_markdown
from .scrub import scrub, scrub_document
from .scrub import scrub_value as _scrubbed
from .turns.labels import label_of, result_text

__all__ = [
    "DEFAULT_PATH",
    "FORMATS",
    "conversation",
    "enrich",
    "export_messages",
    "messages_of",
    "scrub",
    "to_html",
    "to_ipynb",
    "to_markdown",
    "write_new",
]

Message = Mapping[str, Any]

#: Where ``Hermes.export`` writes when given no path (the working directory, usually beside the notebook).
DEFAULT_PATH = Path("hermes-conversation").with_suffix(".md")
#: File suffix -> export format.
FORMATS = {".md": "markdown", ".markdown": "markdown", ".html": "html", ".htm": "html", ".ipynb": "ipynb"}
#: Tool output longer than this is cut in an export (the session keeps all of it).
RESULT_CHARS = 4000

# --- what a conversation is -------------------------------------------------------------------------------


def messages_of(source: Any) -> list[dict[str, Any]]:
    """Message dicts from a :class:`Reply`, a list of replies and/or message dicts, or a transcript."""
    if hasattr(source, "message") and hasattr(source, "prompt"):  # a Reply
        source = [source]
    if not isinstance(source, Iterable) or isinstance(source, (str, bytes, Mapping)):
        raise HermesUsageError(
            f"cannot export a {type(source).__name__}: pass a session id, a Reply or messages"
        )
    out: list[dict[str, Any]] = []
    for item in source:
        if hasattr(item, "message") and hasattr(item, "prompt"):
            if item.prompt:
                out.append(
                    {"role": "user", "parts": [{"kind": "text", "text": item.prompt}], "status": "complete"}
                )
            out.append(dict(item.message))
        elif isinstance(item, Mapping):
            out.append(dict(item))
        else:
            raise HermesUsageError(f"cannot export a {type(item).__name__} inside a conversation")
    return out


def _text_of(message: Message) -> str:
    return "\n\n".join(
        str(p.get("text")) for p in message.get("parts") or () if p.get("kind") == "text" and p.get("text")
    )


def enrich(history: Sequence[Message], replies: Sequence[Any]) -> list[dict[str, Any]]:
    """The stored history, with each reply this kernel saw live put in place of its stored copy.

    Why: the server's stored transcript drops what happened around a tool call (the approval asked and its
    answer, durations, usage); the live :class:`Reply` has all of it. A reply replaces the stored assistant
    message with the same text, matched from the end so a session continued elsewhere still lines up.
    """
    out = [dict(m) for m in history]
    pending = list(replies)
    for index in range(len(out) - 1, -1, -1):
        if not pending:
            break
        if out[index].get("role") != "assistant":
            continue
        text = _text_of(out[index])
        for back in range(len(pending) - 1, -1, -1):
            if _text_of(pending[back].message) == text:
                out[index] = dict(pending[back].message)
                del pending[back:]
                break
    return out


# --- pieces shared by the formats ---------------------------------------------------------------------------


def _result(value: Any) -> str:
    value = result_text(value)
    if len(value) > RESULT_CHARS:
        value = value[:RESULT_CHARS] + f"\n… ({len(value) - RESULT_CHARS:,} more characters)"
    return value


def _usage(usage: Any) -> str:
    if not isinstance(usage, Mapping):
        return ""
    found = []
    for label, keys in (
        ("in", ("input", "input_tokens", "prompt_tokens")),
        ("out", ("output", "output_tokens", "completion_tokens")),
        ("total", ("total", "total_tokens")),
    ):
        value = next((usage[k] for k in keys if isinstance(usage.get(k), int)), None)
        if value is not None:
            found.append(f"{label} {value:,}")
    return "tokens: " + ", ".join(found) if found else ""


def _interaction(inter: Mapping[str, Any]) -> str:
    subject = inter.get("command") or inter.get("question") or inter.get("description") or ""
    status = inter.get("status", "pending")
    answer = inter.get("response")
    shown = f" → {answer}" if answer is not None and status == "answered" else ""
    title = inter.get("title")  # a card naming itself (a preview's): the export says what it was
    head = title if isinstance(title, str) and title else inter.get("kind", "request")
    return f"{head}: {subject} [{status}{shown}]"


def _tool_markdown(part: Mapping[str, Any]) -> str:
    label = label_of(part)
    args = label["detail"] or ""
    if len(args) > 120:
        args = args[:117] + "..."
    duration = part.get("duration")
    timing = f", {duration:.2f} s" if isinstance(duration, (int, float)) else ""
    # The raw-HTML <summary> line: HTML-escaped, one line, no math; it reads as written in the file.
    summary = html_line(f"Tool {label['name']}({args}) — {part.get('status') or 'unknown'}{timing}")
    body = []
    if part.get("interaction"):  # inline code: inert, and it reads as written in the file
        body.append(markdown_code(_interaction(part["interaction"])))
    result = _result(part.get("result"))
    if result:
        body.append(markdown_fence(result))
    inner = "\n\n".join(body) or "(no output)"
    return f"<details><summary>{summary}</summary>\n\n{inner}\n\n</details>"


def _message_markdown(message: Message, *, heading: bool = True, images: bool = False) -> str:
    """One message: a role heading, its text, tools collapsed, and the usage line; each image a line naming
    it, or with ``images`` an inline raster image embedded as a ``data:`` image."""
    is_user = message.get("role") == "user"
    out = []
    if heading:
        status = message.get("status")
        label = "You" if is_user else "Hermes"
        shown = (
            f" _{escape_markdown(f'({status})')}_" if status not in (None, "complete", "streaming") else ""
        )
        out.append(f"### {label}{shown}")
    for part in message.get("parts") or ():
        kind = part.get("kind")
        if kind == "text" and part.get("text"):
            out.append(model_markdown(str(part["text"])))
            out.extend(images_markdown(part, embed=images))
        elif kind == "reasoning" and part.get("text"):
            out.append(
                f"<details><summary>Reasoning</summary>\n\n{markdown_fence(str(part['text']))}\n\n</details>"
            )
        elif kind == "tool":
            out.extend([_tool_markdown(part), *risk_markdown(part), *images_markdown(part, embed=images)])
        elif kind == "marker" and part.get("text"):
            out.append(f"_— {escape_markdown(part['text'])} —_")
    if message.get("error"):
        out.append(f"_error: {escape_markdown(message['error'])}_")
    usage = _usage(message.get("usage"))
    if usage and not is_user:
        out.append(f"<sub>{usage}</sub>")
    return "\n\n".join(out)


# --- the formats
# ----------------------------------------------------------------------------------------------


def to_markdown(
    messages: Iterable[Message],
    *,
    title: str | None = None,
    secrets: Sequence[object] = (),
    images: bool = False,
) -> str:
    """A Markdown document: one section per message, tools in ``<details>`` (GitHub renders them collapsed);
    ``images``: the inline images embedded (else each named on a line)."""
    chunks = [f"# {escape_markdown(scrub(title, secrets))}"] if title else []
    chunks.extend(_message_markdown(_scrubbed(m, secrets), images=images) for m in messages)
    return scrub_document("\n\n".join(chunks).strip() + "\n", secrets)


def to_html(
    messages: Sequence[Message],
    *,
    title: str | None = None,
    secrets: Sequence[object] = (),
    images: bool = False,
) -> str:
    """A standalone, sanitized HTML page (no script; model HTML is shown as text); ``images`` as for
    Markdown."""
    heading = html.escape(title or "Hermes conversation")
    body = transcript_html([_scrubbed(m, secrets) for m in messages], images=images)
    page = (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f"<title>{heading}</title>\n"
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        '</head>\n<body style="margin:2em auto;max-width:62em">\n'
        f'<h1 style="font-family:system-ui,sans-serif">{heading}</h1>\n{body}\n</body>\n</html>\n'
    )
    return scrub_document(page, secrets)


def to_ipynb(
    messages: Sequence[Message],
    *,
    title: str | None = None,
    secrets: Sequence[object] = (),
    images: bool = False,
) -> dict[str, Any]:
    """An nbformat 4 notebook: one markdown cell per prompt and one per reply; usage in the cell's metadata;
    ``images`` as for Markdown."""
    cells: list[dict[str, Any]] = []
    if title:
        cells.append(_cell(f"# {escape_markdown(scrub(title, secrets))}", {}, secrets))
    for message in messages:
        role = "user" if message.get("role") == "user" else "assistant"
        meta: dict[str, Any] = {"role": role}
        for key in ("status", "usage", "id"):
            if message.get(key) is not None:
                meta[key] = message[key]
        cells.append(
            _cell(_message_markdown(_scrubbed(message, secrets), images=images), {"hermes": meta}, secrets)
        )
    return {
        "nbformat": 4,
        "nbformat_minor": 5,
        "metadata": {"hermes": {"exported_by": "hermes-notebook"}, "language_info": {"name": "python"}},
        "cells": cells,
    }


def _cell(source: str, metadata: dict[str, Any], secrets: Sequence[object]) -> dict[str, Any]:
    import uuid

    meta = json.loads(scrub(json.dumps(metadata), secrets)) if metadata else {}
    return {
        "cell_type": "markdown",
        "id": uuid.uuid4().hex[:8],
        "metadata": meta,
        "source": scrub_document(source, secrets),
    }


def _refuse_symlink(target: Path) -> None:
    if target.is_symlink():
        raise HermesUsageError(
            f"{target} is a symbolic link: exports never write through one; choose another path"
        )


def write_new(target: Path, text: str, *, overwrite: bool = False) -> Path:
    """Write ``text`` to ``target`` atomically (a temp file in the same directory, then a rename).

    Never through a symbolic link, and never over an existing file unless ``overwrite``: a new file is put in
    place with a hard link, which fails if the name was taken meanwhile (the ``O_EXCL`` of a rename).
    """
    _refuse_symlink(target)
    if target.exists() and not overwrite:
        raise HermesUsageError(
            f"{target} already exists: pass overwrite=True (%hermes export --overwrite) to replace it"
        )
    if target.exists() and not target.is_file():
        raise HermesUsageError(f"{target} is not a regular file: cannot export over it")
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(
        dir=target.parent, prefix=f".{target.name}.", suffix=".tmp"
    )  # O_EXCL, mode 0600
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as file:
            file.write(text)
        os.chmod(temp, target.stat().st_mode & 0o777 if overwrite and target.exists() else 0o644)
        if overwrite:
            _refuse_symlink(
                target
            )  # os.replace swaps the name itself and never follows a link put there since
            os.replace(temp, target)
        else:
            try:
                os.link(temp, target)
            except FileExistsError:
                raise HermesUsageError(
                    f"{target} already exists: pass overwrite=True to replace it"
                ) from None
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp)
    return target


def export_messages(
    messages: Sequence[Message],
    path: str | Path,
    *,
    format: str | None = None,  # noqa: A002 - the user's word
    title: str | None = None,
    secrets: Sequence[object] = (),
    overwrite: bool = False,
    images: bool = False,
) -> Path:
    """Write ``messages`` to ``path`` as Markdown, HTML or ``.ipynb`` (from ``format`` or the suffix); an
    existing file only with ``overwrite=True``, a symbolic link never; ``images``: embed the images whose
    bytes are here (inline ones, and the files this kernel read for its replies), else name each on a line."""
    target = Path(path).expanduser()
    kind = format or FORMATS.get(target.suffix.lower())
    if kind not in ("markdown", "html", "ipynb"):
        raise HermesUsageError(
            f"cannot tell the export format of {target.name!r}: use a .md, .html or .ipynb name, or format="
        )
    if kind == "markdown":
        text = to_markdown(messages, title=title, secrets=secrets, images=images)
    elif kind == "html":
        text = to_html(messages, title=title, secrets=secrets, images=images)
    else:
        text = (
            json.dumps(
                to_ipynb(messages, title=title, secrets=secrets, images=images), ensure_ascii=False, indent=1
            )
            + "\n"
        )
    return write_new(target, text, overwrite=overwrite)


def conversation(
    source: Any,
    stored: Sequence[Message] | None,
    replies: Sequence[Any],
    path: str | Path,
    *,
    format: str | None = None,
    title: str | None = None,
    secrets: Sequence[object] = (),  # noqa: A002
    overwrite: bool = False,
    images: bool = False,
) -> Path:
    """``Hermes.export``: the stored history enriched with the live replies, or the replies/messages given."""
    messages = enrich(stored, replies) if stored is not None else messages_of(source)
    return export_messages(
        messages, path, format=format, title=title, secrets=secrets, overwrite=overwrite, images=images
    )
