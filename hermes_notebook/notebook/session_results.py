"""What ``hermes.models()``, ``usage()`` and ``command()`` give back, each readable as text and as inert HTML.

Every string here came from a server (model names, category labels, command output): the text forms go through
:func:`~hermes_notebook.inert.terminal_safe`, the HTML forms through :mod:`hermes_notebook.inert`, and the
connection's key and token are scrubbed out of command output before it is kept.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..formatting import context_text, usage_line
from ..inert import escape_html, html_block, terminal_safe
from ..scrub import scrub
from ..session import CommandOutcome, UsageReading
from .results import Table

__all__ = [
    "MODEL_COLUMNS",
    "CommandResult",
    "ContextShare",
    "SessionUsage",
    "command_result",
    "context_shares",
    "models_table",
    "usage_from",
    "usage_of",
]

MODEL_COLUMNS = ("model", "provider", "current")

# An untranslated message key ("gateway.context.category.system_prompt") is no label: the id reads better.
_MESSAGE_KEY = re.compile(r"[a-z0-9_]+(?:\.[a-z0-9_]+)+")


def _int(value: Any) -> int | None:
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _first(raw: Mapping[str, Any], *keys: str) -> int | None:
    for key in keys:
        value = _int(raw.get(key))
        if value is not None:
            return value
    return None


@dataclass(frozen=True)
class ContextShare:
    """One category of the context window (system prompt, tool definitions, conversation, ...)."""

    label: str
    tokens: int


def context_shares(breakdown: Mapping[str, Any] | None) -> tuple[ContextShare, ...]:
    """The categories of a ``session.context_breakdown`` answer, labelled for a reader."""
    shares = []
    for item in (breakdown or {}).get("categories") or ():
        if not isinstance(item, Mapping) or _int(item.get("tokens")) is None:
            continue
        label = str(item.get("label") or "")
        if not label.strip() or _MESSAGE_KEY.fullmatch(label.strip()):
            label = str(item.get("id") or "other").replace("_", " ")
        shares.append(ContextShare(label.strip()[:80], int(item["tokens"])))
    return tuple(shares)


@dataclass(frozen=True)
class SessionUsage:
    """A session's usage: tokens, prompt cache, cost and context window, as far as the server reports them.

    ``notes`` say what this server could not report (e.g. an API Server has no session totals, only the last
    reply's); ``raw`` is the server's answer as it came.
    """

    session_id: str | None
    model: str = ""
    input_tokens: int | None = None
    output_tokens: int | None = None
    reasoning_tokens: int | None = None
    cache_read: int | None = None
    cache_write: int | None = None
    cost_usd: float | None = None
    calls: int | None = None
    context_used: int | None = None
    context_max: int | None = None
    context_percent: int | None = None
    breakdown: tuple[ContextShare, ...] = ()
    notes: tuple[str, ...] = ()
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False)

    def lines(self) -> list[str]:
        """The usage as short lines of text (what the repr shows)."""
        out = [f"session {self.session_id or '(none)'}" + (f", model {self.model}" if self.model else "")]
        tokens = usage_line({k: v for k, v in self.raw.items() if k not in ("context_used", "context_max")})
        if tokens:
            out.append(tokens)
        if self.calls is not None:
            out.append(f"{self.calls} model call{'s' if self.calls != 1 else ''}")
        if context := context_text(self.raw):
            out.append(context)
        for share in self.breakdown:
            out.append(f"  {share.label}: {share.tokens:,} tokens")
        out.extend(f"note: {note}" for note in self.notes)
        return [terminal_safe(line) for line in out]

    def __str__(self) -> str:
        return "\n".join(self.lines())

    def __repr__(self) -> str:
        return f"<SessionUsage {self.lines()[0]}>"

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(str(self))

    def _repr_html_(self) -> str:
        items = "".join(f"<li>{escape_html(line.strip())}</li>" for line in self.lines())
        return html_block(f"<ul>{items}</ul>", extra_class="hn-usage-report")


def usage_from(
    session_id: str | None,
    usage: Mapping[str, Any] | None,
    breakdown: Mapping[str, Any] | None = None,
    notes: Sequence[str] = (),
) -> SessionUsage:
    """A :class:`SessionUsage` from a usage dict of either server (Dashboard short names or ``*_tokens``)."""
    raw = dict(usage or {})
    cost = raw.get("cost_usd", raw.get("estimated_cost_usd"))
    model = raw.get("model") or (breakdown or {}).get("model") or ""
    merged = {**raw}
    for key in ("context_used", "context_max", "context_percent"):
        if merged.get(key) is None and breakdown and _int(breakdown.get(key)) is not None:
            merged[key] = breakdown[key]
    return SessionUsage(
        session_id=session_id,
        model=str(model),
        input_tokens=_first(raw, "input", "input_tokens", "prompt_tokens"),
        output_tokens=_first(raw, "output", "output_tokens", "completion_tokens"),
        reasoning_tokens=_first(raw, "reasoning", "reasoning_tokens"),
        cache_read=_first(raw, "cache_read", "cache_read_tokens"),
        cache_write=_first(raw, "cache_write", "cache_write_tokens"),
        cost_usd=float(cost) if isinstance(cost, (int, float)) and not isinstance(cost, bool) else None,
        calls=_first(raw, "calls"),
        context_used=_first(merged, "context_used"),
        context_max=_first(merged, "context_max"),
        context_percent=_first(merged, "context_percent"),
        breakdown=context_shares(breakdown),
        notes=tuple(notes),
        raw=merged,
    )


@dataclass(frozen=True)
class CommandResult:
    """What a Hermes slash command printed (``%hermes /name args``), shown as inert preformatted text."""

    command: str
    output: str
    warning: str = ""

    def __str__(self) -> str:
        text = self.output + (f"\n{self.warning}" if self.warning else "")
        return terminal_safe(text)

    def __repr__(self) -> str:
        return f"<CommandResult {terminal_safe(self.command)}: {len(self.output)} characters>"

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(str(self))

    def _repr_html_(self) -> str:
        warning = f"<p><i>{escape_html(self.warning)}</i></p>" if self.warning else ""
        return html_block(f"<pre>{escape_html(self.output)}</pre>{warning}", extra_class="hn-command-output")


def models_table(rows: Sequence[Mapping[str, Any]]) -> Table:
    """``hermes.models()``: one row per model, the current one named when nothing is listed."""
    current = next((r["model"] for r in rows if r.get("current")), None)
    return Table(
        [dict(r) for r in rows],
        columns=MODEL_COLUMNS,
        current=None,
        empty=f"no models listed (current: {current})",
    )


def usage_of(reading: UsageReading) -> SessionUsage:
    """``hermes.usage()`` from what the conversation read."""
    return usage_from(reading.session_id, reading.usage, reading.breakdown, reading.notes)


def command_result(outcome: CommandOutcome, secrets: Sequence[object]) -> CommandResult | str:
    """What ``hermes.command()`` shows (scrubbed of the connection's key and token), or the prompt it asks to
    send."""
    if outcome.kind in ("send", "skill") and outcome.message.strip():
        return outcome.message
    text = outcome.output or outcome.display or outcome.message or "(no output)"
    if outcome.kind == "prefill":
        text = f"Hermes suggests this prompt (send it with hermes.ask):\n{text}"
    return CommandResult(outcome.command, scrub(text, secrets), scrub(outcome.warning, secrets))
