"""Schedules in plain language ("every weekday at 09:00", "every 30 minutes", "once at ..."): pure text.

:mod:`.schedules` parses a schedule the way Hermes does and names what it means with these functions;
:func:`describe_stored` does the same for a schedule as the server stores it on a job.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from croniter import croniter

__all__ = [
    "DAY_ABBR",
    "DAY_NAMES",
    "MONTH_ABBR",
    "MONTH_NAMES",
    "describe_at",
    "describe_cron",
    "describe_minutes",
    "describe_stored",
]

DAY_NAMES = ("Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday")
MONTH_NAMES = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)
DAY_ABBR = {name[:3].lower(): i for i, name in enumerate(DAY_NAMES)}
MONTH_ABBR = {name[:3].lower(): i + 1 for i, name in enumerate(MONTH_NAMES)}


def _plural(n: int, unit: str) -> str:
    return f"{n} {unit}" if n == 1 else f"{n} {unit}s"


def describe_minutes(minutes: int, *, recurring: bool) -> str:
    """An interval (``recurring``) or a delay before a one-shot run, in words."""
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


def describe_at(when: datetime, now: datetime) -> str:
    """A one-shot time with its zone."""
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
    return _join([DAY_NAMES[d] for d in ordered])


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
            return (
                "every hour, on the hour" if minutes[0] == 0 else f"every hour at minute {minutes[0]}"
            ), False
        return f"every hour at minutes {_join([str(m) for m in minutes])}", False
    if minutes is not None and hours is not None and len(minutes) == 1:
        step = _step_of(hours, 0, 23)
        at = "on the hour" if minutes[0] == 0 else f"at minute {minutes[0]}"
        if step:
            return f"every {_plural(step, 'hour')} {at}", False
        runs = _ranges(hours)
        if len(runs) == 1:
            return (
                f"every hour from {runs[0][0]:02d}:{minutes[0]:02d} to {runs[0][1]:02d}:{minutes[0]:02d}",
                False,
            )
        return f"{at} past hours {_join([str(h) for h in hours])}", False
    minute_words = (
        "every minute"
        if minutes is None
        else (
            f"every {_plural(s, 'minute')}"
            if (s := _step_of(minutes, 0, 59))
            else f"at minutes {_join([str(m) for m in minutes])}"
        )
    )
    if hours is None:
        return minute_words, False
    runs = _ranges(hours)
    if len(runs) == 1:
        return f"{minute_words} from {runs[0][0]:02d}:00 to {runs[0][1]:02d}:59", False
    return f"{minute_words} during hours {_join([str(h) for h in hours])}", False


def describe_cron(expr: str, expanded: Sequence[Sequence[object]]) -> str:
    """A cron expression in words, from croniter's ``expanded`` fields (a day-of-month and a weekday match
    either)."""

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
        day_parts.append("in " + _join([MONTH_NAMES[m - 1] for m in months]))

    if not day_parts:
        text = f"every day {time_words}" if point else time_words
    elif point and dom is None and dow is not None and months is None:
        text = f"every {_days_text(dow)} {time_words}"
    elif point and dom is not None and dow is None and months is None:
        text = f"on {days_word} of every month {time_words}"
    elif (
        point
        and dom is not None
        and len(dom) == 1
        and dow is None
        and months is not None
        and len(months) == 1
    ):
        text = f"every year on {dom[0]} {MONTH_NAMES[months[0] - 1]} {time_words}"
    else:
        text = f"{time_words} {' '.join(day_parts)}"
    if len(expanded) >= 6 and list(expanded[5]) != ["*"]:
        text += f" (second {_join([str(s) for s in expanded[5]])})"
    if len(expanded) >= 7 and list(expanded[6]) != ["*"]:
        text += f", in {_join([str(y) for y in expanded[6]])}"
    return text


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
            return describe_cron(expr, croniter(expr).expanded)
        minutes = get("minutes")
        if kind == "interval" and isinstance(minutes, int):
            return describe_minutes(minutes, recurring=True)
        if kind == "once":
            run_at = get("run_at")
            when = datetime.fromisoformat(run_at) if isinstance(run_at, str) else run_at
            if isinstance(when, datetime):
                return describe_at(when, when)
    except Exception:  # a hand-edited or future shape: show what the server shows
        pass
    return str(display or "")
