"""What one scripted model response is made of (:class:`Reply`, :class:`ToolCall`) and how its text streams.

Shared by the keyword table (:mod:`.script`), the follow-ups (:mod:`.follow_up`) and the server
(:mod:`.scripted_model`).
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["USAGE", "Reply", "ToolCall", "content_text"]

#: What a response reports unless it says otherwise.
USAGE = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}


@dataclass(frozen=True)
class ToolCall:
    """One function call the scripted model asks Hermes to run."""

    name: str
    arguments: Mapping[str, Any]
    id: str = field(default_factory=lambda: f"call_{uuid.uuid4().hex[:12]}")


@dataclass(frozen=True)
class Reply:
    """One scripted model response: reasoning, then text, then tool calls (any may be empty).

    A ``str`` text/reasoning is split into word-pair deltas; a sequence of strings is sent as exactly those
    deltas. ``status`` other than 200 makes the response an HTTP error instead.
    """

    text: str | Sequence[str] = ""
    reasoning: str | Sequence[str] = ""
    tool_calls: Sequence[ToolCall] = ()
    status: int = 200
    #: The usage the response reports; ``None`` means :data:`USAGE`.
    usage: Mapping[str, Any] | None = None
    #: Seconds between deltas; ``None`` uses the model's default delay.
    delay: float | None = None
    #: Seconds before answering at all (streamed or not), like a model thinking before its first token.
    pause: float = 0.0

    def text_deltas(self) -> list[str]:
        return _deltas(self.text)

    def reasoning_deltas(self) -> list[str]:
        return _deltas(self.reasoning)


def _deltas(value: str | Sequence[str]) -> list[str]:
    if not isinstance(value, str):
        return [v for v in value if v]
    # Two words per delta, keeping the whitespace, like a real tokenizer-ish stream.
    words = re.findall(r"\S+\s*|\s+", value)
    return ["".join(words[i : i + 2]) for i in range(0, len(words), 2)]


def content_text(content: Any) -> str:
    """The text of a message ``content`` (a string, or a list of OpenAI content parts)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(p.get("text", "")) for p in content if isinstance(p, dict) and p.get("type") == "text"
        )
    return "" if content is None else str(content)
