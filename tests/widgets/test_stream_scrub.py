"""Secrets never leave the kernel through a widget's stream, even when a key arrives split across appends."""

from __future__ import annotations

import json
from typing import Any

import pytest

from hermes_notebook.widgets._stream import StreamingWidget
from tests.helpers import FIXTURES, expand_more

MID = "assistant:t"
KEY = "sk-" + "Q7" * 20
OWN = "own-connection-key-1234"


def _append(text: str) -> dict[str, Any]:
    return {"op": "append", "message_id": MID, "part_id": "text:0", "text": text}


@pytest.fixture
def widget() -> Any:
    w = StreamingWidget(mode="turn", secrets=[OWN])
    w.sent = []
    w.send = lambda content, buffers=None: w.sent.append(json.loads(json.dumps(content)))
    w.push(
        [
            {
                "op": "message",
                "message": {
                    "id": MID,
                    "role": "assistant",
                    "status": "streaming",
                    "usage": None,
                    "error": None,
                    "parts": [{"id": "text:0", "kind": "text", "text": ""}],
                },
            }
        ]
    )
    yield w
    w.close()


def _streamed(widget: Any) -> str:
    return "".join(
        c["text"]
        for m in expand_more(widget.sent)
        if m["type"] == "changes"
        for c in m["changes"]
        if c["op"] == "append"
    )


def test_a_key_split_across_appends_never_goes_out_whole_or_in_halves(widget: Any) -> None:
    """Appends are released only where no key can straddle them, so the joined stream and the kernel's copy
    hold the mask, never the key nor a part of it; what was held back goes out before the turn's end."""
    text = f"Your key is {KEY} and API_SERVER_KEY= {OWN}x plus {OWN} done"
    for i in range(0, len(text), 5):
        widget.push([_append(text[i : i + 5])])
        widget.flush()
    widget.push([{"op": "finish", "message_id": MID, "status": "complete", "usage": None, "error": None}])
    widget.flush()
    streamed = _streamed(widget)
    assert streamed == widget.snapshot()[0]["parts"][0]["text"]
    assert streamed == "Your key is ******** and API_SERVER_KEY= ******** plus ******** done"
    assert KEY[:8] not in json.dumps(widget.sent) and OWN[:8] not in json.dumps(widget.sent)


def test_an_unfinished_word_waits_for_the_next_append_and_snapshots_never_hold_half_a_key(
    widget: Any,
) -> None:
    """Text after the last whitespace waits; a snapshot taken meanwhile holds only what was released."""
    widget.push([_append("token: " + KEY[:10])])
    widget._dispatch(widget, {"type": "snapshot"}, [])
    assert KEY[:10] not in json.dumps(widget.sent)
    widget.push([_append(KEY[10:] + " ok ")])
    widget.flush()
    assert _streamed(widget) == "token: ******** ok "


def test_whole_messages_and_notices_are_scrubbed_too(widget: Any) -> None:
    """``reset()`` messages, tool results in patches and the ``notice``/``connection`` traitlets lose keys."""
    widget.reset(
        [
            {
                "id": "user:1",
                "role": "user",
                "status": "complete",
                "usage": None,
                "error": f"bad {KEY}",
                "parts": [{"id": "text:0", "kind": "text", "text": f"export GITHUB_TOKEN={OWN}"}],
            }
        ]
    )
    widget.notice = f"failed with {OWN}"
    widget.connection = {"status": "disconnected", "retry_in": None, "message": f"Bearer {OWN}"}
    widget._dispatch(widget, {"type": "snapshot"}, [])
    everything = json.dumps([widget.sent, widget.get_state(), widget.snapshot()])
    assert KEY not in everything and OWN not in everything
    assert "GITHUB_TOKEN=********" in everything and widget.notice == "failed with ********"


def test_a_new_parts_first_text_is_held_like_an_append() -> None:
    """A text part's first chunk arrives inside its ``part`` record (after a tool call, a new segment): its
    tail is held back like an append's, so a key cut between that record and the next append never leaves in
    halves."""
    w = StreamingWidget(mode="turn", secrets=[OWN])
    w.sent = []
    w.send = lambda content, buffers=None: w.sent.append(json.loads(json.dumps(content)))
    try:
        w.push(
            [
                {
                    "op": "message",
                    "message": {
                        "id": MID,
                        "role": "assistant",
                        "status": "streaming",
                        "usage": None,
                        "error": None,
                        "parts": [],
                    },
                }
            ]
        )
        w.push(
            [
                {
                    "op": "part",
                    "message_id": MID,
                    "part": {"id": "text:1", "kind": "text", "text": f"see {OWN[:9]}"},
                }
            ]
        )
        w.push([{"op": "append", "message_id": MID, "part_id": "text:1", "text": f"{OWN[9:]} now"}])
        w.push([{"op": "finish", "message_id": MID, "status": "complete", "usage": None, "error": None}])
        w.flush()
        assert OWN[:9] not in json.dumps(w.sent)
        assert w.snapshot()[0]["parts"][0]["text"] == "see ******** now"
    finally:
        w.close()


CORPUS = json.loads((FIXTURES / "xss_payloads.json").read_text())


def _card(kind: str, command: str) -> dict[str, Any]:
    return {
        "kind": kind,
        "request_id": f"{kind}-1",
        "status": "pending",
        "command": command,
        "question": None,
        "description": command,
        "choices": ["once", "deny"] if kind == "approval" else ["run", "deny"],
        "response": None,
    }


def test_cards_show_every_payload_as_it_runs_and_saved_copies_hold_no_key() -> None:
    """An approval's and a Run card's command reach the live views exactly as they run, whatever the payload
    of the shared corpus (the stream scrubber used to show ``token=exec(...)`` as ``token=********`` while a
    click ran the original); the static transcript a saved notebook keeps, and an export, hold none of the
    corpus's keys."""
    import html

    from hermes_notebook.export import to_markdown
    from hermes_notebook.render import transcript_bundle
    from hermes_notebook.widgets.stream_scrub import StreamScrubber

    for payload in CORPUS["payloads"]:
        parts = [
            {
                "id": f"tool:{kind}",
                "kind": "tool",
                "text": "",
                "name": "terminal",
                "status": "running",
                "arguments": None,
                "preview": None,
                "result": None,
                "duration": None,
                "interaction": _card(kind, payload),
            }
            for kind in ("approval", "code")
        ]
        message = {
            "id": MID,
            "role": "assistant",
            "status": "streaming",
            "usage": None,
            "error": None,
            "parts": parts,
        }
        scrubber = StreamScrubber([OWN])
        shown = scrubber.message(message)
        patch = {
            "op": "patch",
            "message_id": MID,
            "part_id": "tool:code",
            "fields": {"interaction": _card("code", payload)},
        }
        [patched] = scrubber.records([patch], lambda _m, _p: True)
        assert [p["interaction"]["command"] for p in shown["parts"]] == [payload, payload]
        assert (
            patched["fields"]["interaction"]["command"]
            == payload
            == patched["fields"]["interaction"]["description"]
        )
        bundle = transcript_bundle([message])
        saved = html.unescape(bundle["text/plain"] + bundle["text/html"] + to_markdown([message]))
        assert [s for s in CORPUS["secrets"] if s in saved] == [], payload
    assert "import json\ntoken=exec(chr(111)+chr(115))\njson.dumps(summary)" in CORPUS["payloads"]
