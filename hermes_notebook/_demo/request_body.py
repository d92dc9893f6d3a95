"""What a chat-completions request body says, read as the scripted model reads it: the prompt it scripts on,
the tools Hermes offered, and the tool rounds and results since the user's message.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from .reply import content_text

__all__ = [
    "is_image_note",
    "offered_tools",
    "pending_tool_results",
    "prompt_of",
    "result_images",
    "tool_properties",
    "tool_rounds",
]


def prompt_of(body: Mapping[str, Any]) -> str:
    """The paragraph the model scripts on: the last paragraph of the last user message of a request."""
    for message in reversed(body.get("messages") or []):
        if message.get("role") == "user" and not (
            is_image_note(message) and not content_text(message["content"])
        ):
            paragraphs = [p.strip() for p in re.split(r"\n\s*\n", content_text(message.get("content")))]
            paragraphs = [p for p in paragraphs if p]
            while len(paragraphs) > 1 and paragraphs[-1].startswith("[System note:"):
                paragraphs.pop()
            return paragraphs[-1] if paragraphs else ""
    return ""


def offered_tools(body: Mapping[str, Any]) -> set[str]:
    names = set()
    for tool in body.get("tools") or []:
        name = (tool.get("function") or {}).get("name") if isinstance(tool, dict) else None
        if name:
            names.add(name)
    return names


def tool_properties(body: Mapping[str, Any], name: str) -> Mapping[str, Any]:
    """The JSON-schema ``properties`` Hermes offered for tool ``name`` (empty if not offered)."""
    for tool in body.get("tools") or []:
        function = tool.get("function") if isinstance(tool, dict) else None
        if isinstance(function, dict) and function.get("name") == name:
            props = (function.get("parameters") or {}).get("properties")
            return props if isinstance(props, dict) else {}
    return {}


def result_images(messages: Sequence[Mapping[str, Any]]) -> list[str]:
    """The images Hermes handed over with the latest tool results (``image_url`` parts of the tool messages,
    or of a user message it put after them), each as ``<mime> <bytes of base64>``."""
    found: list[str] = []
    for message in reversed(messages):
        if message.get("role") == "assistant":
            break
        content = message.get("content")
        for item in content if isinstance(content, list) else []:
            url = (item.get("image_url") or {}).get("url") if isinstance(item, dict) else None
            if isinstance(url, str) and url.startswith("data:"):
                head, _, data = url.partition(",")
                found.append(f"{head[5:].split(';')[0]} {len(data)}")
    return list(reversed(found))


def pending_tool_results(messages: Sequence[Mapping[str, Any]]) -> list[str] | None:
    """Tool results at the end of the conversation (the model must now answer them), else ``None``."""
    results: list[str] = []
    for message in reversed(messages):
        if message.get("role") == "user" and not results and is_image_note(message):
            continue  # the images of the tool results, which Hermes may send as a user message after them
        if message.get("role") != "tool":
            break
        results.append(content_text(message.get("content")))
    return list(reversed(results)) if results else None


def is_image_note(message: Mapping[str, Any]) -> bool:
    content = message.get("content")
    return isinstance(content, list) and any(
        isinstance(i, dict) and i.get("type") == "image_url" for i in content
    )


def tool_rounds(messages: Sequence[Mapping[str, Any]]) -> int:
    """How many tool-calling responses the model gave since the last user message (multi-step keywords)."""
    rounds = 0
    for message in reversed(messages):
        if message.get("role") == "user" and not is_image_note(message):
            break
        rounds += message.get("role") == "assistant" and bool(message.get("tool_calls"))
    return rounds
