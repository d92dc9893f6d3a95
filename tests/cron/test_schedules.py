"""Schedule validation: parity with Hermes 0.19.0's own parser, messages, descriptions, next runs, presets.

The parity test imports ``cron.jobs`` from the Hermes virtualenv in a subprocess (our venv does not need
hermes-agent) and asks the real ``create_job`` to accept or refuse every schedule of a corpus, in a
throwaway ``HERMES_HOME``; our :func:`hermes_notebook.schedules.check` must agree on every one.
"""

from __future__ import annotations

import json
import os
import subprocess
from datetime import datetime, time, timedelta, timezone
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from hermes_notebook import schedules
from hermes_notebook.errors import HermesUsageError, HermesValidationError
from tests.helpers import REPO

HERMES_PYTHON = Path(os.environ.get("HERMES_PYTHON", REPO / ".venv-hermes" / "bin" / "python"))
ZONE = "Asia/Kolkata"  # not UTC, so naive timestamps and cron times must really use the Hermes zone

CORPUS = [
    # cron
    "0 9 * * *",
    "*/5 * * * *",
    "0 9 * * 1-5",
    "0 0 * * 7",
    "0 0 * * 5-1",
    "5/15 * * * *",
    "0 0 1-31/2 * *",
    "0 0 * * 1,3,5",
    "  0 9 * * *  ",
    "0  9 * * *",
    "0 0 29 2 *",
    "* * * * * *",
    "0 0 * * * 30",
    "* * * * * * *",
    "0 9 * * * * 2030",
    "30 17 * * 5",
    "0 0 1 * *",
    "0 9 * * MON",
    "0 9 * * TUE",
    "0 9 * * mon-fri",
    "0 0 1 JAN *",
    "0 9 * *",
    "61 * * * *",
    "0 24 * * *",
    "0 0 0 * *",
    "0 0 * 13 *",
    "0 0 * * 8",
    "1-70 * * * *",
    "*/0 * * * *",
    "-5 * * * *",
    ", * * * *",
    "0 9 * * * MON",
    "* * * * * ?",
    "0 0 L * *",
    "0 9 ? * *",
    "0 0 * * 0#2",
    "0 0 31 2 *",
    "0 9 31 4 *",
    "0 9 * * * 2030",
    "* * * * * * 1970",
    "* * * * * * * *",
    # macros and words
    "@daily",
    "@hourly",
    "@weekly",
    "@reboot",
    "tomorrow",
    "",
    "   ",
    "daily",
    "hourly",
    # intervals
    "every 5m",
    "every 5 m",
    "EVERY 5M",
    "every 2 hours",
    "every 1d",
    "every 90 minutes",
    "every 1 minute",
    "every 1h30m",
    "every 1w",
    "every",
    "every5m",
    "every 0m",
    "every 30s",
    "every -5m",
    "every 1.5h",
    "every 100000d",
    "every 99999999d",
    # one-shot durations
    "30m",
    "2h",
    "1d",
    "0m",
    "30 m",
    "30s",
    "1w",
    "1h30m",
    "99999999d",
    # timestamps
    "2030-01-01",
    "2030-01-01 10:00",
    "2030-01-01T10:00:00Z",
    "2030-01-01T10:00:00+05:30",
    "2020-01-01T00:00",
    "2030-13-01T10:00",
    "2030-02-30",
    "Tuesday",
    "T",
    "2030-01-01Tnonsense",
]

_PROBE = r"""
import json, sys
from cron.jobs import create_job, remove_job
out = {}
for s in json.load(sys.stdin):
    try:
        job = create_job(prompt="parity probe", schedule=s, name="parity")
        out[s] = {"ok": True, "kind": job["schedule"]["kind"], "display": job["schedule"]["display"],
                  "next_run_at": job["next_run_at"]}
        remove_job(job["id"])
    except Exception as exc:
        out[s] = {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
json.dump(out, sys.stdout)
"""


def _hermes_verdicts(corpus: list[str], home: Path) -> dict[str, dict[str, object]]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HERMES_", "API_SERVER_"))}
    env.update(HERMES_HOME=str(home), TZ=ZONE, PYTHONWARNINGS="ignore", HERMES_DISABLE_LAZY_INSTALLS="1")
    # Without this a bare home lets Hermes pip-install Bedrock's SDK (boto3) into its own venv on import:
    # a test must not change the project's venvs (tests/test_wheel.py checks) or reach the registry.
    (home / "config.yaml").write_text("security:\n  allow_lazy_installs: false\n")
    proc = subprocess.run(
        [str(HERMES_PYTHON), "-c", _PROBE],
        input=json.dumps(corpus),
        capture_output=True,
        text=True,
        env=env,
        cwd=home,
        timeout=120,
        check=True,
    )
    return json.loads(proc.stdout)


