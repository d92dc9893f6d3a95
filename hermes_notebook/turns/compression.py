"""Context compression as the conversation shows it: the texts of ``marker`` parts and how to read the wire.

What the real servers send (docs/architecture.md, "Markers"):

* the Dashboard announces every compaction with ``status.update {kind: "compacting"}`` (auto-compaction in a
  turn, and the manual ``session.compress``); a newer Dashboard follows a compaction it refused with
  ``status.update {kind: "warn", text: "... Compression refused ..."}``;
* ``usage.compressions`` (``message.complete``, ``session.info``) counts the session's compactions, so a
  compaction nobody announced to this client shows as the counter growing;
* ``session.compress`` answers ``{status, before_messages, after_messages, before_tokens, after_tokens,
  summary}``;
* the API Server reports none of it (only a rotated ``X-Hermes-Session-Id``).

Every text here is our own wording built from numbers, so nothing the server wrote reaches a marker.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = [
    "BETWEEN_TURNS",
    "COMPACTED",
    "REFUSED",
    "UNANNOUNCED",
    "compress_result_text",
    "compressions_of",
    "is_refusal",
    "is_summary_text",
]

COMPACTED = "Context compressed: earlier messages were summarized"
REFUSED = "Context compression skipped: the summary would not have been shorter, nothing was dropped"
UNANNOUNCED = "Context compressed during this turn"
BETWEEN_TURNS = "Context compressed since the previous turn"


def compressions_of(usage: Any) -> int | None:
    """``usage.compressions`` as an int, or None when absent or not a count (API Server usage, bad input)."""
    if not isinstance(usage, Mapping):
        return None
    value = usage.get("compressions")
    return value if type(value) is int and value >= 0 else None


def is_refusal(kind: Any, text: Any) -> bool:
    """A newer Dashboard's ``status.update {kind: "warn"}`` saying the compaction just attempted was
    refused."""
    return kind == "warn" and isinstance(text, str) and "compression refused" in text.lower()


# How a stored compaction summary row starts (both servers write one after compacting; REST history returns
# it as an ordinary user or assistant row): the current handoff, the legacy one, and the merged-context
# header.
_SUMMARY_PREFIXES = ("[CONTEXT COMPACTION", "[CONTEXT SUMMARY]:", "[PRIOR CONTEXT — for reference only")


def is_summary_text(text: str) -> bool:
    """A history row that is Hermes' compaction summary (shown as a marker, not as anyone's message)."""
    return text.lstrip().startswith(_SUMMARY_PREFIXES)


def _count(value: Any) -> int | None:
    return value if type(value) is int and value >= 0 else None


def compress_result_text(result: Any) -> str:
    """The marker text for a ``session.compress`` answer: ``Context compressed: 8 → 6 messages (~14,842 →
    …)``."""
    if not isinstance(result, Mapping):
        return "Context compressed"
    before, after = _count(result.get("before_messages")), _count(result.get("after_messages"))
    before_tok, after_tok = _count(result.get("before_tokens")), _count(result.get("after_tokens"))
    summary = result.get("summary")
    summary = summary if isinstance(summary, Mapping) else {}
    if result.get("status") == "aborted" or summary.get("aborted") is True:
        kept = f": {before} messages kept" if before is not None else ""
        return f"Context compression failed{kept}"
    if summary.get("noop") is True or (before is not None and before == after):
        kept = f" ({before} messages kept)" if before is not None else ""
        return f"Context compression removed nothing{kept}"
    text = "Context compressed"
    if before is not None and after is not None:
        text += f": {before} → {after} messages"
        if before_tok is not None and after_tok is not None:
            text += f" (~{before_tok:,} → ~{after_tok:,} tokens)"
    return text
