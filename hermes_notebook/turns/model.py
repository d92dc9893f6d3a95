"""The turn model's data: Message, Part and Interaction (with ``to_dict()`` producing the contract's dicts).

The shapes and ids are docs/architecture.md "Turn model"; :mod:`.changes` holds the matching TypedDicts and
the change records, :mod:`.folder` decides how events change these objects, :mod:`.history` rebuilds them from
REST rows. Pure data: no I/O.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from .changes import (
    CellChangeDict,
    ChangeRecord,
    ImageDict,
    InteractionDict,
    InteractionKind,
    InteractionStatus,
    MessageDict,
    MessageStatus,
    PartDict,
    PartKind,
    RiskDict,
    Role,
    RunUndoDict,
    SentImageDict,
    SubagentDict,
    TodoItemDict,
    ToolLabelDict,
    ToolStatus,
)
from .events import Event

__all__ = [
    "APPROVAL_CHOICES",
    "CODE_CHOICES",
    "DEFAULT_APPROVAL_CHOICES",
    "MASKED_APPROVAL_CHOICES",
    "READS_CHOICE",
    "REDACTED",
    "Interaction",
    "InteractionKind",
    "InteractionStatus",
    "Message",
    "MessageStatus",
    "Part",
    "PartKind",
    "Role",
    "Source",
    "ToolStatus",
    "TransformContext",
    "TransformOutput",
    "sent_prompt_message",
    "user_message",
]

Source = Literal["live", "history"]

# What a sudo password or secret value is recorded as: the value is sent once and never kept.
REDACTED = "********"

# Every answer an approval accepts on both servers (dashboard ``approval.respond``, API
# ``/v1/runs/{id}/approval``).
APPROVAL_CHOICES: tuple[str, ...] = ("once", "session", "always", "deny")

# Choices for an approval.request that carries none (MCP elicitation approvals, docs/protocol/dashboard.md
# §4.2). "once"/"deny" are accepted by every approval route and grant nothing beyond this one command (an
# elicitation remembers nothing, so "session" would promise what it does not do). The folder fills them in, so
# every approval a view or a check sees lists its choices; the checks that fall back use this same tuple.
DEFAULT_APPROVAL_CHOICES: tuple[str, ...] = ("once", "deny")
# All an approval whose command the server masked may be answered with: what runs is not fully shown, so
# nothing beyond this one command is granted (turns/masked.py): the same pair.
MASKED_APPROVAL_CHOICES: tuple[str, ...] = DEFAULT_APPROVAL_CHOICES

# A ``code`` interaction is asked by the client itself, not the server: the agent wants to run code in the
# notebook's kernel (a kernel tool). "run" runs exactly the code shown; anything else leaves the kernel as it
# was.
CODE_CHOICES: tuple[str, ...] = ("run", "deny")
# Offered besides those while the session may not read the kernel: do not run, but allow the read tools.
READS_CHOICE = "allow_reads"
# A ``run`` interaction (client-side too) is an approved kernel run in progress: the code, what it waits for,
# and Stop. The kernel settles it with how the run ended ("finished", "stopped", "timed_out", "turn_ended",
# ...).
RUN_CHOICES: tuple[str, ...] = ("stop",)


# ------------------------------------------------------------------------------------------------------------
# Data model


@dataclass(slots=True)
class Interaction:
    """A blocking request from the server (approval, clarify, sudo, secret) hanging on a tool part."""

    kind: InteractionKind
    request_id: str
    status: InteractionStatus = "pending"
    command: str | None = None
    question: str | None = None
    description: str | None = None
    choices: list[str] = field(default_factory=list)
    response: str | None = None
    #: A newer server's multi-question clarify: ``[{"id"?, "question", "choices"?, "multi_select"?}]``.
    questions: list[dict[str, Any]] | None = None
    #: Why a newer server withdrew the request (``request.cancel``).
    reason: str | None = None
    #: The server hid part of the command before sending it (:mod:`.masked`): what runs is not fully shown.
    masked: bool = False
    #: A card of our own that its kind's title would misname (a preview runs in a copy of the kernel).
    title: str | None = None

    def to_dict(self) -> InteractionDict:
        """The contract's Interaction dict (fresh objects; safe to send or mutate)."""
        d: InteractionDict = {
            "kind": self.kind,
            "request_id": self.request_id,
            "status": self.status,
            "command": self.command,
            "question": self.question,
            "description": self.description,
            "choices": list(self.choices),
            "response": self.response,
        }
        if self.questions is not None:  # absent (not null) when the server sent none: the old contract holds
            d["questions"] = [dict(q) for q in self.questions]
        if self.reason is not None:
            d["reason"] = self.reason
        if self.masked:  # absent unless true: the old contract holds
            d["masked"] = True
        if self.title is not None:  # absent unless the card names itself: the old contract holds
            d["title"] = self.title
        return d

    def copy(self) -> Interaction:
        """An independent copy (snapshots must not change when the folder moves on)."""
        return Interaction(
            self.kind,
            self.request_id,
            self.status,
            self.command,
            self.question,
            self.description,
            list(self.choices),
            self.response,
            self.questions,
            self.reason,
            self.masked,
            self.title,
        )


