"""Readers for untrusted wire payload values: the right type or None, never an exception."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["choices_or_none", "number_or_none", "result_failed", "text_or_none", "timed_out"]


def result_failed(result: Any) -> bool:
    # Tool results report failure in-band: {"output": ..., "exit_code": -1, "error": "BLOCKED: ..."}; success
    # carries "error": null (docs/protocol/dashboard.md §4.1 tool.complete: a denied command).
    return isinstance(result, Mapping) and bool(result.get("error"))


def timed_out(result: Any) -> bool:
    # An unanswered approval is denied after approvals.timeout and the tool result says so
    # ("BLOCKED: Command timed out without user response", docs/protocol/dashboard.md §4.2); no event marks
    # it.
    if isinstance(result, Mapping):
        result = result.get("error")
    return isinstance(result, str) and "timed out" in result


def number_or_none(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def text_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def choices_or_none(value: Any) -> list[str] | None:
    if isinstance(value, (list, tuple)):
        return [c if isinstance(c, str) else str(c) for c in value]
    return None
