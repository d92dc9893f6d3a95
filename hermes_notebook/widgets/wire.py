"""Changes as they go on the wire: how much each adds to a message's ``rev``, and text patches as splices.

Why apart from the widget: both are counted exactly as the front end counts them (``changeWeight``,
``string.length`` in UTF-16 code units, js/src/chat/state.ts), and a test holds the two sides to each other;
the widget only decides when to send.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["SPLICE_MIN_KEEP", "change_weight", "splice_of", "utf16_len"]

#: A text patch keeping at least this many characters of the part goes on the wire as a ``splice``.
SPLICE_MIN_KEEP = 64


def change_weight(change: Mapping[str, Any]) -> int:
    """How much one change record adds to its message's ``rev`` (the front end's ``changeWeight``)."""
    if change.get("op") != "append":
        return 1
    return utf16_len(change.get("text") or "")


def utf16_len(text: str) -> int:
    """Length in UTF-16 code units, as JavaScript counts ``string.length``."""
    if text.isascii():
        return len(text)
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def _common_prefix(a: str, b: str) -> int:
    if a.startswith(b):
        return len(b)
    if b.startswith(a):
        return len(a)
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:  # binary search on slices: O(n log n) in C, not a Python loop per character
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def splice_of(old: object, patch: Mapping[str, Any]) -> dict[str, Any] | None:
    """A ``splice`` record for a patch of a part's whole ``text`` (``old`` before it) that keeps most of it
    (the end-of-turn trim of trailing whitespace, a final text extending the streamed one), so the text isn't
    sent twice; None when a plain patch is better."""
    new = patch["fields"]["text"]
    if not isinstance(new, str) or not isinstance(old, str):
        return None
    keep = _common_prefix(old, new)
    if keep < SPLICE_MIN_KEEP:
        return None
    return {
        "op": "splice",
        "message_id": patch["message_id"],
        "part_id": patch["part_id"],
        "keep": utf16_len(old[:keep]),
        "text": new[keep:],
    }
