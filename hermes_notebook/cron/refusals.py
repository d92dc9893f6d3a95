"""Why Hermes would refuse a schedule, said plainly, with an example that works.

Why apart from :mod:`.schedules` (which repeats the server's decision procedure): a refusal is most of the
work, and most of what users meet. The server's own patterns are here, character for character
(``cron/jobs.py`` ``parse_duration`` / ``parse_schedule``): both the procedure and its refusals read them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime, timedelta

from .wording import DAY_ABBR, MONTH_ABBR

__all__ = [
    "CRON_FIELD",
    "DATE_PREFIX",
    "GENERIC_EXAMPLES",
    "MACROS",
    "Invalid",
    "diagnose_cron",
    "diagnose_interval",
    "diagnose_other",
    "diagnose_timestamp",
    "duration_minutes",
    "example_for_never",
    "future_example",
]

# The server's own patterns, character for character (cron/jobs.py parse_duration / parse_schedule).
DURATION = re.compile(r"^(\d+)\s*(m|min|mins|minute|minutes|h|hr|hrs|hour|hours|d|day|days)$")
CRON_FIELD = re.compile(r"^[\d\*\-,/]+$")
DATE_PREFIX = re.compile(r"^\d{4}-\d{2}-\d{2}")
MULTIPLIER = {"m": 1, "h": 60, "d": 1440}

FIELDS = ("minute", "hour", "day-of-month", "month", "day-of-week", "second", "year")
RANGES = ((0, 59), (0, 23), (1, 31), (1, 12), (0, 7), (0, 59), (1970, 2099))
MACROS = {
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
    "@monthly": "0 0 1 * *",
    "@weekly": "0 0 * * 0",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@hourly": "0 * * * *",
}
GENERIC_EXAMPLES = "'every 30m' (recurring), '0 9 * * 1-5' (09:00 on weekdays), '2h' (once, in two hours)"


class Invalid(Exception):
    """A refusal with its explanation and a working example; turned into HermesValidationError."""

    def __init__(self, message: str, example: str) -> None:
        super().__init__(message)
        self.message = message
        self.example = example


def duration_minutes(text: str) -> int | None:
    match = DURATION.match(text.strip().lower())
    if not match:
        return None
    return int(match.group(1)) * MULTIPLIER[match.group(2)[0]]


def diagnose_interval(text: str) -> Invalid:
    rest = text[6:].strip()
    total = _sum_compound(rest)
    if total is not None:
        return Invalid(
            f"'{text}': Hermes takes one number and one unit (m, h or d) after 'every', not '{rest}'.",
            f"'every {total}m'",
        )
    m = re.fullmatch(r"(\d+)\s*(s|sec|secs|second|seconds)", rest.lower())
    if m:
        return Invalid(f"'{text}': Hermes has no seconds; the smallest unit is minutes (m).", "'every 1m'")
    m = re.fullmatch(r"(\d+)\s*(w|wk|wks|week|weeks)", rest.lower())
    if m:
        return Invalid(
            f"'{text}': Hermes has no weeks unit; use days (d).", f"'every {int(m.group(1)) * 7}d'"
        )
    m = re.fullmatch(r"(?:a|an|1)?\s*(minute|hour|day)", rest.lower())
    if m:
        return Invalid(f"'{text}': put a number before the unit.", f"'every 1{m.group(1)[0]}'")
    return Invalid(
        f"'{text}': after 'every' Hermes expects one number and a unit (m, h or d), not '{rest}'.",
        "'every 30m'",
    )


def _sum_compound(text: str) -> int | None:
    """Minutes in '1h30m' / '1h 30m', which Hermes refuses but users write."""
    pieces = re.findall(r"(\d+)\s*([a-z]+)", text.lower())
    if len(pieces) < 2 or re.sub(r"[\d\sa-z]", "", text.lower()):
        return None
    total = 0
    for number, unit in pieces:
        minutes = duration_minutes(number + unit)
        if minutes is None:
            return None
        total += minutes
    return total


def diagnose_cron(text: str, croniter_message: str) -> Invalid:
    parts = text.split()
    if len(parts) > 7:
        return Invalid(
            f"'{text}' has {len(parts)} fields; a cron expression has 5 "
            "(minute hour day-of-month month day-of-week).",
            f"'{' '.join(parts[:5])}'",
        )
    for i, part in enumerate(parts):
        problem = _field_problem(part, i)
        if problem:
            return Invalid(f"'{text}': {problem}", _example_fixing(parts, i))
    return Invalid(f"'{text}' is not a valid cron expression ({croniter_message}).", "'0 9 * * *'")


def _field_problem(part: str, index: int) -> str | None:
    """What is wrong with one cron field, in words, or None if it looks fine."""
    name = FIELDS[index]
    low, high = RANGES[index]
    if re.search(r"[A-Za-z]", part):
        return f"the {name} field '{part}' contains letters; Hermes accepts numbers only."
    if not CRON_FIELD.match(part):
        return f"the {name} field '{part}' may only contain digits and * - , /."
    for item in part.split(","):
        if item == "":
            return f"the {name} field '{part}' has an empty list item."
        base, _, step = item.partition("/")
        if step != "" and (not step.isdigit() or int(step) == 0):
            return f"the {name} field '{part}' needs a step of 1 or more after '/'."
        if base == "*":
            continue
        bounds = base.split("-")
        if len(bounds) > 2 or any(not b.isdigit() for b in bounds):
            return f"the {name} field '{part}' is not a number, range (a-b) or step (*/n)."
        for b in bounds:
            if not low <= int(b) <= high:
                return f"the {name} value {int(b)} is outside {low}-{high}."
    return None


def _example_fixing(parts: Sequence[str], index: int) -> str:
    fixed = list(parts[:5]) + ["*"] * max(0, 5 - len(parts))
    if index < 5:
        fixed[index] = {0: "0", 1: "9", 2: "1", 3: "*", 4: "1-5"}[index]
        return f"'{' '.join(fixed)}'"
    return f"'{' '.join(parts[:5])}'"


def example_for_never(parts: Sequence[str]) -> str:
    fixed = list(parts[:5])
    fixed[2] = "28" if fixed[3] not in ("*",) else "1"
    return f"'{' '.join(fixed)}'"


def _replace_names(field_text: str, index: int) -> str | None:
    """Translate day/month names in a cron field to the numbers Hermes needs (None if not possible)."""
    names = DAY_ABBR if index == 4 else MONTH_ABBR if index == 3 else None
    if names is None:
        return None
    unknown = False

    def swap(match: re.Match[str]) -> str:
        nonlocal unknown
        value = names.get(match.group(0)[:3].lower())
        if value is None:
            unknown = True
            return match.group(0)
        return str(value)

    out = re.sub(r"[A-Za-z]+", swap, field_text)
    return None if unknown else out


def diagnose_other(text: str) -> Invalid:
    lower = text.lower()
    if lower.startswith("@"):
        macro = lower.split()[0]
        if macro in MACROS:
            return Invalid(
                f"Hermes 0.19.0 does not accept cron macros like '{macro}'; write the 5 fields instead.",
                f"'{MACROS[macro]}'",
            )
        return Invalid(f"Hermes 0.19.0 does not accept '{macro}'.", GENERIC_EXAMPLES)
    if lower == "every" or (lower.startswith("every") and duration_minutes(lower[5:]) is not None):
        rest = text[5:].strip() or "30m"
        return Invalid(f"'{text}': write a space after 'every'.", f"'every {rest}'")
    parts = text.split()
    if 3 <= len(parts) <= 7 and any(CRON_FIELD.match(p) for p in parts):
        return _diagnose_cron_like(text, parts)
    m = re.fullmatch(r"(\d+)\s*(s|sec|secs|second|seconds)", lower)
    if m:
        return Invalid(
            f"'{text}': Hermes has no seconds; the smallest unit is minutes (m).", "'1m' (once) or 'every 1m'"
        )
    m = re.fullmatch(r"(\d+)\s*(w|wk|wks|week|weeks)", lower)
    if m:
        return Invalid(f"'{text}': Hermes has no weeks unit; use days (d).", f"'{int(m.group(1)) * 7}d'")
    total = _sum_compound(text)
    if total is not None:
        return Invalid(f"'{text}': Hermes takes one number and one unit (m, h or d).", f"'{total}m'")
    return Invalid(f"'{text}' is not a schedule Hermes understands.", GENERIC_EXAMPLES)


def _diagnose_cron_like(text: str, parts: list[str]) -> Invalid:
    for i, part in enumerate(parts[:5]):
        if re.search(r"[A-Za-z]", part):
            if i in (3, 4):
                fixed = _replace_names(part, i)
                if fixed is not None:
                    suggestion = list(parts[:5])
                    suggestion[i] = fixed
                    what = "Day" if i == 4 else "Month"
                    hint = (
                        " (0 or 7 = Sunday, 1 = Monday ... 6 = Saturday)"
                        if i == 4
                        else " (1 = January ... 12 = December)"
                    )
                    return Invalid(
                        f"{what} names like '{part}' are not accepted by Hermes; use numbers{hint}.",
                        f"'{' '.join(suggestion)}'",
                    )
            if re.search(r"[LW#?]", part):
                return Invalid(
                    f"'{text}': the {FIELDS[i]} field '{part}' uses Quartz syntax (L, W, #, ?), "
                    "which Hermes does not accept.",
                    _example_fixing(parts, i),
                )
            return Invalid(
                f"'{text}': the {FIELDS[i]} field '{part}' contains letters; Hermes accepts numbers only.",
                _example_fixing(parts, i),
            )
        if "?" in part or "#" in part:
            return Invalid(
                f"'{text}': the {FIELDS[i]} field '{part}' uses Quartz syntax (?, #), which Hermes "
                "does not accept; use '*' or plain numbers.",
                _example_fixing(parts, i),
            )
    if len(parts) < 5:
        return Invalid(
            f"'{text}' has {len(parts)} fields; a cron expression needs 5 (minute hour day-of-month month "
            "day-of-week).",
            f"'{' '.join(list(parts) + ['*'] * (5 - len(parts)))}'",
        )
    return Invalid(f"'{text}' is not a schedule Hermes understands.", GENERIC_EXAMPLES)


def diagnose_timestamp(text: str, reason: str, now: datetime) -> Invalid:
    parts = text.split()
    if len(parts) >= 5:  # "0 9 * * TUE" lands here on the server because it contains a "T"
        return _diagnose_cron_like(text, parts)
    detail = reason.replace("Invalid isoformat string: ", "not an ISO date/time: ")
    return Invalid(f"'{text}' is not a valid timestamp ({detail}).", f"'{future_example(now)}'")


def future_example(now: datetime) -> str:
    soon = (now + timedelta(days=1)).replace(hour=9, minute=0, second=0, microsecond=0)
    return soon.strftime("%Y-%m-%dT%H:%M")
