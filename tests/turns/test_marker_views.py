"""A ``marker`` part (context compression) in every Python view: text, markdown and HTML transcripts,
exports."""

from __future__ import annotations

from typing import Any

from hermes_notebook.export import to_html, to_ipynb, to_markdown
from hermes_notebook.render import transcript_html, transcript_markdown, transcript_text
from hermes_notebook.turns import TurnFolder
from hermes_notebook.turns.compression import COMPACTED
from hermes_notebook.turns.events import Event

HOSTILE = "Context compressed <script>alert(1)</script> [x](javascript:alert(2)) *bold*"


def _messages(marker_text: str) -> list[dict[str, Any]]:
    """A turn folded from Dashboard-shaped events: text, a compaction, text again (then the marker text
    set)."""
    folder = TurnFolder("v", compressions=0)
    for etype, payload in [
        ("message.start", {}),
        ("message.delta", {"text": "Before the squeeze."}),
        ("status.update", {"kind": "compacting", "text": "Compacting context"}),
        ("message.delta", {"text": "After the squeeze."}),
        ("message.complete", {"text": "", "status": "complete", "usage": {"total": 3, "compressions": 1}}),
    ]:
        event = Event.from_dashboard_frame({"method": "event", "params": {"type": etype, "payload": payload}})
        assert event is not None
        folder.apply(event)
    message = folder.message.to_dict()
    assert [p["kind"] for p in message["parts"]] == ["text", "marker", "text"]
    message["parts"][1]["text"] = marker_text
    user = {
        "id": "user:v",
        "role": "user",
        "status": "complete",
        "parts": [
            {
                "id": "text:0",
                "kind": "text",
                "text": "hi",
                "name": None,
                "status": None,
                "arguments": None,
                "preview": None,
                "result": None,
                "duration": None,
                "interaction": None,
            }
        ],
        "usage": None,
        "error": None,
    }
    return [user, dict(message)]


def test_plain_text_and_markdown_transcripts_show_the_marker_between_the_texts() -> None:
    """The text transcript shows the marker line in place; the markdown one escapes it (no live markup)."""
    text = transcript_text(_messages(COMPACTED))  # type: ignore[arg-type]
    assert (
        text.index("Before the squeeze.")
        < text.index(f"--- {COMPACTED} ---")
        < text.index("After the squeeze.")
    )
    md = transcript_markdown(_messages(HOSTILE))  # type: ignore[arg-type]
    line = next(line for line in md.splitlines() if line.startswith("_— "))
    assert "<script>" not in md and "](javascript:" not in md and "*bold*" not in line
    assert md.index("Before the squeeze.") < md.index(line) < md.index("After the squeeze.")


def test_html_transcript_marker_is_an_escaped_separator() -> None:
    """The static HTML transcript gives the marker role=separator with an escaped label, between the texts."""
    html = transcript_html(_messages(HOSTILE))  # type: ignore[arg-type]
    assert 'class="hn-marker" role="separator" aria-label="Context compressed &lt;script&gt;' in html
    assert "<script>" not in html
    assert (
        html.index("Before the squeeze.") < html.index('class="hn-marker"') < html.index("After the squeeze.")
    )


def test_exports_keep_the_marker_in_order_and_inert() -> None:
    """Markdown, HTML and ipynb exports keep the marker between the texts, with nothing live in it."""
    messages = _messages(HOSTILE)
    md = to_markdown(messages)
    assert "<script>" not in md and "](javascript:" not in md
    assert (
        md.index("Before the squeeze.") < md.index("_— Context compressed") < md.index("After the squeeze.")
    )
    page = to_html(messages)
    assert "<script>" not in page and 'role="separator"' in page
    notebook = to_ipynb(messages)
    sources = "".join(
        "".join(c["source"]) if isinstance(c["source"], list) else c["source"] for c in notebook["cells"]
    )
    assert "_— Context compressed" in sources and "<script>" not in sources