@pytest.fixture(scope="module")
def hermes_verdicts(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[list[str], dict[str, dict[str, object]]]:
    if not HERMES_PYTHON.exists():
        pytest.skip(f"no Hermes virtualenv at {HERMES_PYTHON}")
    now = datetime.now(ZoneInfo(ZONE))
    relative = [
        (now - timedelta(minutes=10)).strftime("%Y-%m-%dT%H:%M:%S"),  # naive, past the 120 s grace
        (now - timedelta(seconds=30)).strftime("%Y-%m-%dT%H:%M:%S"),  # naive, inside the grace
        (now + timedelta(hours=3)).strftime("%Y-%m-%dT%H:%M"),
    ]
    corpus = CORPUS + relative
    return corpus, _hermes_verdicts(corpus, tmp_path_factory.mktemp("hermes-home"))


def test_accepts_and_rejects_exactly_what_hermes_does(hermes_verdicts) -> None:
    """Every schedule of the corpus is accepted by us if and only if the real Hermes create_job accepts it."""
    corpus, verdicts = hermes_verdicts
    mismatches = []
    for text in corpus:
        ours = schedules.check(text, tz=ZoneInfo(ZONE))
        if ours.ok != verdicts[text]["ok"]:
            mismatches.append((text, ours, verdicts[text]))
    assert not mismatches, mismatches
    assert sum(1 for v in verdicts.values() if v["ok"]) >= 25
    assert sum(1 for v in verdicts.values() if not v["ok"]) >= 35


def test_kind_and_display_match_hermes(hermes_verdicts) -> None:
    """For accepted schedules our kind and display string are the ones Hermes stores."""
    corpus, verdicts = hermes_verdicts
    for text in corpus:
        if not verdicts[text]["ok"]:
            continue
        parsed = schedules.parse(text, tz=ZoneInfo(ZONE))
        assert (parsed.kind, parsed.display) == (verdicts[text]["kind"], verdicts[text]["display"]), text


@pytest.mark.parametrize("text", ["0 9 * * *", "0 9 * * 1-5", "30 17 * * 5", "0 0 1 * *", "0 0 29 2 *"])
def test_first_cron_run_matches_hermes_next_run_at(hermes_verdicts, text: str) -> None:
    """The first of our next runs is the next_run_at Hermes computed, in the Hermes time zone."""
    _corpus, verdicts = hermes_verdicts
    ours = schedules.next_runs(text, 1, tz=ZoneInfo(ZONE))[0]
    assert ours == datetime.fromisoformat(str(verdicts[text]["next_run_at"]))


@pytest.mark.parametrize(
    ("text", "says", "example"),
    [
        ("@daily", "macros", "'0 0 * * *'"),
        ("0 9 * * MON", "Day names", "'0 9 * * 1'"),
        ("0 9 * * TUE", "Day names", "'0 9 * * 2'"),
        ("0 9 * * mon-fri", "Day names", "'0 9 * * 1-5'"),
        ("0 0 1 JAN *", "Month names", "'0 0 1 1 *'"),
        ("every 1h30m", "one number and one unit", "'every 90m'"),
        ("every 1w", "no weeks", "'every 7d'"),
        ("every5m", "space after 'every'", "'every 5m'"),
        ("30s", "no seconds", "'1m'"),
        ("0 9 * *", "has 4 fields", "'0 9 * * *'"),
        ("0 24 * * *", "hour value 24 is outside 0-23", "'0 9 * * *'"),
        ("0 0 31 2 *", "never matches a real date", "'0 0 28 2 *'"),
        ("*/0 * * * *", "step of 1 or more", "'0 * * * *'"),
        ("0 0 L * *", "Quartz", "'0 0 1 * *'"),
        ("2020-01-01T00:00", "in the past", "'30m'"),
        ("2030-13-01T10:00", "not a valid timestamp", "T09:00'"),
        ("", "empty", "'every 30m'"),
        ("tomorrow", "not a schedule Hermes understands", "'every 30m'"),
    ],
)
def test_refusals_say_what_is_wrong_and_give_a_working_example(text: str, says: str, example: str) -> None:
    """A refused schedule's message names the problem, and its example is itself accepted."""
    result = schedules.check(text)
    assert not result.ok
    assert says in result.message
    assert example in result.example
    working = result.example.split("'")[1]
    assert schedules.check(working).ok, working


def test_parse_raises_validation_error_marked_as_not_sent() -> None:
    """parse() raises HermesValidationError with status None (refused before any request) and the example."""
    with pytest.raises(HermesValidationError) as info:
        schedules.parse("@daily")
    assert info.value.status is None
    assert info.value.param == "schedule"
    assert "Example that works: '0 0 * * *'" in str(info.value)
    assert isinstance(info.value, ValueError)


def test_validate_returns_the_stripped_text_to_send() -> None:
    """validate() gives back exactly what Hermes will store (surrounding whitespace removed)."""
    assert schedules.validate("  every 5m ") == "every 5m"
    with pytest.raises(HermesValidationError):
        schedules.validate(42)


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("0 9 * * *", "every day at 09:00"),
        ("*/5 * * * *", "every 5 minutes"),
        ("* * * * *", "every minute"),
        ("0 * * * *", "every hour, on the hour"),
        ("15 * * * *", "every hour at minute 15"),
        ("0 */2 * * *", "every 2 hours on the hour"),
        ("0 9 * * 1-5", "every weekday at 09:00"),
        ("0 10 * * 0,6", "every weekend day at 10:00"),
        ("30 8 * * 1,3,5", "every Monday, Wednesday and Friday at 08:30"),
        ("0 9 1 * *", "on day 1 of every month at 09:00"),
        ("0 0 1 1 *", "every year on 1 January at 00:00"),
        ("0 9,17 * * *", "every day at 09:00 and 17:00"),
        ("*/10 9-17 * * 1-5", "every 10 minutes from 09:00 to 17:59 on weekdays"),
        ("every 5m", "every 5 minutes"),
        ("every 2h", "every 2 hours"),
        ("every 1d", "every day"),
        ("every 90m", "every 90 minutes"),
        ("30m", "once, 30 minutes after it is created"),
        ("2030-01-01T10:00:00Z", "once at 2030-01-01 10:00 UTC"),
    ],
)
def test_describe_in_plain_language(text: str, words: str) -> None:
    """describe() turns the common shapes into the sentence a user would say."""
    assert schedules.describe(text, tz=timezone.utc) == words


