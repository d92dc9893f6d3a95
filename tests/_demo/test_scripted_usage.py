"""The scripted model's BIGCONTEXT keyword: the terminal call, reported with a prompt size that makes Hermes
compact (pure: no server)."""

from __future__ import annotations

import json

from hermes_notebook._demo.script import BIG_USAGE, USAGE, Reply, plan_reply
from hermes_notebook._demo.scripted_model import ScriptedModel, _completion, _stream_chunks

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


def test_the_demos_model_reports_the_prompts_size_as_it_grows() -> None:
    """With ``estimate_usage`` (the demo), a reply reports about a token per four characters of the request,
    so the context gauge moves with the conversation instead of jumping; without it (the tests) USAGE stays;
    a reply with its own usage (BIGCONTEXT) keeps it either way."""
    demo, tests = ScriptedModel(estimate_usage=True), ScriptedModel()
    short = _body("hello")
    long = {"messages": [*short["messages"], {"role": "assistant", "content": "You said: hello " * 200}]}
    long["tools"] = TOOLS
    first, later = demo.next_reply(short).usage, demo.next_reply(long).usage
    assert first is not None and later is not None
    size = len(json.dumps([short["messages"], TOOLS])) // 4
    assert first["prompt_tokens"] == size and first["total_tokens"] == size + first["completion_tokens"]
    assert later["prompt_tokens"] > first["prompt_tokens"] + 500  # the 3,200 characters added
    assert tests.next_reply(short).usage in (None, USAGE)
    assert demo.next_reply(_body("BIGCONTEXT echo squeezed")).usage == BIG_USAGE
