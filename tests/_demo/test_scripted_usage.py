"""The scripted model's BIGCONTEXT keyword: the terminal call, reported with a prompt size that makes Hermes
compact (pure: no server)."""

from __future__ import annotations

import json

from hermes_notebook._demo.script import BIG_USAGE, USAGE, Reply, plan_reply
from hermes_notebook._demo.scripted_model import _completion, _stream_chunks

TOOLS = [{"type": "function", "function": {"name": "terminal"}}]


def _body(text: str) -> dict[str, object]:
    return {"messages": [{"role": "user", "content": text}], "tools": TOOLS}


def test_bigcontext_calls_the_terminal_and_reports_a_large_prompt() -> None:
    """BIGCONTEXT <command> is RUN's tool call with BIG_USAGE, in the stream's last chunk and the JSON
    answer."""
    reply = plan_reply(_body("BIGCONTEXT echo squeezed"))
    assert [(c.name, dict(c.arguments)) for c in reply.tool_calls] == [
        ("terminal", {"command": "echo squeezed"})
    ]
    assert reply.usage == BIG_USAGE and BIG_USAGE["prompt_tokens"] > 100_000  # over half the 200k context
    frames = [
        json.loads(f[len(b"data: ") :]) for f, _ in _stream_chunks(reply, "c1") if f != b"data: [DONE]\n\n"
    ]
    assert [f["usage"] for f in frames if "usage" in f] == [BIG_USAGE]
    assert _completion(reply, "c1")["usage"] == BIG_USAGE


def test_other_replies_keep_the_small_usage() -> None:
    """Plain text and RUN still report USAGE; a reply without usage defaults to it."""
    for text in ("hello", "RUN echo hi"):
        reply = plan_reply(_body(text))
        frames = [
            json.loads(f[len(b"data: ") :]) for f, _ in _stream_chunks(reply, "c") if f != b"data: [DONE]\n\n"
        ]
        assert [f["usage"] for f in frames if "usage" in f] == [USAGE]
    assert _completion(Reply(text="x"), "c")["usage"] == USAGE
