"""Cron-job schedules exactly as Hermes 0.19.0 accepts them, checked before anything is sent.

Why: the jobs API answers a bad schedule with HTTP 500 and a terse text, and rejects things users expect to
work (``@daily``, ``MON``). This module repeats the server's decision procedure step by step
(``cron/jobs.py`` ``parse_schedule`` plus the checks ``create_job`` makes when it computes the first run), so a
schedule that passes here is accepted by the server and one that fails here would have been refused. Failing
schedules get a message that says what is wrong and an example that works.

The grammar (docs/protocol/api-server.md §7, checked against the real function in ``tests/test_schedules.py``):

- ``every <N><unit>``: a recurring interval; one number and one unit (``m``, ``h``, ``d`` and their long forms).
- five space-separated numeric cron fields (``minute hour day-of-month month day-of-week``), each matching
  ``[\\d*\\-,/]+``, then valid for croniter; a 6th field is seconds, a 7th the year (Hermes passes them on).
- an ISO timestamp (anything containing ``T`` or starting ``YYYY-MM-DD``): once at that time, not more than
  120 s in the past; a naive time is in the Hermes server's time zone.
- a bare duration such as ``30m``, ``2h``, ``1d``: once, that long after the job is created.

Times: Hermes evaluates cron expressions and naive timestamps in its configured time zone (``timezone`` in its
``config.yaml``, else the server's local zone). Functions here take ``tz``; the default is this machine's
local zone, which is right when Hermes runs beside the notebook with no ``timezone`` set.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, time, timedelta, tzinfo
from typing import Literal

from croniter import croniter

from ..errors import HermesUsageError, HermesValidationError

__all__ = [
    "ONESHOT_GRACE_SECONDS",
    "PRESETS",
    "Schedule",
    "ScheduleCheck",
    "check",
    "daily",
    "describe",
    "describe_stored",
    "every_n_minutes",
    "hourly",
    "monthly",
    "next_runs",
    "parse",
    "validate",
    "weekdays",
    "weekly",
]

#: How far in the past a one-shot time may be and still be accepted (cron/jobs.py ``ONESHOT_GRACE_SECONDS``).
ONESHOT_GRACE_SECONDS = 120

Kind = Literal["cron", "interval", "once"]

# The server's own patterns, character for character (cron/jobs.py parse_duration / parse_schedule).
_DURATION = re.compile(r"^(\d+)\s*(m|min|mins|minute|minutes|h|hr|hrs|hour|hours|d|day|days)$")
_CRON_FIELD = re.compile(r"^[\d\*\-,/]+$")
_DATE_PREFIX = re.compile(r"^\d{4}-\d{2}-\d{2}")
_MULTIPLIER = {"m": 1, "h": 60, "d": 1440}

_FIELDS = ("minute", "hour", "day-of-month", "month", "day-of-week", "second", "year")
_RANGES = ((0, 59), (0, 23), (1, 31), (1, 12), (0, 7), (0, 59), (1970, 2099))
_DAY_NAMES = ("Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday")
_MONTH_NAMES = ("January", "February", "March", "April", "May", "June", "July", "August", "September",
                "October", "November", "December")
_DAY_ABBR = {name[:3].lower(): i for i, name in enumerate(_DAY_NAMES)}
_MONTH_ABBR = {name[:3].lower(): i + 1 for i, name in enumerate(_MONTH_NAMES)}
_MACROS = {
    "@yearly": "0 0 1 1 *", "@annually": "0 0 1 1 *", "@monthly": "0 0 1 * *", "@weekly": "0 0 * * 0",
    "@daily": "0 0 * * *", "@midnight": "0 0 * * *", "@hourly": "0 * * * *",
}
_GENERIC_EXAMPLES = "'every 30m' (recurring), '0 9 * * 1-5' (09:00 on weekdays), '2h' (once, in two hours)"


@dataclass(frozen=True)
class Schedule:
    """A schedule Hermes will accept: what to send (``text``) and what it means."""

    #: The string to send (the input without surrounding whitespace, as the server stores it).
    text: str
    kind: Kind
    #: What Hermes will show as ``schedule_display`` (e.g. ``every 60m``, ``once in 30m``).
    display: str
    #: Plain-language meaning, e.g. "every day at 09:00".
    description: str
    expr: str | None = None
    minutes: int | None = None
    #: One-shot time: a timestamp's instant, or for a duration the instant it would have if created ``now``.
    run_at: datetime | None = None
    #: Accepted but probably not what was meant (e.g. a seconds field, "every 0m").
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True)
class ScheduleCheck:
    """The result of :func:`check`: never raises, so a form can show it as the user types."""

    ok: bool
    text: str
    message: str = ""
    example: str = ""
    kind: Kind | None = None
    description: str = ""
    next_runs: tuple[datetime, ...] = ()
    warnings: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, object]:
        """JSON-ready form (ISO times) for the widget."""
        return {
            "ok": self.ok, "text": self.text, "message": self.message, "example": self.example,
            "kind": self.kind, "description": self.description,
            "next_runs": [t.isoformat() for t in self.next_runs], "warnings": list(self.warnings),
        }


class _Invalid(Exception):
    """A refusal with its explanation and a working example; turned into HermesValidationError."""

    def __init__(self, message: str, example: str) -> None:
        super().__init__(message)
        self.message = message
        self.example = example


# --- parsing: the server's decision procedure ------------------------------------------------------------


def _local_tz() -> tzinfo:
    tz = datetime.now().astimezone().tzinfo
    assert tz is not None
    return tz


def _now(now: datetime | None, tz: tzinfo | None) -> datetime:
    zone = tz or (now.tzinfo if now is not None and now.tzinfo is not None else None) or _local_tz()
    if now is None:
        return datetime.now(zone)
    return now.replace(tzinfo=zone) if now.tzinfo is None else now.astimezone(zone)


def _duration_minutes(text: str) -> int | None:
    match = _DURATION.match(text.strip().lower())
    if not match:
        return None
    return int(match.group(1)) * _MULTIPLIER[match.group(2)[0]]


def parse(schedule: object, *, now: datetime | None = None, tz: tzinfo | None = None) -> Schedule:
    """Check a schedule the way Hermes 0.19.0 does and return what it means.

    Raises :class:`~hermes_notebook.errors.HermesValidationError` (nothing was sent: ``status`` is ``None``)
    whose message says what is wrong and gives an example that works.
    """
    try:
        return _parse(schedule, _now(now, tz))
    except _Invalid as exc:
        error = HermesValidationError(
            f"{exc.message} Example that works: {exc.example}",
            status=None, endpoint="schedule check", code="invalid_schedule", param="schedule",
            server_message=None,
        )
        error.example = exc.example  # type: ignore[attr-defined]
        raise error from None


def validate(schedule: object, *, now: datetime | None = None, tz: tzinfo | None = None) -> str:
    """Return the schedule string to send, or raise HermesValidationError before any request."""
    return parse(schedule, now=now, tz=tz).text


def _parse(schedule: object, now: datetime) -> Schedule:
    if not isinstance(schedule, str):
        raise _Invalid(f"A schedule must be a string, not {type(schedule).__name__}.", "'every 30m'")
    text = schedule.strip()
    if not text:
        raise _Invalid("The schedule is empty.", _GENERIC_EXAMPLES)
    lower = text.lower()

    # 1. "every <duration>": a recurring interval.
    if lower.startswith("every "):
        minutes = _duration_minutes(text[6:].strip())
        if minutes is None:
            raise _diagnose_interval(text)
        try:
            _ = now + timedelta(minutes=minutes)
        except OverflowError:
            raise _Invalid(f"'{text}' is too long an interval for Hermes to compute a next run.", "'every 30d'") from None
        warnings: tuple[str, ...] = ()
        if minutes == 0:
            warnings = ("'every 0m' is accepted, but the job then runs on every scheduler tick (once a minute).",)
        return Schedule(text, "interval", f"every {minutes}m", _describe_minutes(minutes, recurring=True),
                        minutes=minutes, warnings=warnings)

    # 2. Five or more space-separated fields, the first five numeric: a cron expression.
    parts = text.split()
    if len(parts) >= 5 and all(_CRON_FIELD.match(p) for p in parts[:5]):
        try:
            cron = croniter(text)
        except Exception as exc:
            raise _diagnose_cron(text, str(exc)) from None
        try:
            croniter(text, now).get_next(datetime)
        except Exception:
            raise _Invalid(
                f"'{text}' never matches a real date, so Hermes cannot compute its next run.",
                _example_for_never(parts),
            ) from None
        notes: list[str] = []
        if len(parts) >= 6:
            notes.append(
                f"The 6th field ('{parts[5]}') is read as seconds; Hermes checks jobs once a minute, so a "
                "standard 5-field expression is what you want."
            )
        return Schedule(text, "cron", text, _describe_cron(text, cron.expanded), expr=text,
                        warnings=tuple(notes))

    # 3. An ISO timestamp: once at that time.
    if "T" in text or _DATE_PREFIX.match(text):
        try:
            when = datetime.fromisoformat(text.replace("Z", "+00:00"))
        except ValueError as exc:
            raise _diagnose_timestamp(text, str(exc), now) from None
        if when.tzinfo is None:
            when = when.replace(tzinfo=now.tzinfo)
        if when < now - timedelta(seconds=ONESHOT_GRACE_SECONDS):
            raise _Invalid(
                f"'{text}' is in the past (Hermes refuses one-shot times more than {ONESHOT_GRACE_SECONDS} s ago).",
                f"'{_future_example(now)}' or a duration such as '30m'",
            )
        return Schedule(text, "once", f"once at {when.strftime('%Y-%m-%d %H:%M')}", _describe_at(when, now),
                        run_at=when)

    # 4. A bare duration: once, that long from now.
    minutes = _duration_minutes(text)
    if minutes is not None:
        try:
            run_at = now + timedelta(minutes=minutes)
        except OverflowError:
            raise _Invalid(f"'{text}' is too far in the future for Hermes to schedule.", "'30d'") from None
        return Schedule(text, "once", f"once in {text}", _describe_minutes(minutes, recurring=False),
                        minutes=minutes, run_at=run_at)

    raise _diagnose_other(text)


# --- explaining refusals ---------------------------------------------------------------------------------


def _diagnose_interval(text: str) -> _Invalid:
    rest = text[6:].strip()
    total = _sum_compound(rest)
    if total is not None:
        return _Invalid(
            f"'{text}': Hermes takes one number and one unit (m, h or d) after 'every', not '{rest}'.",
            f"'every {total}m'",
        )
    m = re.fullmatch(r"(\d+)\s*(s|sec|secs|second|seconds)", rest.lower())
    if m:
        return _Invalid(f"'{text}': Hermes has no seconds; the smallest unit is minutes (m).", "'every 1m'")
    m = re.fullmatch(r"(\d+)\s*(w|wk|wks|week|weeks)", rest.lower())
    if m:
        return _Invalid(f"'{text}': Hermes has no weeks unit; use days (d).", f"'every {int(m.group(1)) * 7}d'")
    m = re.fullmatch(r"(?:a|an|1)?\s*(minute|hour|day)", rest.lower())
    if m:
        return _Invalid(f"'{text}': put a number before the unit.", f"'every 1{m.group(1)[0]}'")
    return _Invalid(
        f"'{text}': after 'every' Hermes expects one number and a unit (m, h or d), not '{rest}'.", "'every 30m'"
    )


def _sum_compound(text: str) -> int | None:
    """Minutes in '1h30m' / '1h 30m', which Hermes refuses but users write."""
    pieces = re.findall(r"(\d+)\s*([a-z]+)", text.lower())
    if len(pieces) < 2 or re.sub(r"[\d\sa-z]", "", text.lower()):
        return None
    total = 0
    for number, unit in pieces:
        minutes = _duration_minutes(number + unit)
        if minutes is None:
            return None
        total += minutes
    return total


def _diagnose_cron(text: str, croniter_message: str) -> _Invalid:
    parts = text.split()
    if len(parts) > 7:
        return _Invalid(f"'{text}' has {len(parts)} fields; a cron expression has 5 "
                        "(minute hour day-of-month month day-of-week).", f"'{' '.join(parts[:5])}'")
    for i, part in enumerate(parts):
        problem = _field_problem(part, i)
        if problem:
            return _Invalid(f"'{text}': {problem}", _example_fixing(parts, i))
    return _Invalid(f"'{text}' is not a valid cron expression ({croniter_message}).", "'0 9 * * *'")


def _field_problem(part: str, index: int) -> str | None:
    """What is wrong with one cron field, in words, or None if it looks fine."""
    name = _FIELDS[index]
    low, high = _RANGES[index]
    if re.search(r"[A-Za-z]", part):
        return f"the {name} field '{part}' contains letters; Hermes accepts numbers only."
    if not _CRON_FIELD.match(part):
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


def _example_for_never(parts: Sequence[str]) -> str:
    fixed = list(parts[:5])
    fixed[2] = "28" if fixed[3] not in ("*",) else "1"
    return f"'{' '.join(fixed)}'"


def _replace_names(field_text: str, index: int) -> str | None:
    """Translate day/month names in a cron field to the numbers Hermes needs (None if not possible)."""
    names = _DAY_ABBR if index == 4 else _MONTH_ABBR if index == 3 else None
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


def _diagnose_other(text: str) -> _Invalid:
    lower = text.lower()
    if lower.startswith("@"):
        macro = lower.split()[0]
        if macro in _MACROS:
            return _Invalid(f"Hermes 0.19.0 does not accept cron macros like '{macro}'; write the 5 fields instead.",
                            f"'{_MACROS[macro]}'")
        return _Invalid(f"Hermes 0.19.0 does not accept '{macro}'.", _GENERIC_EXAMPLES)
    if lower == "every" or (lower.startswith("every") and _duration_minutes(lower[5:]) is not None):
        rest = text[5:].strip() or "30m"
        return _Invalid(f"'{text}': write a space after 'every'.", f"'every {rest}'")
    parts = text.split()
    if 3 <= len(parts) <= 7 and any(_CRON_FIELD.match(p) for p in parts):
        return _diagnose_cron_like(text, parts)
    m = re.fullmatch(r"(\d+)\s*(s|sec|secs|second|seconds)", lower)
    if m:
        return _Invalid(f"'{text}': Hermes has no seconds; the smallest unit is minutes (m).", "'1m' (once) or 'every 1m'")
    m = re.fullmatch(r"(\d+)\s*(w|wk|wks|week|weeks)", lower)
    if m:
        return _Invalid(f"'{text}': Hermes has no weeks unit; use days (d).", f"'{int(m.group(1)) * 7}d'")
    total = _sum_compound(text)
    if total is not None:
        return _Invalid(f"'{text}': Hermes takes one number and one unit (m, h or d).", f"'{total}m'")
    return _Invalid(f"'{text}' is not a schedule Hermes understands.", _GENERIC_EXAMPLES)


def _diagnose_cron_like(text: str, parts: list[str]) -> _Invalid:
    for i, part in enumerate(parts[:5]):
        if re.search(r"[A-Za-z]", part):
            if i in (3, 4):
                fixed = _replace_names(part, i)
                if fixed is not None:
                    suggestion = list(parts[:5])
                    suggestion[i] = fixed
                    what = "Day" if i == 4 else "Month"
                    hint = " (0 or 7 = Sunday, 1 = Monday ... 6 = Saturday)" if i == 4 else " (1 = January ... 12 = December)"
                    return _Invalid(f"{what} names like '{part}' are not accepted by Hermes; use numbers{hint}.",
                                    f"'{' '.join(suggestion)}'")
            if re.search(r"[LW#?]", part):
                return _Invalid(f"'{text}': the {_FIELDS[i]} field '{part}' uses Quartz syntax (L, W, #, ?), "
                                "which Hermes does not accept.", _example_fixing(parts, i))
            return _Invalid(f"'{text}': the {_FIELDS[i]} field '{part}' contains letters; Hermes accepts numbers only.",
                            _example_fixing(parts, i))
        if "?" in part or "#" in part:
            return _Invalid(f"'{text}': the {_FIELDS[i]} field '{part}' uses Quartz syntax (?, #), which Hermes "
                            "does not accept; use '*' or plain numbers.", _example_fixing(parts, i))
    if len(parts) < 5:
        return _Invalid(
            f"'{text}' has {len(parts)} fields; a cron expression needs 5 (minute hour day-of-month month day-of-week).",
            f"'{' '.join(list(parts) + ['*'] * (5 - len(parts)))}'",
        )
    return _Invalid(f"'{text}' is not a schedule Hermes understands.", _GENERIC_EXAMPLES)


def _diagnose_timestamp(text: str, reason: str, now: datetime) -> _Invalid:
    parts = text.split()
    if len(parts) >= 5:  # "0 9 * * TUE" lands here on the server because it contains a "T"
        return _diagnose_cron_like(text, parts)
    detail = reason.replace("Invalid isoformat string: ", "not an ISO date/time: ")
    return _Invalid(f"'{text}' is not a valid timestamp ({detail}).", f"'{_future_example(now)}'")


def _future_example(now: datetime) -> str:
    soon = (now + timedelta(days=1)).replace(hour=9, minute=0, second=0, microsecond=0)
    return soon.strftime("%Y-%m-%dT%H:%M")


# --- plain-language descriptions -------------------------------------------------------------------------


def _plural(n: int, unit: str) -> str:
    return f"{n} {unit}" if n == 1 else f"{n} {unit}s"


def _describe_minutes(minutes: int, *, recurring: bool) -> str:
    if minutes % 1440 == 0 and minutes:
        amount = _plural(minutes // 1440, "day")
    elif minutes % 60 == 0 and minutes:
        amount = _plural(minutes // 60, "hour")
    else:
        amount = _plural(minutes, "minute")
    if recurring:
        if minutes == 0:
            return "on every scheduler tick"
        return "every " + (amount[2:] if amount.startswith("1 ") else amount)
    return "once, right away" if minutes == 0 else f"once, {amount} after it is created"


def _describe_at(when: datetime, now: datetime) -> str:
    zone = when.strftime("%Z") or when.strftime("%z")
    return f"once at {when.strftime('%Y-%m-%d %H:%M')} {zone}".rstrip()


def _join(words: Sequence[str]) -> str:
    words = list(words)
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def _step_of(values: Sequence[int], low: int, high: int) -> int | None:
    """n if values are low, low+n, ... covering the whole range (i.e. '*/n'), else None."""
    if len(values) < 2 or values[0] != low:
        return None
    step = values[1] - values[0]
    if list(values) == list(range(low, high + 1, step)) and (high + 1 - low) % step == 0:
        return step
    return None


def _ranges(values: Sequence[int]) -> list[tuple[int, int]]:
    runs: list[tuple[int, int]] = []
    for v in values:
        if runs and v == runs[-1][1] + 1:
            runs[-1] = (runs[-1][0], v)
        else:
            runs.append((v, v))
    return runs


def _numbers(values: Sequence[int]) -> str:
    """'1-7', '1, 15 and 20-25': runs of three or more collapse to a range."""
    words = [f"{a}-{b}" if b - a >= 2 else (f"{a}" if a == b else f"{a}, {b}") for a, b in _ranges(values)]
    return _join(", ".join(words).split(", "))


def _days_text(dow: Sequence[int]) -> str:
    days = sorted({d % 7 for d in dow})
    if days == [1, 2, 3, 4, 5]:
        return "weekday"
    if days == [0, 6]:
        return "weekend day"
    ordered = sorted(days, key=lambda d: (d + 6) % 7)  # Monday first
    return _join([_DAY_NAMES[d] for d in ordered])


def _time_text(minutes: Sequence[int] | None, hours: Sequence[int] | None) -> tuple[str, bool]:
    """(words, is_point_in_time). ``None`` means any value ('*')."""
    if minutes is not None and hours is not None and len(minutes) * len(hours) <= 4:
        times = [f"{h:02d}:{m:02d}" for h in hours for m in minutes]
        return "at " + _join(times), True
    if minutes is None and hours is None:
        return "every minute", False
    if minutes is not None and hours is None:
        step = _step_of(minutes, 0, 59)
        if step:
            return f"every {_plural(step, 'minute')}" if step > 1 else "every minute", False
        if len(minutes) == 1:
            return ("every hour, on the hour" if minutes[0] == 0 else f"every hour at minute {minutes[0]}"), False
        return f"every hour at minutes {_join([str(m) for m in minutes])}", False
    if minutes is not None and hours is not None and len(minutes) == 1:
        step = _step_of(hours, 0, 23)
        at = "on the hour" if minutes[0] == 0 else f"at minute {minutes[0]}"
        if step:
            return f"every {_plural(step, 'hour')} {at}", False
        runs = _ranges(hours)
        if len(runs) == 1:
            return f"every hour from {runs[0][0]:02d}:{minutes[0]:02d} to {runs[0][1]:02d}:{minutes[0]:02d}", False
        return f"{at} past hours {_join([str(h) for h in hours])}", False
    minute_words = "every minute" if minutes is None else (
        f"every {_plural(s, 'minute')}" if (s := _step_of(minutes, 0, 59)) else f"at minutes {_join([str(m) for m in minutes])}"
    )
    if hours is None:
        return minute_words, False
    runs = _ranges(hours)
    if len(runs) == 1:
        return f"{minute_words} from {runs[0][0]:02d}:00 to {runs[0][1]:02d}:59", False
    return f"{minute_words} during hours {_join([str(h) for h in hours])}", False


def _describe_cron(expr: str, expanded: Sequence[Sequence[object]]) -> str:
    def values(i: int) -> list[int] | None:
        vals = list(expanded[i])
        return None if vals == ["*"] else [int(v) for v in vals]  # type: ignore[call-overload]

    minutes, hours, dom, months, dow = (values(i) for i in range(5))
    time_words, point = _time_text(minutes, hours)

    day_parts: list[str] = []
    days_word = f"day{'s' if len(dom or ()) > 1 else ''} {_numbers(dom or ())}"
    if dom is not None and dow is not None:  # croniter (like Vixie cron) matches either
        day_parts.append(f"on {days_word} of the month or on {_days_text(dow)}s")
    elif dom is not None:
        day_parts.append(f"on {days_word} of the month" if months is None else f"on {days_word}")
    elif dow is not None:
        day_parts.append(f"on {_days_text(dow)}s")
    if months is not None:
        day_parts.append("in " + _join([_MONTH_NAMES[m - 1] for m in months]))

    if not day_parts:
        text = f"every day {time_words}" if point else time_words
    elif point and dom is None and dow is not None and months is None:
        text = f"every {_days_text(dow)} {time_words}"
    elif point and dom is not None and dow is None and months is None:
        text = f"on {days_word} of every month {time_words}"
    elif point and dom is not None and len(dom) == 1 and dow is None and months is not None and len(months) == 1:
        text = f"every year on {dom[0]} {_MONTH_NAMES[months[0] - 1]} {time_words}"
    else:
        text = f"{time_words} {' '.join(day_parts)}"
    if len(expanded) >= 6 and list(expanded[5]) != ["*"]:
        text += f" (second {_join([str(s) for s in expanded[5]])})"
    if len(expanded) >= 7 and list(expanded[6]) != ["*"]:
        text += f", in {_join([str(y) for y in expanded[6]])}"
    return text


def describe(schedule: str | Schedule, *, tz: tzinfo | None = None) -> str:
    """Plain-language meaning of a schedule ("every day at 09:00", "every 5 minutes", "once at ...").

    For a schedule Hermes would refuse, the refusal message (so a table never shows an exception).
    """
    if isinstance(schedule, Schedule):
        return schedule.description
    try:
        return parse(schedule, tz=tz).description
    except HermesValidationError as exc:
        return f"invalid: {exc}"


def next_runs(schedule: str | Schedule, n: int = 3, now: datetime | None = None,
              tz: tzinfo | None = None) -> list[datetime]:
    """The next ``n`` times the scheduler would start the job, if it were created ``now``.

    Intervals count from creation (Hermes' first run is ``now + interval``); a one-shot has one time.
    Raises HermesValidationError for a schedule Hermes would refuse.
    """
    start = _now(now, tz)
    parsed = schedule if isinstance(schedule, Schedule) else parse(schedule, now=start)
    if parsed.kind == "once":
        run_at = parsed.run_at if parsed.minutes is None else start + timedelta(minutes=parsed.minutes or 0)
        assert run_at is not None
        return [run_at][:n]
    if parsed.kind == "interval":
        step = timedelta(minutes=parsed.minutes or 0)
        if not step:
            return [start][:n]
        out = []
        for k in range(1, n + 1):
            try:
                out.append(start + k * step)
            except OverflowError:
                break
        return out
    assert parsed.expr is not None
    it = croniter(parsed.expr, start)
    out = []
    for _ in range(n):
        try:
            out.append(it.get_next(datetime))
        except Exception:  # a year field that runs out
            break
    return out


def check(schedule: object, *, n: int = 3, now: datetime | None = None, tz: tzinfo | None = None) -> ScheduleCheck:
    """Validate without raising: ok + description + next ``n`` runs, or the message and an example."""
    start = _now(now, tz)
    text = schedule.strip() if isinstance(schedule, str) else str(schedule)
    try:
        parsed = _parse(schedule, start)
    except _Invalid as exc:
        return ScheduleCheck(False, text, message=exc.message, example=exc.example)
    return ScheduleCheck(True, parsed.text, kind=parsed.kind, description=parsed.description,
                         next_runs=tuple(next_runs(parsed, n, now=start)), warnings=parsed.warnings)


# --- presets: build cron expressions Hermes accepts -------------------------------------------------------


def _hm(at: str | time | tuple[int, int]) -> tuple[int, int]:
    if isinstance(at, time):
        return at.hour, at.minute
    if isinstance(at, tuple):
        hour, minute = at
    else:
        m = re.fullmatch(r"\s*(\d{1,2}):(\d{2})\s*", str(at))
        if not m:
            raise HermesUsageError(f"a time must look like 'HH:MM' (e.g. '09:00'), not {at!r}")
        hour, minute = int(m.group(1)), int(m.group(2))
    if not (0 <= hour <= 23 and 0 <= minute <= 59):
        raise HermesUsageError(f"{hour:02d}:{minute:02d} is not a time of day (00:00 to 23:59)")
    return hour, minute


def every_n_minutes(n: int) -> str:
    """Every ``n`` minutes: ``*/n * * * *`` when n divides 60 (runs at :00, :n, ...), else ``every {n}m``.

    Why the switch: ``*/7`` restarts at every full hour (…:49, :56, :00), which is rarely meant; an
    interval keeps an exact spacing instead.
    """
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        raise HermesUsageError(f"every_n_minutes needs a whole number of minutes of at least 1, not {n!r}")
    if n == 1:
        return "* * * * *"
    return f"*/{n} * * * *" if n < 60 and 60 % n == 0 else f"every {n}m"


def hourly(minute: int = 0) -> str:
    """Every hour at ``minute`` past."""
    if not isinstance(minute, int) or not 0 <= minute <= 59:
        raise HermesUsageError(f"minute must be 0-59, not {minute!r}")
    return f"{minute} * * * *"


def daily(at: str | time | tuple[int, int] = "09:00") -> str:
    """Every day at ``at`` ("HH:MM", in the Hermes server's time zone)."""
    hour, minute = _hm(at)
    return f"{minute} {hour} * * *"


def weekdays(at: str | time | tuple[int, int] = "09:00") -> str:
    """Monday to Friday at ``at``."""
    hour, minute = _hm(at)
    return f"{minute} {hour} * * 1-5"


def weekly(day: int | str = "mon", at: str | time | tuple[int, int] = "09:00") -> str:
    """Once a week on ``day`` (0/7 = Sunday ... 6 = Saturday, or a name: written as a number for Hermes)."""
    if isinstance(day, str):
        number = _DAY_ABBR.get(day.strip()[:3].lower())
        if number is None:
            raise HermesUsageError(f"unknown day {day!r}; use a day name such as 'mon' or a number 0-6")
    elif isinstance(day, int) and 0 <= day <= 7:
        number = day % 7
    else:
        raise HermesUsageError(f"day must be 0-6 (0 = Sunday) or a day name, not {day!r}")
    hour, minute = _hm(at)
    return f"{minute} {hour} * * {number}"


def monthly(day: int = 1, at: str | time | tuple[int, int] = "09:00") -> str:
    """Once a month on day ``day`` (1-28 runs every month; 29-31 skip shorter months)."""
    if not isinstance(day, int) or not 1 <= day <= 31:
        raise HermesUsageError(f"day of the month must be 1-31, not {day!r}")
    hour, minute = _hm(at)
    return f"{minute} {hour} {day} * *"


@dataclass(frozen=True)
class _Preset:
    key: str
    label: str
    fields: tuple[str, ...] = field(default=())


#: The presets offered by the Jobs widget's form (the front end builds the same expressions).
PRESETS: tuple[_Preset, ...] = (
    _Preset("every_n_minutes", "Every N minutes", ("n",)),
    _Preset("hourly", "Hourly", ("minute",)),
    _Preset("daily", "Daily at HH:MM", ("at",)),
    _Preset("weekdays", "Weekdays at HH:MM", ("at",)),
    _Preset("weekly", "Weekly", ("day", "at")),
    _Preset("monthly", "Monthly", ("day", "at")),
)


def describe_stored(schedule: object) -> str:
    """Plain-language meaning of a schedule as the server stores it (a job's ``schedule`` object).

    Accepts the raw mapping (``{"kind", "expr" | "minutes" | "run_at", "display"}``) or any object with those
    attributes (``client.jobs.JobSchedule``). Unknown shapes fall back to their display text.
    """
    def get(key: str) -> object:
        if isinstance(schedule, dict):
            return schedule.get(key)
        return getattr(schedule, key, None)

    kind, display = get("kind"), get("display")
    try:
        if kind == "cron" and isinstance(get("expr"), str):
            expr = str(get("expr"))
            return _describe_cron(expr, croniter(expr).expanded)
        minutes = get("minutes")
        if kind == "interval" and isinstance(minutes, int):
            return _describe_minutes(minutes, recurring=True)
        if kind == "once":
            run_at = get("run_at")
            when = datetime.fromisoformat(run_at) if isinstance(run_at, str) else run_at
            if isinstance(when, datetime):
                return _describe_at(when, when)
    except Exception:  # a hand-edited or future shape: show what the server shows
        pass
    return str(display or "")
