"""Cron-job schedules exactly as Hermes 0.19.0 accepts them, checked before anything is sent.

Why: the jobs API answers a bad schedule with HTTP 500 and a terse text, and rejects things users expect to
work (``@daily``, ``MON``). This module repeats the server's decision procedure step by step
(``cron/jobs.py`` ``parse_schedule`` plus the checks ``create_job`` makes when it computes the first run), so
a schedule that passes here is accepted by the server and one that fails here would have been refused. Failing
schedules get a message that says what is wrong and an example that works.

The grammar (docs/protocol/api-server.md §7, checked against the real function in
``tests/cron/test_schedules.py``):

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

from dataclasses import dataclass
from datetime import datetime, timedelta, tzinfo
from typing import Literal

from croniter import croniter

from ..errors import HermesValidationError
from .presets import PRESETS, daily, every_n_minutes, hourly, monthly, weekdays, weekly
from .refusals import (
    CRON_FIELD,
    DATE_PREFIX,
    GENERIC_EXAMPLES,
    Invalid,
    diagnose_cron,
    diagnose_interval,
    diagnose_other,
    diagnose_timestamp,
    duration_minutes,
    example_for_never,
    future_example,
)
from .wording import describe_at, describe_cron, describe_minutes, describe_stored

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


def parse(schedule: object, *, now: datetime | None = None, tz: tzinfo | None = None) -> Schedule:
    """Check a schedule the way Hermes 0.19.0 does and return what it means.

    Raises :class:`~hermes_notebook.errors.HermesValidationError` (nothing was sent: ``status`` is ``None``)
    whose message says what is wrong and gives an example that works.
    """
    try:
        return _parse(schedule, _now(now, tz))
    except Invalid as exc:
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
        raise Invalid(f"A schedule must be a string, not {type(schedule).__name__}.", "'every 30m'")
    text = schedule.strip()
    if not text:
        raise Invalid("The schedule is empty.", GENERIC_EXAMPLES)
    lower = text.lower()

    # 1. "every <duration>": a recurring interval.
    if lower.startswith("every "):
        minutes = duration_minutes(text[6:].strip())
        if minutes is None:
            raise diagnose_interval(text)
        try:
            _ = now + timedelta(minutes=minutes)
        except OverflowError:
            raise Invalid(
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
    if len(parts) >= 5 and all(CRON_FIELD.match(p) for p in parts[:5]):
        try:
            cron = croniter(text)
        except Exception as exc:
            raise diagnose_cron(text, str(exc)) from None
        try:
            croniter(text, now).get_next(datetime)
        except Exception:
            raise Invalid(
                f"'{text}' never matches a real date, so Hermes cannot compute its next run.",
                example_for_never(parts),
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
    if "T" in text or DATE_PREFIX.match(text):
        try:
            when = datetime.fromisoformat(text.replace("Z", "+00:00"))
        except ValueError as exc:
            raise diagnose_timestamp(text, str(exc), now) from None
        if when.tzinfo is None:
            when = when.replace(tzinfo=now.tzinfo)
        if when < now - timedelta(seconds=ONESHOT_GRACE_SECONDS):
            raise Invalid(
                f"'{text}' is in the past (Hermes refuses one-shot times more than {ONESHOT_GRACE_SECONDS} s "
                "ago).",
                f"'{future_example(now)}' or a duration such as '30m'",
            )
        return Schedule(
            text, "once", f"once at {when.strftime('%Y-%m-%d %H:%M')}", describe_at(when, now), run_at=when
        )

    # 4. A bare duration: once, that long from now.
    minutes = duration_minutes(text)
    if minutes is not None:
        try:
            run_at = now + timedelta(minutes=minutes)
        except OverflowError:
            raise Invalid(f"'{text}' is too far in the future for Hermes to schedule.", "'30d'") from None
        return Schedule(
            text,
            "once",
            f"once in {text}",
            describe_minutes(minutes, recurring=False),
            minutes=minutes,
            run_at=run_at,
        )

    raise diagnose_other(text)


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
    except Invalid as exc:
        return ScheduleCheck(False, text, message=exc.message, example=exc.example)
    return ScheduleCheck(
        True,
        parsed.text,
        kind=parsed.kind,
        description=parsed.description,
        next_runs=tuple(next_runs(parsed, n, now=start)),
        warnings=parsed.warnings,
    )