@dataclass(slots=True)
class Part:
    """One part of a message: ``reasoning:N`` / ``text:N`` / ``marker:N`` (with ``text``) or ``tool:<id>``."""

    id: str
    kind: PartKind
    text: str = ""
    name: str | None = None
    status: ToolStatus | None = None
    arguments: str | dict[str, Any] | None = None
    preview: str | None = None
    result: Any = None
    duration: float | None = None
    interaction: Interaction | None = None
    #: Extras (contract ``PartExtras``), absent from the dict when None; replaced whole, never mutated.
    diff: str | None = None
    todos: list[TodoItemDict] | None = None
    subagent: SubagentDict | None = None
    cell_change: CellChangeDict | None = None
    sent_images: list[SentImageDict] | None = None
    run_undo: RunUndoDict | None = None
    risk: RiskDict | None = None
    images: list[ImageDict] | None = None
    label: ToolLabelDict | None = None
    #: What the tool's own handler named the call in the user's words (a kernel tool): the label's detail,
    #: kept when the arguments arrive later. Views read it in ``label``.
    named: str | None = None

    def to_dict(self) -> PartDict:
        """The contract's Part dict: every field present, unused ones None (extras only when set)."""
        inter = self.interaction
        d: PartDict = {
            "id": self.id,
            "kind": self.kind,
            "text": self.text,
            "name": self.name,
            "status": self.status,
            "arguments": self.arguments,
            "preview": self.preview,
            "result": self.result,
            "duration": self.duration,
            "interaction": None if inter is None else inter.to_dict(),
        }
        if self.diff is not None:
            d["diff"] = self.diff
        if self.todos is not None:
            d["todos"] = [item.copy() for item in self.todos]
        if self.subagent is not None:
            info = d["subagent"] = self.subagent.copy()
            info["tools"] = [tool.copy() for tool in info["tools"]]
        if self.cell_change is not None:
            d["cell_change"] = self.cell_change.copy()
        if self.sent_images is not None:
            d["sent_images"] = [image.copy() for image in self.sent_images]
        if self.run_undo is not None:
            d["run_undo"] = self.run_undo.copy()
        if self.risk is not None:
            risk = d["risk"] = self.risk.copy()
            risk["findings"] = list(risk["findings"])
        if self.images is not None:
            d["images"] = [image.copy() for image in self.images]
        if self.label is not None:
            d["label"] = self.label.copy()
        return d

    def copy(self) -> Part:
        """An independent copy (``arguments``/``result``/extras are shared: the model replaces, never mutates
        them)."""
        inter = self.interaction
        return Part(
            self.id,
            self.kind,
            self.text,
            self.name,
            self.status,
            self.arguments,
            self.preview,
            self.result,
            self.duration,
            None if inter is None else inter.copy(),
            self.diff,
            self.todos,
            self.subagent,
            self.cell_change,
            self.sent_images,
            self.run_undo,
            self.risk,
            self.images,
            self.label,
            self.named,
        )


@dataclass(slots=True)
class Message:
    """A user or assistant message: ``user:<turn id>`` or ``assistant:<turn id>`` with ordered parts."""

    id: str
    role: Role
    status: MessageStatus = "streaming"
    parts: list[Part] = field(default_factory=list)
    usage: dict[str, Any] | None = None
    error: str | None = None

    def to_dict(self) -> MessageDict:
        """The contract's Message dict."""
        return {
            "id": self.id,
            "role": self.role,
            "status": self.status,
            "parts": [p.to_dict() for p in self.parts],
            "usage": None if self.usage is None else dict(self.usage),
            "error": self.error,
        }

    def copy(self) -> Message:
        """An independent copy of the message and its parts."""
        return Message(
            self.id,
            self.role,
            self.status,
            [p.copy() for p in self.parts],
            None if self.usage is None else dict(self.usage),
            self.error,
        )


@dataclass(frozen=True, slots=True)
class TransformContext:
    """What a ``transform_output`` hook knows besides the event: live or history, the ids, the default
    changes."""

    source: Source
    turn_id: str
    message_id: str
    default_changes: list[ChangeRecord]


TransformOutput = Callable[[Event, TransformContext], "list[ChangeRecord] | None"]


def user_message(turn_id: str, text: str, images: list[ImageDict] | None = None) -> Message:
    """The user side of a turn: ``user:<turn id>`` with one ``text:0`` part (contract, "Ids"), and the images
    the user attached (``images``, when any)."""
    return Message(
        f"user:{turn_id}", "user", "complete", [Part("text:0", "text", text, images=images or None)]
    )


def sent_prompt_message(turn_id: str, text: str, filled: int) -> Message:
    """The user side of a turn whose ``{placeholders}`` were filled: the prompt as sent, collapsed under a
    title.

    Why: the cell shows what the user typed, not what the values became; this shows what left the kernel. A
    text part with a ``name`` is shown collapsed under that name (contract, "Part dict").
    """
    title = f"prompt as sent ({filled} value{'' if filled == 1 else 's'} filled)"
    return Message(f"user:{turn_id}", "user", "complete", [Part("text:0", "text", text, name=title)])
