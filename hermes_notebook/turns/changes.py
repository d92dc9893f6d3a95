"""The JSON contract every view shares: Message/Part/Interaction dicts and the change records that edit them.

These are the Python halves of the TypeScript types in ``js/src/types/turns.ts`` (a test compares the keys)
and of the tables in docs/architecture.md ("Turn model"). :func:`apply_changes` replays records onto plain
dicts: Python views use it, and the tests use it to prove the change stream reproduces
``folder.message.to_dict()``."""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any, Literal, TypedDict

__all__ = [
    "AppendChange",
    "CellChangeDict",
    "CellChangeKind",
    "ChangeRecord",
    "FinishChange",
    "ImageDict",
    "ImageSource",
    "InteractionDict",
    "InteractionExtras",
    "InteractionKind",
    "InteractionStatus",
    "MessageChange",
    "MessageDict",
    "MessageStatus",
    "PartChange",
    "PartDict",
    "PartExtras",
    "PartFields",
    "PartKind",
    "PatchChange",
    "RiskDict",
    "RiskLevel",
    "Role",
    "RunUndoDict",
    "SentImageDict",
    "SubagentDict",
    "SubagentStatus",
    "SubagentToolDict",
    "TodoItemDict",
    "TodoStatus",
    "ToolLabelDict",
    "ToolStatus",
    "apply_changes",
    "find_part",
]

MessageStatus = Literal["streaming", "queued", "complete", "interrupted", "error", "cancelled"]
Role = Literal["user", "assistant"]
PartKind = Literal["reasoning", "text", "tool", "marker", "todo", "subagent"]
ToolStatus = Literal["running", "completed", "error", "cancelled"]
InteractionKind = Literal["approval", "clarify", "sudo", "secret", "code", "run"]
InteractionStatus = Literal["pending", "answered", "cancelled", "expired"]
TodoStatus = Literal["pending", "in_progress", "completed", "cancelled"]
SubagentStatus = Literal["queued", "running", "completed", "failed", "error", "timeout", "interrupted"]
CellChangeKind = Literal["insert", "edit", "delete"]
RiskLevel = Literal["high", "medium", "low", "untrusted"]
ImageSource = Literal["inline", "media", "remote"]


class InteractionExtras(TypedDict, total=False):
    """Keys only some interactions carry; absent (not null) otherwise."""

    # multi-question clarify: [{"id"?, "question", "choices"?, "multi_select"?}]
    questions: list[dict[str, Any]]
    reason: str  # why the server withdrew the request (request.cancel)
    masked: bool  # true: the server hid part of the command (turns/masked.py); only "once"/"deny" are offered
    title: str  # a kernel card's own title (a preview runs in a copy); views title it by kind otherwise


class InteractionDict(InteractionExtras):
    """A blocking request from the server on a tool part; a sudo/secret ``response`` is ``"********"``."""

    kind: InteractionKind
    request_id: str
    status: InteractionStatus
    command: str | None
    question: str | None
    description: str | None
    choices: list[str]
    response: str | None


class TodoItemDict(TypedDict):
    """One item of the agent's task list (its todo tool), as the server's full snapshot lists it."""

    id: str
    content: str
    status: TodoStatus
    parent: str | None  # a newer server's nested subtask: the id of its parent item


class SubagentToolDict(TypedDict):
    """One tool call a subagent made (the server reports no id and no result for it)."""

    name: str
    preview: str | None


class SubagentDict(TypedDict):
    """A delegated child agent: who it is, where it sits in the spawn tree, what it did."""

    id: str
    parent_id: str | None  # the subagent that spawned it; None: the turn's own agent did
    depth: int
    goal: str
    status: SubagentStatus
    model: str | None
    task_index: int
    task_count: int
    activity: str | None  # the latest thinking or progress line
    tools: list[SubagentToolDict]
    summary: str | None


class CellChangeDict(TypedDict):
    """A notebook cell change a kernel tool proposed (the user keeps or discards it on the cell)."""

    id: str  # the change's id in the notebook's front end ("c3")
    kind: CellChangeKind
    index: int  # the cell (edit, delete) or the place (insert), counted from 0 when it was proposed
    cell_type: str  # code, markdown or raw


class SentImageDict(TypedDict):
    """An image a kernel tool sent to the model with its result (a PNG the kernel produced)."""

    mime: str  # image/png
    width: int
    height: int
    bytes: int
    label: str  # where it came from: "In[5] display 1", "run_code figure 1"
    data: str  # the PNG, base64 (exactly what was sent)


class RunUndoDict(TypedDict):
    """Undo variables for an approved run (kernel/undo/last_run.py): ``text`` says what it does, or why."""

    run: int
    offered: bool
    text: str


class RiskDict(TypedDict):
    """What Hermes found in a tool's output (``tool.output_risk``): prompt-injection or secret patterns.

    ``untrusted`` (from history, where Hermes keeps no findings): the output came from a source Hermes treats
    as untrusted (a web page, a browser, an MCP tool). ``findings`` are Hermes' pattern ids, server text.
    """

    level: RiskLevel
    findings: list[str]
    redacted: bool


class ImageDict(TypedDict):
    """An image a part refers to. Only images from the connected Hermes itself are shown without a click:
    ``inline`` (the bytes came with the message: ``data`` is base64 of at most
    ``turns.images.MAX_SHOWN_BYTES``, sniffed as PNG, JPEG, GIF or WebP) and ``media`` (a file on the Hermes
    host, read through its Dashboard's ``/api/media``); a ``remote`` URL is a link until the user clicks it.
    ``note`` says why an image is not shown."""

    source: ImageSource
    mime: str | None
    data: str | None
    path: str | None
    url: str | None
    alt: str
    bytes: int | None
    note: str | None


