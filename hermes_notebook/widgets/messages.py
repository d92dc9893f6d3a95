"""What the kernel sends our views, one TypedDict per message, mirrored name for name in ``js/src/types/``.

The browser -> kernel side is :mod:`.inbound`'s tables (every field checked before a handler sees it).
Questions (the messages :data:`QUESTIONS` names) carry a ``request`` id, and their answer carries it back
(:mod:`.replies`); tests/test_contract.py compares both directions with the TypeScript unions field by field.
"""

from __future__ import annotations

from typing import Any, Literal, TypedDict

from ..turns.changes import MessageDict

__all__ = [
    "CHAT_KERNEL_MESSAGES",
    "JOBS_KERNEL_MESSAGES",
    "QUESTIONS",
    "ActionResultMsg",
    "BundleMsg",
    "ChangesMsg",
    "CommandOutputMsg",
    "CommandsMsg",
    "ErrorMsg",
    "ImageMsg",
    "IndexMsg",
    "JobErrorsMsg",
    "MoreMsg",
    "OlderMsg",
    "ProfilesMsg",
    "PromptMsg",
    "RunsResultMsg",
    "SaveResultMsg",
    "ScheduleCheckMsg",
    "SessionsMsg",
    "SnapshotMsg",
    "TranscriptResultMsg",
]


class ErrorMsg(TypedDict):
    """A question could not be answered (the view's ``invoke`` fails with ``message``)."""

    type: Literal["error"]
    request: str
    message: str


# --- the chat (and the %hermes live turn)
# -----------------------------------------------------------------------


class _Changes(TypedDict):
    type: Literal["changes"]
    seq: int
    changes: list[dict[str, Any]]


class ChangesMsg(_Changes, total=False):
    """A coalesced batch of change records; ``index`` when it settles messages."""

    index: list[dict[str, Any]]


class MoreMsg(TypedDict):
    """One ``append`` to the part the previous batch ended appending to."""

    type: Literal["more"]
    seq: int
    text: str


class IndexMsg(TypedDict):
    """Index entries after a push the kernel could not apply."""

    type: Literal["index"]
    index: list[dict[str, Any]]


class _Snapshot(TypedDict):
    type: Literal["snapshot"]
    seq: int
    messages: list[MessageDict]


class SnapshotMsg(_Snapshot, total=False):
    """The conversation (its newest messages when ``partial``), answering a snapshot request or from a
    reset."""

    revs: dict[str, int]
    partial: bool
    older: int
    reset: bool


class OlderMsg(TypedDict):
    """A page of the messages before ``before``."""

    type: Literal["older"]
    seq: int
    before: str
    messages: list[MessageDict]
    revs: dict[str, int]
    older: int


class _Answer(TypedDict, total=False):
    request: str  # absent: pushed by the kernel, not asked for


class SessionsMsg(_Answer):
    """The session picker's list: the answer to ``list_sessions``, or pushed after a re-list (no
    ``request``)."""

    type: Literal["sessions"]
    sessions: list[dict[str, Any]]


class CommandsMsg(_Answer):
    """Hermes' slash commands, answering ``commands``."""

    type: Literal["commands"]
    commands: list[dict[str, str]]


class CommandOutputMsg(_Answer):
    """What a slash command printed, answering ``command``."""

    type: Literal["command_output"]
    command: str
    output: str
    warning: str
    prefill: str


class ImageMsg(_Answer):
    """A part's image read in the kernel, answering ``image``: ``data`` is base64 of a sniffed ``mime``
    image."""

    type: Literal["image"]
    mime: str
    data: str


class BundleMsg(_Answer):
    """The chat view's code and stylesheet, answering a ``%hermes`` live view's ``bundle`` (once per page)."""

    type: Literal["bundle"]
    esm: str
    css: str


class ProfilesMsg(_Answer):
    """The profiles this Hermes serves (``name``, ``default``, ``model``, ``description``) and the chat's one,
    answering ``profiles``."""

    type: Literal["profiles"]
    profiles: list[dict[str, Any]]
    current: str | None


