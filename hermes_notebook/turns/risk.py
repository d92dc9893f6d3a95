"""Risk signals on tool parts: what Hermes found in a tool's output, live and from history.

Live, ``tool.output_risk {tool_id, name, risk, findings, redacted}`` follows the tool's ``tool.complete`` when
Hermes' scan of an untrusted tool's output (web, browser, MCP tools) matched prompt-injection or secret
patterns; the part gets a ``risk`` with the findings (docs/protocol/dashboard-newer.md §14). Hermes stores no
findings, only the output wrapped as ``<untrusted_tool_result ...>``: history unwraps it (so the result equals
the live one) and marks the part ``untrusted``. Findings are Hermes' pattern ids: server text, capped, shown
inert. Pure.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any, cast

from .changes import ChangeRecord, RiskDict, RiskLevel
from .events import Event
from .payload import text_or_none

if TYPE_CHECKING:
    from .model import Part
    from .vocabulary import FolderOps

__all__ = ["MAX_FINDINGS", "RISK_LEVELS", "mark_wrapped", "on_output_risk", "risk_of", "unwrap_untrusted"]

RISK_LEVELS: tuple[RiskLevel, ...] = ("high", "medium", "low", "untrusted")
MAX_FINDINGS = 50
_MAX_FINDING = 200
# agent/tool_dispatch_helpers.py _maybe_wrap_untrusted: the opening tag, one fixed paragraph, the output, the
# end tag.
_WRAPPED = re.compile(
    r'\A<untrusted_tool_result source="[^"\n]{0,200}">\n'
    r"The following content was retrieved from an external source\.[^\n]*\n\n"
    r"(?P<inner>.*)\n</untrusted_tool_result>\Z",
    re.S,
)


def risk_of(payload: Any) -> RiskDict | None:
    """A ``tool.output_risk`` payload as the part's ``risk``; None when it says nothing (no level, no
    findings)."""
    if not hasattr(payload, "get"):
        return None
    level = payload.get("risk")
    raw = payload.get("findings")
    findings = [str(f)[:_MAX_FINDING] for f in raw[:MAX_FINDINGS]] if isinstance(raw, list) else []
    if level not in RISK_LEVELS:
        level = "high" if findings or isinstance(level, str) and level else None  # an unknown level: say high
    if level is None:
        return None
    return {
        "level": cast(RiskLevel, level),
        "findings": findings,
        "redacted": payload.get("redacted") is True,
    }


def on_output_risk(f: FolderOps, e: Event) -> list[ChangeRecord]:
    """``tool.output_risk``: the findings onto that tool's part (merged with any it has)."""
    tool_id = text_or_none(e.payload.get("tool_id"))
    part = f.part(f"tool:{tool_id}") if tool_id else None
    risk = risk_of(e.payload)
    if part is None or risk is None:
        return []
    old = part.risk
    if old is not None:
        findings = old["findings"] + [x for x in risk["findings"] if x not in old["findings"]]
        level = (
            risk["level"]
            if RISK_LEVELS.index(risk["level"]) < RISK_LEVELS.index(old["level"])
            else old["level"]
        )
        risk = {
            "level": level,
            "findings": findings[:MAX_FINDINGS],
            "redacted": old["redacted"] or risk["redacted"],
        }
    if risk == old:
        return []
    part.risk = risk
    return [f.patch(part, {"risk": risk})]


# agent/tool_dispatch_helpers.py _is_untrusted_tool and _UNTRUSTED_WRAP_MIN_CHARS: the tools whose output
# Hermes wraps before the model reads it, and the shortest output it wraps.
_UNTRUSTED_NAMES = frozenset({"web_extract", "web_search"})
_UNTRUSTED_PREFIXES = ("browser_", "mcp_")
_WRAP_MIN_CHARS = 32


def mark_wrapped(f: FolderOps, part: Part, result: Any) -> list[ChangeRecord]:
    """After ``tool.complete`` of a tool whose output Hermes hands the model wrapped as untrusted data (web,
    browser and MCP tools, the notebook's kernel tools among them): the part's ``risk`` says so, as history's
    unwrapped rows do, unless Hermes reported findings of its own."""
    name = part.name or ""
    if part.risk is not None or not (name in _UNTRUSTED_NAMES or name.startswith(_UNTRUSTED_PREFIXES)):
        return []
    text = result if isinstance(result, str) else json.dumps(result, ensure_ascii=False, default=str)
    if result is None or len(text) < _WRAP_MIN_CHARS:
        return []
    part.risk = {"level": "untrusted", "findings": [], "redacted": False}
    return [f.patch(part, {"risk": part.risk})]


def unwrap_untrusted(content: str) -> tuple[str, bool]:
    """A stored tool output without Hermes' untrusted-data wrapper, and whether it had one."""
    if not content.startswith("<untrusted_tool_result"):
        return content, False
    match = _WRAPPED.match(content)
    return (match.group("inner"), True) if match else (content, False)
