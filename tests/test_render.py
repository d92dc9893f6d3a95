"""Static transcripts and sanitized markdown (pure, no servers)."""

from __future__ import annotations

import re

import pytest

from hermes_notebook import export
from hermes_notebook.render import (
    markdown_to_html,
    model_markdown,
    transcript_bundle,
    transcript_html,
    transcript_markdown,
    transcript_text,
)

INJECTIONS = [
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "<svg onload=alert(1)>",
    "<iframe src='javascript:alert(1)'></iframe>",
    "[click](javascript:alert(1))",
    "[click](JaVaScRiPt:alert(1))",
    "[x](vbscript:msgbox(1))",
    "[x](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
    '<a href="javascript:alert(1)">x</a>',
    "<body onload=alert(1)>",
    "<object data=x></object><embed src=x>",
    "<style>*{background:url(javascript:alert(1))}</style>",
    "&lt;script&gt;alert(1)&lt;/script&gt;",
    '<div style="width:expression(alert(1))">',
    "![x](javascript:alert(1))",
    "<details open ontoggle=alert(1)>",
]


def _message(text: str, **extra: object) -> dict:
    return {
        "id": "assistant:t",
        "role": "assistant",
        "status": "complete",
        "usage": None,
        "error": None,
        "parts": [
            {
                "id": "text:0",
                "kind": "text",
                "text": text,
                "name": None,
                "status": None,
                "arguments": None,
                "preview": None,
                "result": None,
                "duration": None,
                "interaction": None,
            }
        ],
        **extra,
    }


@pytest.mark.parametrize("payload", INJECTIONS)
def test_markdown_never_emits_active_html(payload: str) -> None:
    """Injected HTML or script URLs in model output come out as inert text."""
    out = markdown_to_html(payload).lower()
    assert "<script" not in out
    assert "<iframe" not in out and "<object" not in out and "<embed" not in out and "<svg" not in out
    assert not re.search(r"<[a-z][^>]*\son[a-z]+\s*=", out)
    assert 'href="javascript:' not in out and 'href="vbscript:' not in out and 'href="data:' not in out
    assert 'src="javascript:' not in out


def test_links_open_safely() -> None:
    """Links get rel=noopener and target=_blank."""
    out = markdown_to_html("[docs](https://example.org)")
    assert 'rel="noopener noreferrer"' in out and 'target="_blank"' in out


def test_transcript_carries_text_tools_and_interactions() -> None:
    """All three formats show the reply text, the tool call and the interaction outcome."""
    msg = _message("The **answer** is 42.")
    msg["parts"].insert(
        0,
        {
            "id": "tool:c1",
            "kind": "tool",
            "text": "",
            "name": "terminal",
            "status": "completed",
            "arguments": {"command": "ls"},
            "preview": "ls",
            "result": {"output": "a.txt"},
            "duration": 0.25,
            "interaction": {
                "kind": "approval",
                "request_id": "approval-1",
                "status": "answered",
                "command": "rm -rf x",
                "question": None,
                "description": "delete",
                "choices": ["once", "deny"],
                "response": "deny",
            },
        },
    )
    user = {
        "id": "user:t",
        "role": "user",
        "status": "complete",
        "usage": None,
        "error": None,
        "parts": [{"id": "text:0", "kind": "text", "text": "What is it?"}],
    }
    bundle = transcript_bundle([user, msg])
    assert set(bundle) == {"text/plain", "text/html"}  # no text/markdown: Lab renders raw HTML in it
    for text in [*bundle.values(), transcript_markdown([user, msg])]:
        assert "What is it?" in text and "42" in text and "terminal" in text and "deny" in text
    assert "<strong>answer</strong>" in bundle["text/html"]
    assert "a.txt" in transcript_markdown([user, msg])