class ToolLabelDict(TypedDict):
    """What a view shows for a tool part (:mod:`hermes_notebook.turns.labels`): its name as a person reads it
    (``notebook: describe``) and one line of detail (the command as it runs, a preview, the arguments)."""

    name: str
    detail: str | None


class PartExtras(TypedDict, total=False):
    """Keys only some parts have; absent (not null) otherwise, so the old contract holds."""

    diff: str  # a tool part: the file change the server rendered with its completion (plain lines)
    todos: list[TodoItemDict]  # the ``todo`` part: the task list's latest full snapshot
    subagent: SubagentDict  # a ``subagent`` part
    cell_change: CellChangeDict  # a kernel cell tool's part: the pending change it proposed in the notebook
    sent_images: list[SentImageDict]  # a kernel tool's part: the images its result carried to the model
    run_undo: RunUndoDict  # a run_code part: Undo variables offered, or why not
    risk: RiskDict  # a tool part whose output Hermes flagged (or, from history, marked untrusted)
    images: list[ImageDict]  # a text or tool part that names images (MEDIA: files, data: or remote images)
    label: ToolLabelDict  # a tool part: its readable name and detail (what views show in its header)


class PartDict(PartExtras):
    """One part of a message: every field present, the ones its kind does not use are None.

    A ``marker`` part (``marker:N``) is a line in the conversation that is no one's words, e.g. a context
    compression; it uses ``text`` only. The ``todo`` part (one per turn) and ``subagent:<id>`` parts carry
    their data in :class:`PartExtras`.
    """

    id: str
    kind: PartKind
    text: str
    name: str | None
    status: ToolStatus | None
    arguments: str | dict[str, Any] | None
    preview: str | None
    result: Any
    duration: float | None
    interaction: InteractionDict | None


class PartFields(TypedDict, total=False):
    """The fields a ``patch`` record may set: any of a part's except ``id`` and ``kind``."""

    text: str
    name: str | None
    status: ToolStatus | None
    arguments: str | dict[str, Any] | None
    preview: str | None
    result: Any
    duration: float | None
    interaction: InteractionDict | None
    diff: str
    todos: list[TodoItemDict]
    subagent: SubagentDict
    cell_change: CellChangeDict
    sent_images: list[SentImageDict]
    run_undo: RunUndoDict
    risk: RiskDict
    images: list[ImageDict]
    label: ToolLabelDict


class MessageDict(TypedDict):
    """A user or assistant message with its ordered parts."""

    id: str
    role: Role
    status: MessageStatus
    parts: list[PartDict]
    usage: dict[str, Any] | None
    error: str | None


class MessageChange(TypedDict):
    """Add (or replace) a whole message."""

    op: Literal["message"]
    message: MessageDict


class PartChange(TypedDict):
    """Add a part at the end of a message, or replace the part with that id in place."""

    op: Literal["part"]
    message_id: str
    part: PartDict


class AppendChange(TypedDict):
    """Append to a text or reasoning part's ``text`` (the hot path: one per streamed delta)."""

    op: Literal["append"]
    message_id: str
    part_id: str
    text: str


class PatchChange(TypedDict):
    """Set some fields of a part (``status``, ``result``, ``interaction``, the trimmed ``text``, ...)."""

    op: Literal["patch"]
    message_id: str
    part_id: str
    fields: PartFields


class FinishChange(TypedDict):
    """The message ended."""

    op: Literal["finish"]
    message_id: str
    status: MessageStatus
    usage: dict[str, Any] | None
    error: str | None


ChangeRecord = MessageChange | PartChange | AppendChange | PatchChange | FinishChange


def find_part(message: dict[str, Any], part_id: str) -> dict[str, Any]:
    """Part ``part_id`` of a message dict; KeyError naming both when it has none."""
    for part in message["parts"]:
        if part["id"] == part_id:
            return part
    raise KeyError(f"no part {part_id!r} in message {message['id']!r}")


def apply_changes(
    messages: dict[str, dict[str, Any]], changes: Sequence[Mapping[str, Any]]
) -> dict[str, dict[str, Any]]:
    """Apply change records in order to ``{message id: message dict}`` (in place; also returned).

    Values are copied, so the records stay untouched. Consecutive appends to one part are joined once.
    Raises ``KeyError`` for an unknown message or part and ``ValueError`` for an unknown op.
    """
    pending: list[str] = []
    target: dict[str, Any] | None = None
    for change in changes:
        op = change["op"]
        if op == "append":
            part = find_part(messages[change["message_id"]], change["part_id"])
            if part is not target:
                if target is not None:
                    target["text"] += "".join(pending)
                target, pending = part, []
            pending.append(change["text"])
            continue
        if target is not None:
            target["text"] += "".join(pending)
            target, pending = None, []
        if op == "message":
            message = copy.deepcopy(dict(change["message"]))
            messages[message["id"]] = message
        elif op == "part":
            new = copy.deepcopy(dict(change["part"]))
            parts = messages[change["message_id"]]["parts"]
            for i, part in enumerate(parts):
                if part["id"] == new["id"]:
                    parts[i] = new
                    break
            else:
                parts.append(new)
        elif op == "patch":
            find_part(messages[change["message_id"]], change["part_id"]).update(
                copy.deepcopy(dict(change["fields"]))
            )
        elif op == "finish":
            message = messages[change["message_id"]]
            message["status"] = change["status"]
            message["usage"] = copy.deepcopy(change["usage"])
            message["error"] = change["error"]
        else:
            raise ValueError(f"unknown change op {op!r}")
    if target is not None:
        target["text"] += "".join(pending)
    return messages
