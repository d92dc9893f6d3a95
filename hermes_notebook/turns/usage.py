"""A reply's own token counts (pure).

The Dashboard reports a session's running totals with each turn (``message.complete``'s ``usage``: ``input``,
``output``, ``calls`` ... since the session's agent started), so a line under a reply that printed them would
grow from reply to reply. A turn's own counts are the difference from the totals when it began; they go into
the usage as ``turn`` (the totals stay as they are, for whoever reads them). The context fill is a state, not
a sum: it stays the session's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["COUNTED", "totals", "with_turn"]

#: The running totals a turn's own counts are taken from.
COUNTED = ("input", "output", "reasoning", "calls")


def totals(usage: Any) -> dict[str, int] | None:
    """The running totals in a Dashboard usage (None when it reports no token counts)."""
    if not isinstance(usage, Mapping) or not isinstance(usage.get("input"), int):
        return None
    return {key: value for key in COUNTED if isinstance(value := usage.get(key, 0), int)}


def with_turn(usage: Any, before: Mapping[str, int] | None) -> Any:
    """``usage`` with ``turn``: its counts minus ``before`` (the totals when the turn began). Unchanged when
    the totals before are unknown, or went down (the session's agent restarted: they no longer add up)."""
    after = totals(usage)
    if after is None or before is None or any(after.get(k, 0) < before.get(k, 0) for k in after):
        return usage
    return {**usage, "turn": {key: value - before.get(key, 0) for key, value in after.items()}}
