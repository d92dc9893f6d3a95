"""Presets for cron jobs' schedules: ``daily("09:00")`` and friends build expressions Hermes accepts.

``PRESETS`` lists them for the Jobs widget's form (the front end builds the same expressions).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import time

from ..errors import HermesUsageError
from .wording import DAY_ABBR

__all__ = ["PRESETS", "daily", "every_n_minutes", "hourly", "monthly", "weekdays", "weekly"]


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
        number = DAY_ABBR.get(day.strip()[:3].lower())
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
