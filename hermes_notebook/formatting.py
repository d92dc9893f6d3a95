"""How numbers from Hermes read to a person: token usage, context fill, cost, and times ("N min ago").

Why a module of its own: the same usage line appears in the static transcript (text and HTML) and the session
tables show the same times in the facade and the magic; one place keeps them consistent. The browser's twin
is ``js/src/chat/usage.ts``.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from datetime import datetime
from typing import Any

__all__ = [
    "ago",
    "cache_text",
    "context_text",
    "cost_text",
    "local_time",
    "table_cell",
    "usage_details",
    "usage_line",
]

# Hermes names the same counts differently per surface: the API Server uses OpenAI's ``*_tokens`` names,
# the Dashboard its own short names (``input``, ``output``, ``context_used`` ...).
_IN_KEYS = ("input_tokens", "prompt_tokens", "input", "prompt")
_OUT_KEYS = ("output_tokens", "completion_tokens", "output", "completion")
_REASONING_KEYS = ("reasoning_tokens", "reasoning")
_COST_KEYS = ("cost_usd", "actual_cost_usd", "estimated_cost_usd", "cost")
# Prompt caching: the Dashboard says cache_read/cache_write (+ cache_hit_pct), API runs cache_*_tokens.
_CACHE_READ_KEYS = ("cache_read", "cache_read_tokens")
_CACHE_WRITE_KEYS = ("cache_write", "cache_write_tokens")
_SHOWN = {
    *_IN_KEYS,
    *_OUT_KEYS,
    *_REASONING_KEYS,
    *_COST_KEYS,
    *_CACHE_READ_KEYS,
    *_CACHE_WRITE_KEYS,
    "cache_hit_pct",
    "context_used",
    "context_max",
    "context_percent",
}
_TIME_COLUMNS = (
    "started_at",
    "ended_at",
    "last_active",
    "created_at",
    "updated_at",
    "next_run_at",
    "last_run_at",
)
_CELL_LIMIT = 60


def _number(usage: Mapping[str, Any], keys: tuple[str, ...]) -> float | None:
    for key in keys:
        value = usage.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return value
    return None


def _count(value: float) -> str:
    return f"{value:,.0f}"


def cost_text(value: float) -> str:
    """``$0.0042`` for small amounts, ``$1.25`` from a cent up."""
    return f"${value:,.2f}" if value >= 0.01 or value == 0 else f"${value:.4f}"


def context_text(usage: Mapping[str, Any]) -> str:
    """``context 10 / 200,000 (0%)``, or "" when the server did not report the context window."""
    used, most = _number(usage, ("context_used",)), _number(usage, ("context_max",))
    if used is None or not most:
        return ""
    percent = _number(usage, ("context_percent",))
    if percent is None:
        percent = 100 * used / most
    return f"context {_count(used)} / {_count(most)} ({percent:.0f}%)"


def cache_text(usage: Mapping[str, Any]) -> str:
    """``cache 1,200 read · 300 written (45% hit)``, or "" when the server reported no prompt caching."""
    read, written = _number(usage, _CACHE_READ_KEYS), _number(usage, _CACHE_WRITE_KEYS)
    hit = _number(usage, ("cache_hit_pct",))
    if not read and not written:  # the newer Dashboard's session usage reports only the hit ratio
        return f"cache {hit:.0f}% hit" if hit else ""
    bits = [f"{_count(read)} read" if read else "", f"{_count(written)} written" if written else ""]
    line = "cache " + " · ".join(b for b in bits if b)
    return f"{line} ({hit:.0f}% hit)" if hit is not None else line


def usage_line(usage: Any) -> str:
    """One short line: tokens in/out, the context fill and the cost when the server reports them.

    The tokens are the reply's own (``turn``, turns/usage.py) where known; the Dashboard's running totals
    (they carry ``calls``) otherwise, and then the line says ``session`` so no one reads them as the reply's.
    """
    if not isinstance(usage, Mapping):
        return ""
    bits = []
    own = usage.get("turn")
    counted = own if isinstance(own, Mapping) else usage
    tokens_in, tokens_out = _number(counted, _IN_KEYS), _number(counted, _OUT_KEYS)
    reasoning = _number(counted, _REASONING_KEYS)
    if tokens_in is not None:
        bits.append(f"{_count(tokens_in)} in")
    if tokens_out is not None:
        bits.append(f"{_count(tokens_out)} out")
    if reasoning:
        bits.append(f"{_count(reasoning)} reasoning")
    line = f"{' · '.join(bits)} tokens" if bits else ""
    if line and counted is usage and "calls" in usage:
        line = f"session: {line}"
    extra = [t for t in (cache_text(usage), context_text(usage)) if t]
    cost = _number(usage, _COST_KEYS)
    if cost is not None:
        extra.append(cost_text(cost))
    return " · ".join([line, *extra] if line else extra)


def usage_details(usage: Any) -> str:
    """Everything else the server reported (for a hover title): ``model fake-model, calls 1, ...``."""
    if not isinstance(usage, Mapping):
        return ""
    rest = []
    for key, value in usage.items():
        if key in _SHOWN or value is None or isinstance(value, (Mapping, list)):
            continue
        shown = _count(value) if isinstance(value, int) and not isinstance(value, bool) else str(value)
        rest.append(f"{key.replace('_', ' ')} {shown}")
    return ", ".join(rest)


def _epoch(value: Any) -> float | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value) / 1000 if value > 1e11 else float(value)  # milliseconds from some servers
    if isinstance(value, str) and value.strip():
        try:
            return datetime.fromisoformat(value.strip().replace("Z", "+00:00")).timestamp()
        except ValueError:
            return None
    return None


def ago(seconds: float) -> str:
    """``just now``, ``5 min ago``, ``3 h ago``, ``2 days ago`` (``in 5 min`` for the future)."""
    later = seconds < 0
    seconds = abs(seconds)
    if seconds < 45:
        return "just now"
    if seconds < 3600:
        span = f"{max(1, round(seconds / 60))} min"
    elif seconds < 86400:
        span = f"{round(seconds / 3600)} h"
    else:
        days = round(seconds / 86400)
        span = f"{days} day" if days == 1 else f"{days} days"
    return f"in {span}" if later else f"{span} ago"


def local_time(value: Any, now: float | None = None) -> str:
    """An epoch (or ISO) time as local time plus how long ago: ``2026-12-03 09:15 (5 min ago)``.

    Values that are not times come back as text, unchanged.
    """
    epoch = _epoch(value)
    if epoch is None:
        return "" if value is None else str(value)
    now = time.time() if now is None else now
    stamp = datetime.fromtimestamp(epoch).strftime("%Y-%m-%d %H:%M")
    return f"{stamp} ({ago(now - epoch)})"


def table_cell(column: str, value: Any, now: float | None = None) -> str:
    """A session-table cell as shown: times as local time, long text cut at 60 characters."""
    if column in _TIME_COLUMNS:
        return local_time(value, now)
    text = "" if value is None else str(value)
    return text if len(text) <= _CELL_LIMIT else text[: _CELL_LIMIT - 3] + "..."
