"""Cron-job schedules exactly as Hermes 0.19.0 accepts them, checked before anything is sent.

Why: the jobs API answers a bad schedule with HTTP 500 and a terse text, and rejects things users expect to
work (``@daily``, ``MON``). This module repeats the server's decision procedure step by step
(``cron/jobs.py`` ``parse_schedule`` plus the checks ``create_job`` makes when it computes the first run), so
a schedule that passes here is accepted by the server and one that fails here would have been refused. Failing
schedules get a message that says what is wrong and an example that works.

The grammar (docs/protocol/api-server.md §7, checked against the real function in
``tests/test_schedules.py``):

- ``every <N><unit>``: a recurring interval; one number and one unit (``m``, ``h``, ``d`` and their long
  forms).
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
from dataclasses import dataclass
from datetime import datetime, timedelta, tzinfo
from typing import Literal

from croniter import croniter

from ..errors import HermesValidationError
from .presets import PRESETS, daily, every_n_minutes, hourly, monthly, weekdays, weekly
from .wording import DAY_ABBR, MONTH_ABBR, describe_at, describe_cron, describe_minutes, describe_stored

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
_MACROS = {
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
    "@monthly": "0 0 1 * *",
    "@weekly": "0 0 * * 0",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@hourly": "0 * * * *",
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
            "ok": self.ok,
            "text": self.text,
            "message": self.message,
            "example": self.example,
            "kind": self.kind,
            "description": self.description,
            "next_runs": [t.isoformat() for t in self.next_runs],
            "warnings": list(self.warnings),
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
            status=None,
            endpoint="schedule check",
            code="invalid_schedule",
            param="schedule",
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
            raise _Invalid(
                f"'{text}' is too long an interval for Hermes to compute a next run.", "'every 30d'"
            ) from None
        warnings: tuple[str, ...] = ()
        if minutes == 0:
            warnings = (
                "'every 0m' is accepted, but the job then runs on every scheduler tick (once a minute).",
            )
        return Schedule(
            text,
            "interval",
            f"every {minutes}m",
            describe_minutes(minutes, recurring=True),
            minutes=minutes,
            warnings=warnings,
        )

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
        return Schedule(
            text, "cron", text, describe_cron(text, cron.expanded), expr=text, warnings=tuple(notes)
        )

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
                f"'{text}' is in the past (Hermes refuses one-shot times more than {ONESHOT_GRACE_SECONDS} s "
                "ago).",
                f"'{_future_example(now)}' or a duration such as '30m'",
            )
        return Schedule(
            text, "once", f"once at {when.strftime('%Y-%m-%d %H:%M')}", describe_at(when, now), run_at=when
        )

    # 4. A bare duration: once, that long from now.
    minutes = _duration_minutes(text)
    if minutes is not None:
        try:
            run_at = now + timedelta(minutes=minutes)
        except OverflowError:
            raise _Invalid(f"'{text}' is too far in the future for Hermes to schedule.", "'30d'") from None
        return Schedule(
            text,
            "once",
            f"once in {text}",
            describe_minutes(minutes, recurring=False),
            minutes=minutes,
            run_at=run_at,
        )

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
        return _Invalid(
            f"'{text}': Hermes has no weeks unit; use days (d).", f"'every {int(m.group(1)) * 7}d'"
        )
    m = re.fullmatch(r"(?:a|an|1)?\s*(minute|hour|day)", rest.lower())
    if m:
        return _Invalid(f"'{text}': put a number before the unit.", f"'every 1{m.group(1)[0]}'")
    return _Invalid(
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
        minutes = _duration_minutes(number + unit)
        if minutes is None:
            return None
        total += minutes
    return total


def _diagnose_cron(text: str, croniter_message: str) -> _Invalid:
    parts = text.split()
    if len(parts) > 7:
        return _Invalid(
            f"'{text}' has {len(parts)} fields; a cron expression has 5 "
            "(minute hour day-of-month month day-of-week).",
            f"'{' '.join(parts[:5])}'",
        )
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


def _diagnose_other(text: str) -> _Invalid:
    lower = text.lower()
    if lower.startswith("@"):
        macro = lower.split()[0]
        if macro in _MACROS:
            return _Invalid(
                f"Hermes 0.19.0 does not accept cron macros like '{macro}'; write the 5 fields instead.",
                f"'{_MACROS[macro]}'",
            )
        return _Invalid(f"Hermes 0.19.0 does not accept '{macro}'.", _GENERIC_EXAMPLES)
    if lower == "every" or (lower.startswith("every") and _duration_minutes(lower[5:]) is not None):
        rest = text[5:].strip() or "30m"
        return _Invalid(f"'{text}': write a space after 'every'.", f"'every {rest}'")
    parts = text.split()
    if 3 <= len(parts) <= 7 and any(_CRON_FIELD.match(p) for p in parts):
        return _diagnose_cron_like(text, parts)
    m = re.fullmatch(r"(\d+)\s*(s|sec|secs|second|seconds)", lower)
    if m:
        return _Invalid(
            f"'{text}': Hermes has no seconds; the smallest unit is minutes (m).", "'1m' (once) or 'every 1m'"
        )
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
                    hint = (
                        " (0 or 7 = Sunday, 1 = Monday ... 6 = Saturday)"
                        if i == 4
                        else " (1 = January ... 12 = December)"
                    )
                    return _Invalid(
                        f"{what} names like '{part}' are not accepted by Hermes; use numbers{hint}.",
                        f"'{' '.join(suggestion)}'",
                    )
            if re.search(r"[LW#?]", part):
                return _Invalid(
                    f"'{text}': the {_FIELDS[i]} field '{part}' uses Quartz syntax (L, W, #, ?), "
                    "which Hermes does not accept.",
                    _example_fixing(parts, i),
                )
            return _Invalid(
                f"'{text}': the {_FIELDS[i]} field '{part}' contains letters; Hermes accepts numbers only.",
                _example_fixing(parts, i),
            )
        if "?" in part or "#" in part:
            return _Invalid(
                f"'{text}': the {_FIELDS[i]} field '{part}' uses Quartz syntax (?, #), which Hermes "
                "does not accept; use '*' or plain numbers.",
                _example_fixing(parts, i),
            )
    if len(parts) < 5:
        return _Invalid(
            f"'{text}' has {len(parts)} fields; a cron expression needs 5 (minute hour day-of-month month "
            "day-of-week).",
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


# --- plain-language descriptions (the wording itself is in .wording) ------------------------------------


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


def next_runs(
    schedule: str | Schedule, n: int = 3, now: datetime | None = None, tz: tzinfo | None = None
) -> list[datetime]:
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


def check(
    schedule: object, *, n: int = 3, now: datetime | None = None, tz: tzinfo | None = None
) -> ScheduleCheck:
    """Validate without raising: ok + description + next ``n`` runs, or the message and an example."""
    start = _now(now, tz)
    text = schedule.strip() if isinstance(schedule, str) else str(schedule)
    try:
        parsed = _parse(schedule, start)
    except _Invalid as exc:
        return ScheduleCheck(False, text, message=exc.message, example=exc.example)
    return ScheduleCheck(
        True,
        parsed.text,
        kind=parsed.kind,
        description=parsed.description,
        next_runs=tuple(next_runs(parsed, n, now=start)),
        warnings=parsed.warnings,
    )
