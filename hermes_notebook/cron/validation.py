"""Every check on a cron job's fields, in one place: the client's shape checks and the scripting API's
stricter :func:`validate_job` are built from the same per-field functions, with the server's limits.

Why check before sending: the jobs routes answer most refused values with HTTP 500 and a parser dump
(docs/protocol/api-server.md §7), and some bad values (a bare-int ``repeat`` on PATCH) are stored and break
the job later. Pure: no I/O, so the client (a lower layer) can use it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from ..errors import HermesUsageError
from . import schedules

__all__ = [
    "MAX_NAME_LENGTH",
    "MAX_PROMPT_LENGTH",
    "UPDATABLE_FIELDS",
    "check_deliver",
    "check_enabled",
    "check_job_id",
    "check_name",
    "check_prompt",
    "check_repeat",
    "check_schedule_text",
    "check_skills",
    "update_body",
    "validate_job",
]

#: Fields ``PATCH /api/jobs/{id}`` applies; the server silently drops any other key (§7 "Endpoints").
UPDATABLE_FIELDS = frozenset({"name", "schedule", "prompt", "deliver", "skills", "repeat", "enabled"})
MAX_NAME_LENGTH = 200
MAX_PROMPT_LENGTH = 5000

_JOB_ID_RE = re.compile(r"^[a-f0-9]{12}$")


def check_job_id(job_id: object) -> str:
    """The server answers 400 for anything but 12 lowercase hex characters (``uuid4().hex[:12]``)."""
    if not isinstance(job_id, str) or not _JOB_ID_RE.fullmatch(job_id):
        raise HermesUsageError(f"a job id is 12 lowercase hex characters; got {job_id!r}")
    return job_id


def _text(value: object, what: str, param: str) -> str:
    if not isinstance(value, str):
        raise HermesUsageError(f"{what} must be a string; got {type(value).__name__}", param=param)
    return value


def check_name(value: object) -> str:
    """A name, stripped: 1 to :data:`MAX_NAME_LENGTH` characters."""
    name = _text(value, "a job name", "name").strip()
    if not name or len(name) > MAX_NAME_LENGTH:
        raise HermesUsageError(
            f"a job name must be 1 to {MAX_NAME_LENGTH} characters; this one has {len(name)}", param="name"
        )
    return name


def check_schedule_text(value: object) -> str:
    """A non-empty schedule string (what it means is :func:`schedules.validate`'s job)."""
    schedule = _text(value, "schedule", "schedule").strip()
    if not schedule:
        raise HermesUsageError("schedule must not be empty", param="schedule")
    return schedule


def check_prompt(value: object) -> str:
    """A prompt of at most :data:`MAX_PROMPT_LENGTH` characters."""
    prompt = _text(value, "a prompt", "prompt")
    if len(prompt) > MAX_PROMPT_LENGTH:
        raise HermesUsageError(
            f"a prompt has at most {MAX_PROMPT_LENGTH} characters; this one has {len(prompt)}", param="prompt"
        )
    return prompt


def check_deliver(value: object) -> str:
    """Where results go: ``local`` or ``<platform>:<chat id>``."""
    if not isinstance(value, str) or not value.strip():
        raise HermesUsageError(
            "deliver must be a non-empty string such as 'local' or 'telegram:<chat id>'", param="deliver"
        )
    return value.strip()


def check_skills(value: object) -> list[str]:
    """Skill names from a list, or from one comma-separated string."""
    if isinstance(value, str):
        value = value.split(",")
    if not isinstance(value, Sequence) or not all(isinstance(s, str) for s in value):
        raise HermesUsageError("skills must be a skill name or a list of skill names", param="skills")
    return [s for s in (x.strip() for x in value) if s]


def check_repeat(value: object) -> int:
    """A positive number of runs (``bool`` is refused although it is an ``int``)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise HermesUsageError(
            f"repeat must be a positive integer (a number of runs; None for forever); got {value!r}",
            param="repeat",
        )
    return value


def check_enabled(value: object) -> bool:
    """``True`` or ``False``, nothing truthy."""
    if not isinstance(value, bool):
        raise HermesUsageError(f"enabled must be True or False; got {value!r}", param="enabled")
    return value


def _repeat_object(value: object) -> dict[str, int | None]:
    # PATCH stores a bare int as-is, which breaks the job's next run (§7 "PATCH pitfalls"): send the object.
    return {"times": None if value is None else check_repeat(value), "completed": 0}


_UPDATE_CHECKS: dict[str, Callable[[object], Any]] = {
    "name": check_name,
    "schedule": check_schedule_text,
    "prompt": check_prompt,
    "deliver": check_deliver,
    "skills": check_skills,
    "repeat": _repeat_object,
    "enabled": check_enabled,
}


def update_body(fields: Mapping[str, object]) -> dict[str, Any]:
    """The PATCH body for ``fields``: only updatable fields, at least one, each checked (``repeat=None``:
    forever)."""
    unknown = sorted(set(fields) - UPDATABLE_FIELDS)
    if unknown:
        raise HermesUsageError(
            f"cannot update {', '.join(unknown)}; updatable fields: {', '.join(sorted(UPDATABLE_FIELDS))}"
        )
    if not fields:
        raise HermesUsageError("update() needs at least one field to change")
    return {key: _UPDATE_CHECKS[key](value) for key, value in fields.items()}


def validate_job(
    *,
    name: object = None,
    schedule: object = None,
    prompt: object = None,
    deliver: object = None,
    skills: object = None,
    repeat: object = None,
    require: Iterable[str] = (),
) -> dict[str, Any]:
    """Check job fields the way the server will, and return them ready to send (``None`` ones dropped).

    ``require`` names fields that must be present (``("name", "schedule")`` for a create). A bad schedule
    raises :class:`HermesValidationError` (with an example that works); other bad values raise
    :class:`HermesUsageError`. Nothing is sent in either case.
    """
    given = {
        "name": name,
        "schedule": schedule,
        "prompt": prompt,
        "deliver": deliver,
        "skills": skills,
        "repeat": repeat,
    }
    for key in require:
        if given.get(key) is None:
            raise HermesUsageError(f"a job needs a {key}", param=key)
    out: dict[str, Any] = {}
    if name is not None:
        out["name"] = check_name(name)
    if schedule is not None:
        out["schedule"] = schedules.validate(schedule)
    if prompt is not None:
        out["prompt"] = check_prompt(prompt)
    if deliver is not None:
        out["deliver"] = check_deliver(deliver)
    if skills is not None:
        out["skills"] = check_skills(skills)
    if repeat is not None:
        out["repeat"] = check_repeat(repeat)
    return out
