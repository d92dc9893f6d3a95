"""The one secret scrubber for every output path: exports, saved transcripts, the widget stream, filled prompts.

Why one module: a secret must be removed the same way wherever text leaves the kernel (a saved notebook, a file,
the model). :func:`scrub` removes the given secret values (the connection's API key and Dashboard token), bearer
and token parameters, and strings shaped like provider keys or ``NAME_KEY=value`` assignments. It runs on text
before escaping, which could otherwise hide a secret's shape from the patterns.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from .errors import redact

__all__ = ["MASK", "scrub", "scrub_value"]

#: What a removed secret becomes.
MASK = "********"

_KEY_SHAPES = [
    re.compile(r"\b(?:sk|pk|rk)-[A-Za-z0-9_-]{16,}"),       # OpenAI/Anthropic-style API keys
    re.compile(r"\bgh[pousr]_[A-Za-z0-9]{20,}"),              # GitHub tokens
    re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}"),           # Slack tokens
    re.compile(r"\bAKIA[0-9A-Z]{16}\b"),                      # AWS access key ids
    re.compile(r"(?i)\b(api[_-]?key|token|secret|password|passwd)(\s*[=:]\s*)[^\s\"'`,;]{6,}"),
    # Environment-style assignments: API_SERVER_KEY=..., GITHUB_TOKEN: ..., DB_PASSWORD="..."
    re.compile(r"\b([A-Z][A-Z0-9_]*_(?:KEY|TOKEN|SECRET|PASSWORD|PASSWD))(\s*[=:]\s*[\"']?)[^\s\"'`,;]{6,}"),
]


def scrub(text: str, secrets: Sequence[object] = ()) -> str:
    """``text`` without the given secret values, bearer/token parameters or anything shaped like a key."""
    text = redact(text, *secrets)
    for pattern in _KEY_SHAPES:
        text = pattern.sub(lambda m: (m.group(1) + m.group(2) if m.lastindex == 2 else "") + MASK, text)
    return text


def scrub_value(value: Any, secrets: Sequence[object] = ()) -> Any:
    """``value`` with :func:`scrub` applied to every string in it (dicts and lists rebuilt, the rest kept)."""
    if isinstance(value, str):
        return scrub(value, secrets)
    if isinstance(value, Mapping):
        return {key: scrub_value(item, secrets) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [scrub_value(item, secrets) for item in value]
    return value