def test_describe_never_raises() -> None:
    """A schedule Hermes refuses is described by its refusal, so tables never show a traceback."""
    assert schedules.describe("@daily").startswith("invalid: ")


def test_next_runs_for_each_kind() -> None:
    """Cron follows the calendar, intervals count from creation, a one-shot has exactly one time."""
    tz = ZoneInfo("Europe/Berlin")
    now = datetime(2030, 3, 1, 8, 30, tzinfo=tz)  # a Friday
    assert schedules.next_runs("0 9 * * 1-5", 3, now=now) == [
        datetime(2030, 3, 1, 9, 0, tzinfo=tz),
        datetime(2030, 3, 4, 9, 0, tzinfo=tz),
        datetime(2030, 3, 5, 9, 0, tzinfo=tz),
    ]
    assert schedules.next_runs("every 30m", 2, now=now) == [
        now + timedelta(minutes=30),
        now + timedelta(hours=1),
    ]
    assert schedules.next_runs("2h", 3, now=now) == [now + timedelta(hours=2)]
    assert schedules.next_runs("2030-03-02T10:00", 3, now=now) == [datetime(2030, 3, 2, 10, 0, tzinfo=tz)]


def test_naive_timestamps_use_the_given_zone() -> None:
    """A naive timestamp means wall-clock time in the Hermes zone, like the server does."""
    parsed = schedules.parse("2030-01-01T10:00", tz=ZoneInfo(ZONE))
    assert parsed.run_at == datetime(2030, 1, 1, 10, 0, tzinfo=ZoneInfo(ZONE))
    assert parsed.display == "once at 2030-01-01 10:00"


def test_check_reports_warnings_and_json_form() -> None:
    """Accepted-but-odd schedules carry a warning; to_dict() is JSON-ready for the widget."""
    result = schedules.check("* * * * * 30")
    assert result.ok and "seconds" in result.warnings[0]
    data = result.to_dict()
    json.dumps(data)
    assert len(data["next_runs"]) == 3 and data["kind"] == "cron"
    assert schedules.check("every 0m").warnings


def test_presets_build_expressions_hermes_accepts() -> None:
    """Every preset builds the expected expression, and each one passes validation."""
    built = {
        schedules.every_n_minutes(5): "*/5 * * * *",
        schedules.every_n_minutes(1): "* * * * *",
        schedules.every_n_minutes(7): "every 7m",
        schedules.every_n_minutes(90): "every 90m",
        schedules.hourly(15): "15 * * * *",
        schedules.daily("9:30"): "30 9 * * *",
        schedules.daily(time(18, 5)): "5 18 * * *",
        schedules.weekdays("08:00"): "0 8 * * 1-5",
        schedules.weekly("fri", "17:00"): "0 17 * * 5",
        schedules.weekly(7, (6, 0)): "0 6 * * 0",
        schedules.monthly(15): "0 9 15 * *",
    }
    for expr, expected in built.items():
        assert expr == expected
        assert schedules.check(expr).ok
    assert schedules.describe(schedules.weekdays("08:00")) == "every weekday at 08:00"


@pytest.mark.parametrize(
    "call",
    [
        lambda: schedules.every_n_minutes(0),
        lambda: schedules.hourly(60),
        lambda: schedules.daily("25:00"),
        lambda: schedules.daily("nine"),
        lambda: schedules.weekly("someday"),
        lambda: schedules.monthly(32),
    ],
)
def test_presets_refuse_bad_arguments(call) -> None:
    """Preset builders raise HermesUsageError for values no schedule can express."""
    with pytest.raises(HermesUsageError):
        call()