class TurnFilesMsg(_Answer):
    """The files the last reply's turn changed (``path``, ``status``, ``added``, ``removed``), answering
    ``turn_files``; empty: Undo with files is not offered for it. ``checkpoints``: Hermes takes checkpoints
    here (so Branch with files is offered)."""

    type: Literal["turn_files"]
    message_id: str
    files: list[dict[str, Any]]
    checkpoints: bool


class BranchFilesMsg(_Answer):
    """The files a branch with files at ``message_id`` would put back (``path``, ``status``, ``added``,
    ``removed``), answering ``branch_files``: listed before the user confirms."""

    type: Literal["branch_files"]
    message_id: str
    files: list[dict[str, Any]]


class SubagentControlsMsg(_Answer):
    """Which controls a running subagent's part offers on this Hermes, answering ``subagent_controls``."""

    type: Literal["subagent_controls"]
    steer: bool
    stop: bool


# --- the jobs table
# ---------------------------------------------------------------------------------------------


class ScheduleCheckMsg(TypedDict):
    """A schedule as the kernel checked it (``cron.schedules.ScheduleCheck.to_dict``)."""

    type: Literal["schedule_check"]
    request: str
    ok: bool
    text: str
    message: str
    example: str
    kind: str
    description: str
    next_runs: list[str]
    warnings: list[str]


class SaveResultMsg(TypedDict):
    """A created or updated job, or why not (``field``: the form field the error belongs to)."""

    type: Literal["save_result"]
    request: str
    ok: bool
    field: str | None
    message: str
    job: dict[str, Any] | None


class ActionResultMsg(TypedDict):
    """A pause, resume, run or delete done, or why not."""

    type: Literal["action_result"]
    request: str
    action: str
    id: str
    ok: bool
    message: str


class PromptMsg(TypedDict):
    """A listed job's whole prompt, for the edit form (never synced)."""

    type: Literal["prompt"]
    request: str
    id: str
    ok: bool
    prompt: str | None


class JobErrorsMsg(_Answer):
    """The listed jobs' last errors (jobs with an error only): the answer to ``job_errors``, or pushed after
    every refresh (no ``request``)."""

    type: Literal["job_errors"]
    errors: dict[str, dict[str, str | None]]


class RunsResultMsg(TypedDict):
    """A job's recent runs."""

    type: Literal["runs_result"]
    request: str
    id: str
    ok: bool
    runs: list[dict[str, Any]]
    message: str


class TranscriptResultMsg(TypedDict):
    """One run's messages, read-only."""

    type: Literal["transcript_result"]
    request: str
    run_id: str
    ok: bool
    messages: list[MessageDict]
    message: str


#: The chat's kernel -> browser messages (TypeScript ``KernelMsg``).
CHAT_KERNEL_MESSAGES = (
    ChangesMsg,
    MoreMsg,
    IndexMsg,
    SnapshotMsg,
    OlderMsg,
    SessionsMsg,
    CommandsMsg,
    CommandOutputMsg,
    ImageMsg,
    ProfilesMsg,
    TurnFilesMsg,
    BranchFilesMsg,
    SubagentControlsMsg,
    BundleMsg,
    ErrorMsg,
)
#: The jobs widget's kernel -> browser messages (TypeScript ``JobsKernelMsg``).
JOBS_KERNEL_MESSAGES = (
    ScheduleCheckMsg,
    SaveResultMsg,
    ActionResultMsg,
    PromptMsg,
    JobErrorsMsg,
    RunsResultMsg,
    TranscriptResultMsg,
    ErrorMsg,
)
#: Each question a view may ask -> the message that answers it (TypeScript ``Answers``).
QUESTIONS: dict[str, type] = {
    "list_sessions": SessionsMsg,
    "commands": CommandsMsg,
    "command": CommandOutputMsg,
    "image": ImageMsg,
    "profiles": ProfilesMsg,
    "turn_files": TurnFilesMsg,
    "branch_files": BranchFilesMsg,
    "subagent_controls": SubagentControlsMsg,
    "bundle": BundleMsg,
    "check_schedule": ScheduleCheckMsg,
    "save": SaveResultMsg,
    "reproduce": SaveResultMsg,
    "action": ActionResultMsg,
    "get_prompt": PromptMsg,
    "job_errors": JobErrorsMsg,
    "runs": RunsResultMsg,
    "transcript": TranscriptResultMsg,
}