def test_a_card_that_names_itself_keeps_its_title_in_the_transcript() -> None:
    """A preview's card carries its own title (it ran in a copy of the kernel): every static format and the
    export say it, not the bare kind a real run's card would show."""
    title = "Hermes' preview in a copy of your kernel"
    msg = _message("done")
    card = {
        "kind": "run",
        "request_id": "run-1",
        "status": "answered",
        "command": "print(1)",
        "question": None,
    }
    card |= {"description": "Running in a copy.", "choices": ["stop"], "response": "finished", "title": title}
    msg["parts"].insert(0, {"id": "tool:c1", "kind": "tool", "name": "preview", "status": "completed"})
    msg["parts"][0] |= {"text": "", "arguments": {"change": "c1"}, "interaction": card}
    bundle = transcript_bundle([msg])
    for text in [bundle["text/plain"], export.to_markdown([msg])]:
        assert f"{title}: print(1) [answered" in text, text
    assert "_Hermes&#39; preview in a copy of your kernel&#58; print" in transcript_markdown([msg])
    assert "Hermes&#x27; preview in a copy of your kernel: print(1)" in bundle["text/html"]


def test_html_transcript_escapes_tool_output() -> None:
    """Tool results and names are escaped, not interpreted."""
    msg = _message("ok")
    msg["parts"].append(
        {
            "id": "tool:x",
            "kind": "tool",
            "name": "<b>evil</b>",
            "status": "error",
            "result": "<script>alert(1)</script>",
            "preview": None,
            "arguments": None,
            "duration": None,
            "interaction": None,
            "text": "",
        }
    )
    out = transcript_html([msg])
    assert "<script>alert" not in out and "&lt;script&gt;" in out and "<b>evil" not in out


def test_long_results_are_clipped_in_static_output() -> None:
    """A huge tool result is cut so saved notebooks stay small."""
    msg = _message("done")
    msg["parts"].append(
        {
            "id": "tool:x",
            "kind": "tool",
            "name": "terminal",
            "status": "completed",
            "result": "y" * 50_000,
            "preview": None,
            "arguments": None,
            "duration": None,
            "interaction": None,
            "text": "",
        }
    )
    out = transcript_html([msg])
    assert len(out) < 10_000 and "more characters" in out


def test_empty_transcript_text() -> None:
    """An empty conversation still renders a readable line."""
    assert transcript_text([]) == "(empty conversation)\n"


@pytest.mark.parametrize(
    "text",
    [
        "\\begin{align}x &= 1\\end{align}",
        "$$\\begin{pmatrix}a & b\\end{pmatrix}$$",
        "see \\begin {equation}\\href{javascript:alert(1)}{x}\\end{equation}",
        "as in \\eqref{eq:1} and \\ref{fig}",
        "\\[x^2\\]",
        "\\(x\\)",
        "costs $5",
    ],
)
def test_math_in_model_markdown_becomes_a_literal_fence(text: str) -> None:
    """Anything MathJax would typeset (environments and references too, with no $) is kept only as a fenced
    block."""
    assert model_markdown(text) == f"```\n{text}\n```"


def test_plain_model_markdown_stays_markdown() -> None:
    """Text with no HTML, image, unsafe link or math keeps its markdown (a backslash alone is not math)."""
    for text in (
        "The **answer** is 42.",
        "C:\\begin_here and \\beginning",
        "- a list\n- [docs](https://x.example)",
    ):
        assert model_markdown(text) == text


def test_notes_go_inside_the_one_inert_container_with_controls_shown() -> None:
    """The bundle's notes are escaped inside the same MathJax-ignored container as the transcript; in
    text/plain their control characters are shown, not sent to the terminal."""
    note = "not answered: echo $x$ \\begin{align}<img src=x onerror=alert(1)>\x1b[8m"
    bundle = transcript_bundle([_message("ok")], notes=[note])
    html_text = bundle["text/html"]
    assert html_text.startswith(
        '<div class="hn-inert tex2jax_ignore mathjax_ignore">'
    ) and html_text.endswith("</div></div>")
    assert html_text.count('<div class="hn-inert') == 1
    assert "Note: not answered: echo $x$ \\begin{align}&lt;img src=x onerror=alert(1)&gt;" in html_text
    assert bundle["text/plain"].endswith(
        "[note] not answered: echo $x$ \\begin{align}<img src=x onerror=alert(1)>\u27e6U+001B\u27e7[8m\n"
    )
