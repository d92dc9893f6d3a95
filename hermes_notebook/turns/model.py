"""The pure turn model: wire events in, message snapshots and change records out (docs/architecture.md).

Everything a view shows of a turn is decided here, once, for both servers and for history:

* :class:`TurnFolder` folds the :class:`~hermes_notebook.turns.events.Event` s of one assistant turn (Dashboard or API
  Server run dialect) into a :class:`Message` and returns, per event, the change records that take a view from
  the previous state to the new one (ops ``message``, ``part``, ``append``, ``patch``, ``finish``).
* :func:`history_events` turns the Dashboard's REST history rows into the same events a live turn produces, so
  :func:`fold_history` rebuilds messages with the *same* folder: part ids are equal live and from history.
* :func:`apply_changes` replays change records onto plain dicts, which is how Python views (and the tests)
  prove that the change stream reproduces ``folder.message.to_dict()``.

No I/O, no asyncio, no widgets: this module is imported by the connection, the views and the tests alike.
Per-delta work is O(1): text is kept as a list of chunks and joined only when a snapshot is asked for.
"""

from __future__ import annotations

import copy
import json
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple

from .events import Event
from .withdrawn import on_request_cancel, on_run_interrupted

__all__ = [
    "DEFAULT_APPROVAL_CHOICES",
    "REDACTED",
    "HistoryTurn",
    "Interaction",
    "InteractionKind",
    "InteractionStatus",
    "Message",
    "MessageStatus",
    "Part",
    "PartKind",
    "Source",
    "ToolStatus",
    "TransformContext",
    "TransformOutput",
    "TurnFolder",
    "apply_changes",
    "fold_history",
    "history_events",
    "user_message",
]

MessageStatus = Literal["streaming", "queued", "complete", "interrupted", "error", "cancelled"]
PartKind = Literal["reasoning", "text", "tool"]
ToolStatus = Literal["running", "completed", "error", "cancelled"]
InteractionKind = Literal["approval", "clarify", "sudo", "secret"]
InteractionStatus = Literal["pending", "answered", "cancelled", "expired"]
Source = Literal["live", "history"]

# What a sudo password or secret value is recorded as: the value is sent once and never kept.
REDACTED = "********"

# Choices for an approval.request that carries none (MCP elicitation approvals, dashboard-protocol.md §4.2).
# "once"/"deny" are accepted by every approval route and grant nothing beyond this one command.
DEFAULT_APPROVAL_CHOICES: tuple[str, ...] = ("once", "deny")

_END_STATUSES = frozenset({"complete", "interrupted", "error", "cancelled"})
_COMPLETE_STATUSES = frozenset({"complete", "interrupted", "error"})  # message.complete.status, §4.1


# --------------------------------------------------------------------------------------------------------------
# Data model


@dataclass(slots=True)
class Interaction:
    """A blocking request from the server (approval, clarify, sudo, secret) hanging on a tool part."""

    kind: str
    request_id: str
    status: str = "pending"
    command: str | None = None
    question: str | None = None
    description: str | None = None
    choices: list[str] = field(default_factory=list)
    response: str | None = None
    questions: list[dict[str, Any]] | None = None  # newer servers' multi-question clarify (absent when None)
    reason: str | None = None  # why a newer server withdrew it (request.cancel), absent when None

    def to_dict(self) -> dict[str, Any]:
        """The contract's Interaction dict (fresh objects; safe to send or mutate)."""
        return {
            "kind": self.kind,
            "request_id": self.request_id,
            "status": self.status,
            "command": self.command,
            "question": self.question,
            "description": self.description,
            "choices": list(self.choices),
            "response": self.response,
            **({} if self.questions is None else {"questions": [dict(q) for q in self.questions]}), **({} if self.reason is None else {"reason": self.reason}),
        }

    def copy(self) -> Interaction:
        """An independent copy (snapshots must not change when the folder moves on)."""
        return Interaction(
            self.kind, self.request_id, self.status, self.command, self.question, self.description,
            list(self.choices), self.response, self.questions, self.reason,
        )


@dataclass(slots=True)
class Part:
    """One part of a message: ``reasoning:N`` / ``text:N`` (with ``text``) or ``tool:<id>`` (tool fields)."""

    id: str
    kind: str
    text: str = ""
    name: str | None = None
    status: str | None = None
    arguments: str | dict[str, Any] | None = None
    preview: str | None = None
    result: Any = None
    duration: float | None = None
    interaction: Interaction | None = None

    def to_dict(self) -> dict[str, Any]:
        """The contract's Part dict: every field present, unused ones None."""
        inter = self.interaction
        return {
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

    def copy(self) -> Part:
        """An independent copy (``arguments``/``result`` are shared: the model never mutates them)."""
        inter = self.interaction
        return Part(
            self.id, self.kind, self.text, self.name, self.status, self.arguments, self.preview, self.result,
            self.duration, None if inter is None else inter.copy(),
        )


@dataclass(slots=True)
class Message:
    """A user or assistant message: ``user:<turn id>`` or ``assistant:<turn id>`` with ordered parts."""

    id: str
    role: str
    status: str = "streaming"
    parts: list[Part] = field(default_factory=list)
    usage: dict[str, Any] | None = None
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
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
            self.id, self.role, self.status, [p.copy() for p in self.parts],
            None if self.usage is None else dict(self.usage), self.error,
        )


@dataclass(frozen=True, slots=True)
class TransformContext:
    """What a ``transform_output`` hook knows besides the event: live or history, the ids, the default changes."""

    source: str
    turn_id: str
    message_id: str
    default_changes: list[dict[str, Any]]


TransformOutput = Callable[[Event, TransformContext], "list[dict[str, Any]] | None"]


def user_message(turn_id: str, text: str) -> Message:
    """The user side of a turn: ``user:<turn id>`` with one ``text:0`` part (contract, "Ids")."""
    return Message(f"user:{turn_id}", "user", "complete", [Part("text:0", "text", text)])


# --------------------------------------------------------------------------------------------------------------
# The folder


def _result_failed(result: Any) -> bool:
    # Tool results report failure in-band: {"output": ..., "exit_code": -1, "error": "BLOCKED: ..."}; success
    # carries "error": null (dashboard-protocol.md §4.1 tool.complete; ws_prompts.jsonl DANGER deny).
    return isinstance(result, Mapping) and bool(result.get("error"))


def _timed_out(result: Any) -> bool:
    # An unanswered approval is denied after approvals.timeout and the tool result says so
    # ("BLOCKED: Command timed out without user response", ws_DANGER_timeout.jsonl); no event marks it.
    if isinstance(result, Mapping):
        result = result.get("error")
    return isinstance(result, str) and "timed out" in result


def _num(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _choices(value: Any) -> list[str] | None:
    if isinstance(value, (list, tuple)):
        return [c if isinstance(c, str) else str(c) for c in value]
    return None


class TurnFolder:
    """Folds the events of one assistant turn into a :class:`Message`, returning change records per event.

    ``apply`` is O(1) per text delta. The first call (or :meth:`begin`) emits the ``message`` op; the event that
    ends the turn (``message.complete``, ``error``, ``run.completed|failed|cancelled``) or :meth:`finish` emits
    the end-of-turn patches and ``finish``; after that every call returns ``[]``.
    """

    __slots__ = (
        "turn_id", "source", "message_id", "_transform", "_msg", "_started", "_done", "_segment", "_parts",
        "_chunks", "_text_id", "_text_chunks", "_reasoning_id", "_reasoning_chunks", "_has_text",
        "_has_reasoning", "_running", "_run_tools", "_run_tool_count", "_interactions", "_approval_count",
        "_approval_fifo", "_synthetic",
    )

    def __init__(
        self, turn_id: str, *, source: Source = "live", transform_output: TransformOutput | None = None
    ) -> None:
        self.turn_id = turn_id
        self.source = source
        self.message_id = f"assistant:{turn_id}"
        self._transform = transform_output
        self._msg = Message(self.message_id, "assistant")
        self._started = False
        self._done = False
        self._segment = 0  # N in reasoning:N / text:N; +1 after each tool part (contract, "Ids")
        self._parts: dict[str, Part] = {}
        self._chunks: dict[str, list[str]] = {}  # text/reasoning part id -> chunks not yet joined
        self._text_id: str | None = None  # the current segment's text part, once it exists
        self._text_chunks: list[str] | None = None
        self._reasoning_id: str | None = None
        self._reasoning_chunks: list[str] | None = None
        self._has_text = False
        self._has_reasoning = False
        self._running: list[Part] = []  # running tool parts, oldest first
        self._run_tools: dict[str, deque[Part]] = {}  # run dialect: tool name -> running parts, oldest first
        self._run_tool_count = 0
        self._interactions: dict[str, Part] = {}  # request id -> the part holding it
        self._approval_count = 0
        self._approval_fifo: deque[str] = deque()  # approvals in server order, for approval.responded
        self._synthetic: set[str] = set()  # tool parts made only to hold an interaction

    # -- public ----------------------------------------------------------------------------------------------

    @property
    def done(self) -> bool:
        """True once the turn has ended (terminal event or :meth:`finish`)."""
        return self._done

    @property
    def message(self) -> Message:
        """A snapshot of the message so far (a copy: it does not change as more events arrive)."""
        self._sync()
        return self._msg.copy()

    def pending(self) -> list[Interaction]:
        """Copies of the interactions still waiting for an answer, in request order (approvals resolve FIFO)."""
        out = []
        for rid in self._interactions:
            part = self._pending_part(rid)
            if part is not None and part.interaction is not None:
                out.append(part.interaction.copy())
        return out

    def begin(self, status: Literal["streaming", "queued"] = "streaming") -> list[dict[str, Any]]:
        """Emit the ``message`` op now (e.g. right after ``prompt.submit``); ``queued`` when the server queued it.

        Idempotent: returns ``[]`` when the message was already emitted with that status.
        """
        if self._done or (self._started and self._msg.status == status):
            return []
        self._started = True
        self._msg.status = status
        self._sync()
        return [{"op": "message", "message": self._msg.to_dict()}]

    def apply(self, event: Event) -> list[dict[str, Any]]:
        """Fold one event; returns its change records in order (``[]`` for ignored events and after the end)."""
        if self._done:
            return []
        chunks = self._text_chunks
        if chunks is not None and event.type == "message.delta" and self._transform is None:
            # The hot path (most frames of a turn), inlined: one chunk append and one record, no lookups.
            text = event.payload.get("text" if event.dialect == "dashboard" else "delta")
            if text and type(text) is str:
                chunks.append(text)
                return [{"op": "append", "message_id": self.message_id, "part_id": self._text_id, "text": text}]
            return []
        handler = _HANDLERS[event.dialect].get(event.type)
        if self._started:
            changes = handler(self, event) if handler is not None else []
        else:
            changes = self.begin()
            if handler is not None:
                changes.extend(handler(self, event))
        if self._transform is not None:
            ctx = TransformContext(self.source, self.turn_id, self.message_id, changes)
            replaced = self._transform(event, ctx)
            if replaced is not None:
                # The folder's own state keeps following the default handling; the hook shapes what views see.
                return list(replaced)
        return changes

    def finish(self, status: str, error: str | None = None) -> list[dict[str, Any]]:
        """End the turn from outside (e.g. the connection dropped): same end-of-turn rules, then ``finish``."""
        if status not in _END_STATUSES:
            raise ValueError(f"finish status must be one of {sorted(_END_STATUSES)}, not {status!r}")
        if self._done:
            return []
        changes = self.begin() if not self._started else []
        changes.extend(self._end(status, None, error))
        return changes

    def answer(self, request_id: str, response: str) -> list[dict[str, Any]]:
        """Record the view's answer to a pending interaction, so views and history agree (sends nothing).

        A sudo password or secret value is recorded as ``"********"``. Returns ``[]`` when ``request_id`` is
        unknown or no longer pending.
        """
        part = self._pending_part(request_id)
        if part is None or self._done:
            return []
        if part.interaction is not None and part.interaction.kind in ("sudo", "secret"):
            response = REDACTED
        return self._resolve(part, "answered", response)

    # -- text ------------------------------------------------------------------------------------------------

    def _add_text(self, text: str) -> list[dict[str, Any]]:
        chunks = self._text_chunks
        if chunks is not None:
            chunks.append(text)
            return [{"op": "append", "message_id": self.message_id, "part_id": self._text_id, "text": text}]
        # A new text part. The server prefixes the first text after a tool round with "\n\n"
        # (run_agent.py:5158-5214; api-server-protocol.md §3 message.delta, dashboard-protocol.md §4.4 "Tool").
        # It is a separator for terminals, not content: history rows store the text without it, so stripping
        # leading whitespace until real text arrives keeps live and history identical and avoids empty parts.
        text = text.lstrip()
        if not text:
            return []
        pid = f"text:{self._segment}"
        part = Part(pid, "text", text)
        self._text_id = pid
        self._text_chunks = self._chunks[pid] = [text]
        self._has_text = True
        return self._add_part(part)

    def _final_text(self, final: str) -> list[dict[str, Any]]:
        """Reconcile the streamed text with the final reply text of message.complete / run.completed.

        Nothing streamed: the final text becomes the text part (a failed call, streaming off). The current text
        part is a proper prefix of it: deltas were lost (a reconnect; the API client's synthesized terminal event
        after a lost stream), so the part is patched to the full text. The last segment has no text and the
        final text appears nowhere yet: it is added. Otherwise the streamed text stands.
        """
        final = final.strip()
        if not final:
            return []
        if not self._has_text:
            return self._add_text(final)
        chunks = self._text_chunks
        if chunks is None:
            self._sync()
            streamed = "".join(p.text for p in self._msg.parts if p.kind == "text")
            return [] if final in streamed else self._add_text(final)
        current = "".join(chunks).rstrip()
        if len(final) <= len(current) or not final.startswith(current):
            return []
        chunks[:] = [final]
        part = self._parts[self._text_id]  # type: ignore[index]
        part.text = final
        return [self._patch(part, {"text": final})]

    def _add_reasoning(self, text: str) -> list[dict[str, Any]]:
        chunks = self._reasoning_chunks
        if chunks is not None:
            chunks.append(text)
            return [{"op": "append", "message_id": self.message_id, "part_id": self._reasoning_id, "text": text}]
        # Same rule as text: leading whitespace of a reasoning block is layout, and an all-blank start would
        # otherwise leave an empty part behind after the end-of-turn trim.
        text = text.lstrip()
        if not text:
            return []
        pid = f"reasoning:{self._segment}"
        part = Part(pid, "reasoning", text)
        self._reasoning_id = pid
        self._reasoning_chunks = self._chunks[pid] = [text]
        self._has_reasoning = True
        return self._add_part(part)

    def _sync(self) -> None:
        # Join pending chunks into Part.text (amortised: each chunk is joined once per snapshot).
        for pid, chunks in self._chunks.items():
            if len(chunks) > 1:
                joined = "".join(chunks)
                chunks[:] = [joined]
                self._parts[pid].text = joined

    # -- parts -----------------------------------------------------------------------------------------------

    def _add_part(self, part: Part) -> list[dict[str, Any]]:
        self._msg.parts.append(part)
        self._parts[part.id] = part
        return [{"op": "part", "message_id": self.message_id, "part": part.to_dict()}]

    def _add_tool(self, part: Part) -> list[dict[str, Any]]:
        # A tool part closes the segment: later reasoning/text go to reasoning:N+1 / text:N+1 (contract, "Ids").
        self._segment += 1
        self._text_id = self._text_chunks = None
        self._reasoning_id = self._reasoning_chunks = None
        if part.status == "running":
            self._running.append(part)
        return self._add_part(part)

    def _patch(self, part: Part, fields: dict[str, Any]) -> dict[str, Any]:
        return {"op": "patch", "message_id": self.message_id, "part_id": part.id, "fields": fields}

    def _complete_tool(
        self, part: Part, status: str, *, result: Any = ..., duration: float | None = None,
        arguments: Any = None, name: str | None = None,
    ) -> list[dict[str, Any]]:
        if part.status == "running":
            self._running.remove(part)
        fields: dict[str, Any] = {"status": status}
        part.status = status
        if name and name != part.name:
            part.name = fields["name"] = name
        if arguments is not None:
            part.arguments = fields["arguments"] = arguments
        if result is not ...:
            part.result = fields["result"] = result
        if duration is not None:
            part.duration = fields["duration"] = duration
        inter = part.interaction
        if inter is not None and inter.status == "pending":
            # The tool finished without our answer: the server stopped waiting (timeout, another client, or an
            # interrupt). Keep the buttons from staying live. An answered interaction stays answered.
            inter.status = "expired" if _timed_out(part.result) else "cancelled"
            fields["interaction"] = inter.to_dict()
        return [self._patch(part, fields)]

    # -- interactions ----------------------------------------------------------------------------------------

    def _attach(self, inter: Interaction, prefer_name: str | None = None) -> list[dict[str, Any]]:
        """Hang ``inter`` on the most recent running tool (of ``prefer_name`` first), else a synthetic part."""
        target = None
        candidates = [p for p in reversed(self._running) if p.interaction is None or p.interaction.status != "pending"]
        if prefer_name is not None:
            target = next((p for p in candidates if p.name == prefer_name), None)
        if target is None and candidates:
            target = candidates[0]
        if target is None:
            suffix = inter.request_id if inter.kind == "approval" else f"{inter.kind}-{inter.request_id}"
            part = Part(f"tool:{suffix}", "tool", name=inter.kind, status="running", interaction=inter)
            self._synthetic.add(part.id)
            self._interactions[inter.request_id] = part
            return self._add_tool(part)
        target.interaction = inter
        self._interactions[inter.request_id] = target
        return [self._patch(target, {"interaction": inter.to_dict()})]

    def _resolve(self, part: Part, status: str, response: str | None = None) -> list[dict[str, Any]]:
        inter = part.interaction
        assert inter is not None
        inter.status = status
        if response is not None:
            inter.response = response
        fields: dict[str, Any] = {"interaction": inter.to_dict()}
        if part.id in self._synthetic and part.status == "running":
            # A part made only for the interaction lives exactly as long as the interaction does.
            part.status = fields["status"] = "completed" if status == "answered" else "cancelled"
            self._running.remove(part)
        return [self._patch(part, fields)]

    def _on_approval_request(self, event: Event) -> list[dict[str, Any]]:
        # approval.request has no request id on either server; approvals resolve FIFO
        # (dashboard-protocol.md §4.2 and §8.6, api-server-protocol.md §3 "Approvals"), so number them.
        p = event.payload
        self._approval_count += 1
        rid = str(p["request_id"]) if event.dialect == "dashboard" and p.get("request_id") else f"approval-{self._approval_count}"
        if rid in self._interactions:  # a newer server's srq- id, already shown
            return []
        self._approval_fifo.append(rid)
        choices = _choices(p.get("choices"))
        inter = Interaction(
            "approval", rid, command=_str(p.get("command")), description=_str(p.get("description")),
            choices=list(DEFAULT_APPROVAL_CHOICES) if choices is None else choices,
        )
        return self._attach(inter)

    def _on_request(self, event: Event, kind: str) -> list[dict[str, Any]]:
        # clarify/sudo/secret.request carry their own request_id (dashboard-protocol.md §4.2).
        p = event.payload
        rid = p.get("request_id")
        rid = str(rid) if rid is not None else f"{kind}-{len(self._interactions) + 1}"
        if rid in self._interactions:  # a repeated request: the first one stands
            return []
        if kind == "secret":
            inter = Interaction(kind, rid, question=_str(p.get("prompt")), description=_str(p.get("env_var")))
        else:
            inter = Interaction(kind, rid, question=_str(p.get("question")), choices=_choices(p.get("choices")) or [])
            if kind == "clarify" and isinstance(questions := p.get("questions"), list) and questions:
                inter.questions = [dict(q) for q in questions if isinstance(q, Mapping)]
        return self._attach(inter, "clarify" if kind == "clarify" else None)

    def _on_expire(self, event: Event) -> list[dict[str, Any]]:
        # sudo.expire / secret.expire {request_id} after 120 s / 300 s (dashboard-protocol.md §4.2).
        rid = event.payload.get("request_id")
        part = None if rid is None else self._pending_part(str(rid))
        return [] if part is None else self._resolve(part, "expired")

    def _pending_part(self, request_id: str) -> Part | None:
        """The part holding the still-pending interaction ``request_id`` (a part's interaction can be replaced)."""
        part = self._interactions.get(request_id)
        inter = None if part is None else part.interaction
        if inter is None or inter.request_id != request_id or inter.status != "pending":
            return None
        return part

    # -- end of turn -----------------------------------------------------------------------------------------

    def _end(self, status: str, usage: Any, error: str | None) -> list[dict[str, Any]]:
        # Contract "End of turn": trim trailing whitespace of text/reasoning, cancel pending interactions, cancel
        # running tools unless the turn completed normally, then finish.
        self._sync()
        changes: list[dict[str, Any]] = []
        for part in self._msg.parts:
            if part.kind != "tool":
                text = part.text
                trimmed = text.rstrip()
                if trimmed != text:
                    part.text = trimmed
                    self._chunks[part.id][:] = [trimmed]
                    changes.append(self._patch(part, {"text": trimmed}))
                continue
            fields: dict[str, Any] = {}
            inter = part.interaction
            if inter is not None and inter.status == "pending":
                inter.status = "cancelled"
                fields["interaction"] = inter.to_dict()
                if part.id in self._synthetic and part.status == "running":
                    part.status = fields["status"] = "cancelled"
            if part.status == "running" and status != "complete":
                part.status = fields["status"] = "cancelled"
            if fields:
                changes.append(self._patch(part, fields))
        self._running.clear()
        msg = self._msg
        msg.status = status
        msg.usage = dict(usage) if isinstance(usage, Mapping) else None
        msg.error = error
        self._done = True
        changes.append(
            {
                "op": "finish", "message_id": self.message_id, "status": status,
                "usage": None if msg.usage is None else dict(msg.usage), "error": error,
            }
        )
        return changes


# --------------------------------------------------------------------------------------------------------------
# Dashboard dialect (dashboard-protocol.md §4). thinking.delta (spinner text), reasoning.available (a copy of the
# reply), message.interim (commentary; transform_output may show it), tool.generating and tool.output_risk have
# no handler on purpose: they are ignored by default but still reach transform_output.


def _d_message_start(f: TurnFolder, e: Event) -> list[dict[str, Any]]:
    # Idempotent while the turn is open: synthetic turns send it twice (§7 "Synthetic turns", §8.3). A queued
    # message becomes streaming here.
    return f.begin("streaming")


def _d_message_delta(f: TurnFolder, e: Event) -> list[dict[str, Any]]:
    text = e.payload.get("text")
    if not text or type(text) is not str:
        return []
    chunks = f._text_chunks
    if chunks is None:
        return f._add_text(text)
    chunks.append(text)  # the hot path, inlined: one append and one record per delta
    return [{"op": "append", "message_id": f.message_id, "part_id": f._text_id, "text": text}]


def _d_reasoning_delta(f: TurnFolder, e: Event) -> list[dict[str, Any]]:
    text = e.payload.get("text")
    return f._add_reasoning(text) if text and type(text) is str else []


def _d_tool_start(f: TurnFolder, e: Event) -> list[dict[str, Any]]:
    # tool.start {tool_id, name, context, args_text?}: context is the human preview, args_text (verbose mode
    # only) the raw arguments (§4.1).
    p = e.payload
    pid = f"tool:{p.get('tool_id')}"
    part = f._parts.get(pid)
    name, preview, args = _str(p.get("name")), _str(p.get("context")), _str(p.get("args_text"))
    if part is not None:  # a repeated start: refresh in place
        fields = {}
        for key, value in (("name", name), ("preview", preview), ("arguments", args)):
            if value is not None and getattr(part, key) != value:
                setattr(part, key, value)
                fields[key] = value
        return [f._patch(part, fields)] if fields else []
    return f._add_tool(Part(pid, "tool", name=name, status="running", arguments=args, preview=preview))


def _d_tool_complete(f: TurnFolder, e: Event) -> list[dict[str, Any]]:
    # tool.complete {tool_id, name, args, duration_s?, result, ...}; result is JSON-parsed when possible (§4.1).
    # It can arrive without tool.start (sent for inline diffs even with tool_progress off, §8.8).
    p = e.payload
    pid = f"tool:{p.get('tool_id')}"
    result = p.get("result")
    status = "error" if p.get("error") is True or _result_failed(result) else "completed"
    duration = _num(p.get("duration_s"))
    args = p.get("args")
    args = args if isinstance(args, (str, dict)) else None
    part = f._parts.get(pid)
    if part is None:
        return f._add_tool(
            Part(pid, "tool", name=_str(p.get("name")), status=status, arguments=args, result=result, duration=duration)
        )
    return f._complete_tool(part, status, result=result, duration=duration, arguments=args, name=_str(p.get("name")))


def _d_clarify(f: TurnFolder, e: Event) -> list[dict[str, Any]]:
    return f._on_request(e, "clarify")


def _d_sudo(f: TurnFolder, e: Event) -> list[dict[str, Any]]:
    return f._on_request(e, "sudo")


def _d_secret(f: TurnFolder, e: Event) -> list[dict[str, Any]]:
    return f._on_request(e, "secret")


def _d_message_complete(f: TurnFolder, e: Event) -> list[dict[str, Any]]:
    # message.complete {text, usage, status, reasoning?} (§4.1). Text and reasoning are only added when nothing
    # was streamed (e.g. a failed call: FAIL in ws_prompts.jsonl has text and no deltas).
    p = e.payload
    status = p.get("status")
    status = status if status in _COMPLETE_STATUSES else "complete"
    text = p.get("text")
    changes = f._final_text(text) if text and type(text) is str else []
    reasoning = p.get("reasoning")
    if not f._has_reasoning and reasoning and type(reasoning) is str:
        changes.extend(f._add_reasoning(reasoning))
    # A failed turn's text is the error message (compute-host crash: {text:"Error: …", status:"error"}).
    error = (text.strip() or None) if status == "error" and type(text) is str else None
    changes.extend(f._end(status, p.get("usage"), error))
    return changes


def _d_error(f: TurnFolder, e: Event) -> list[dict[str, Any]]:
    # error {message, reason?} ends the turn without message.complete (§4.1, §8.5).
    message = _str(e.payload.get("message")) or "error"
    return f._end("error", None, message)


_DASHBOARD: dict[str, Callable[[TurnFolder, Event], list[dict[str, Any]]]] = {
    "message.start": _d_message_start,
    "message.delta": _d_message_delta,
    "reasoning.delta": _d_reasoning_delta,
    "tool.start": _d_tool_start,
    "tool.complete": _d_tool_complete,
    "approval.request": TurnFolder._on_approval_request,
    "clarify.request": _d_clarify,
    "sudo.request": _d_sudo,
    "secret.request": _d_secret,
    "sudo.expire": TurnFolder._on_expire,
    "secret.expire": TurnFolder._on_expire,
    "request.cancel": on_request_cancel,
    "message.complete": _d_message_complete,
    "error": _d_error,
}


# --------------------------------------------------------------------------------------------------------------
# API Server run dialect (api-server-protocol.md §3 "Where events come from"). reasoning.available is the reply
# text again, not reasoning: ignored.


def _r_message_delta(f: TurnFolder, e: Event) -> list[dict[str, Any]]:
    text = e.payload.get("delta")
    if not text or type(text) is not str:
        return []
    chunks = f._text_chunks
    if chunks is None:
        return f._add_text(text)
    chunks.append(text)
    return [{"op": "append", "message_id": f.message_id, "part_id": f._text_id, "text": text}]


def _r_tool_started(f: TurnFolder, e: Event) -> list[dict[str, Any]]:
    # tool.started {tool, preview}: no id on the wire, so tools are numbered run-1, run-2, ... (contract, "Ids").
    p = e.payload
    f._run_tool_count += 1
    name = _str(p.get("tool"))
    part = Part(f"tool:run-{f._run_tool_count}", "tool", name=name, status="running", preview=_str(p.get("preview")))
    f._run_tools.setdefault(name or "", deque()).append(part)
    return f._add_tool(part)


def _r_tool_completed(f: TurnFolder, e: Event) -> list[dict[str, Any]]:
    # tool.completed {tool, duration, error: bool}: matched to the oldest running tool of that name.
    p = e.payload
    name = _str(p.get("tool"))
    status = "error" if p.get("error") else "completed"
    duration = _num(p.get("duration"))
    queue = f._run_tools.get(name or "")
    while queue:
        part = queue.popleft()
        if part.status == "running":
            return f._complete_tool(part, status, duration=duration)
    f._run_tool_count += 1
    return f._add_tool(Part(f"tool:run-{f._run_tool_count}", "tool", name=name, status=status, duration=duration))


def _r_approval_responded(f: TurnFolder, e: Event) -> list[dict[str, Any]]:
    # approval.responded {choice, resolved}: the server resolved the oldest `resolved` approvals (FIFO, §3).
    # One the view already answered through folder.answer() keeps its recorded answer.
    p = e.payload
    resolved = p.get("resolved")
    count = resolved if type(resolved) is int and resolved > 0 else 1
    choice = _str(p.get("choice"))
    changes: list[dict[str, Any]] = []
    while count and f._approval_fifo:
        count -= 1
        rid = f._approval_fifo.popleft()
        part = f._pending_part(rid)
        if part is not None:
            changes.extend(f._resolve(part, "answered", choice))
    return changes


def _r_run_completed(f: TurnFolder, e: Event) -> list[dict[str, Any]]:
    # run.completed {output, usage}: output is the final text, used when nothing was streamed.
    p = e.payload
    output = p.get("output")
    changes = f._final_text(output) if output and type(output) is str else []
    changes.extend(f._end("complete", p.get("usage"), None))
    return changes


def _r_run_failed(f: TurnFolder, e: Event) -> list[dict[str, Any]]:
    return f._end("error", None, _str(e.payload.get("error")) or "run failed")


def _r_run_cancelled(f: TurnFolder, e: Event) -> list[dict[str, Any]]:
    return f._end("cancelled", None, None)


_RUN: dict[str, Callable[[TurnFolder, Event], list[dict[str, Any]]]] = {
    "message.delta": _r_message_delta,
    "tool.started": _r_tool_started,
    "tool.completed": _r_tool_completed,
    "approval.request": TurnFolder._on_approval_request,
    "approval.responded": _r_approval_responded,
    "run.completed": _r_run_completed,
    "run.failed": _r_run_failed,
    "run.cancelled": _r_run_cancelled,
    "run.interrupted": on_run_interrupted,
}

_HANDLERS: dict[str, dict[str, Callable[[TurnFolder, Event], list[dict[str, Any]]]]] = {
    "dashboard": _DASHBOARD,
    "run": _RUN,
}


# --------------------------------------------------------------------------------------------------------------
# History (dashboard-protocol.md §6, GET /api/sessions/{id}/messages; seed 000 "历史")


class HistoryTurn(NamedTuple):
    """One turn rebuilt from REST rows: its id, the user's text (None before the first user row), its events."""

    turn_id: str
    user_text: str | None
    events: list[Event]


def _content_text(content: Any) -> str:
    # `content` is a string, or decoded JSON for structured content (§6): keep the text parts.
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        out = []
        for item in content:
            if isinstance(item, str):
                out.append(item)
            elif isinstance(item, Mapping) and isinstance(item.get("text"), str):
                out.append(item["text"])
        return "\n".join(out)
    if isinstance(content, Mapping) and isinstance(content.get("text"), str):
        return content["text"]
    return json.dumps(content, ensure_ascii=False)


def _loads_or_raw(value: Any) -> Any:
    # The live tool.complete result is "the tool output parsed as JSON when possible, otherwise a string"
    # (§4.1); history keeps the raw string, so parse it the same way to get equal parts.
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def _tool_calls(value: Any) -> list[Mapping[str, Any]]:
    # tool_calls is already-decoded JSON on 0.19.0 (§6, §8.12); the seed shows a JSON string: accept both.
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return []
    return [c for c in value if isinstance(c, Mapping)] if isinstance(value, list) else []


def history_events(rows: Iterable[Mapping[str, Any]], *, session_id: str | None = None) -> list[HistoryTurn]:
    """REST message rows -> turns of synthesized events, shaped like live ones (seed 000 "历史").

    Each user row starts a turn ``hermes-row:<user row id>``. Per assistant row: one ``reasoning.delta`` and one
    ``message.delta`` with the whole content, then ``tool.start`` + ``tool.complete`` per tool call (tool_id = the
    call id, result from the matching tool row); one ``message.complete`` closes each turn. System rows are
    skipped; rows before the first user row form a turn named after their first row.
    """
    rows = list(rows)
    tool_rows: dict[str, Mapping[str, Any]] = {}
    for row in rows:
        if row.get("role") == "tool" and row.get("tool_call_id"):
            tool_rows[str(row["tool_call_id"])] = row
    used: set[str] = set()
    turns: list[HistoryTurn] = []
    events: list[Event] | None = None
    last_text = ""

    def close() -> None:
        if events is not None:
            events.append(Event("message.complete", {"text": last_text, "status": "complete"}, session_id))

    def tool_events(call_id: str, name: Any, args: Any, result_row: Mapping[str, Any] | None) -> None:
        assert events is not None
        name = name if isinstance(name, str) else None
        events.append(Event("tool.start", {"tool_id": call_id, "name": name}, session_id))
        payload: dict[str, Any] = {"tool_id": call_id, "name": name, "args": args}
        payload["result"] = None if result_row is None else _loads_or_raw(result_row.get("content"))
        events.append(Event("tool.complete", payload, session_id))

    for row in rows:
        role = row.get("role")
        if role == "user":
            close()
            events = []
            last_text = ""
            turns.append(HistoryTurn(f"hermes-row:{row.get('id')}", _content_text(row.get("content")), events))
            continue
        if role not in ("assistant", "tool"):
            continue
        if events is None:  # a segment that starts mid-conversation (e.g. a compression tip)
            events = []
            turns.append(HistoryTurn(f"hermes-row:{row.get('id')}", None, events))
        if role == "tool":
            call_id = str(row.get("tool_call_id") or f"row-{row.get('id')}")
            if call_id not in used:  # a result whose call is not in this segment
                used.add(call_id)
                tool_events(call_id, row.get("tool_name"), None, row)
            continue
        reasoning = row.get("reasoning") or row.get("reasoning_content")
        if isinstance(reasoning, str) and reasoning:
            events.append(Event("reasoning.delta", {"text": reasoning}, session_id))
        text = _content_text(row.get("content"))
        if text:
            events.append(Event("message.delta", {"text": text}, session_id))
            last_text = text
        for call in _tool_calls(row.get("tool_calls")):
            call_id = str(call.get("id") or call.get("call_id") or "")
            if not call_id:
                continue
            fn = call.get("function")
            fn = fn if isinstance(fn, Mapping) else {}
            result_row = tool_rows.get(call_id)
            name = fn.get("name") or (result_row.get("tool_name") if result_row is not None else None)
            used.add(call_id)
            tool_events(call_id, name, _loads_or_raw(fn.get("arguments")), result_row)
    close()
    return turns


def fold_history(
    rows: Iterable[Mapping[str, Any]],
    *,
    session_id: str | None = None,
    transform_output: TransformOutput | None = None,
) -> list[Message]:
    """REST rows -> user and assistant messages in order, through the same :class:`TurnFolder` as live turns.

    A turn whose assistant side left no rows (e.g. a failed call) contributes only its user message.
    """
    messages: list[Message] = []
    for turn_id, user_text, events in history_events(rows, session_id=session_id):
        if user_text is not None:
            messages.append(user_message(turn_id, user_text))
        folder = TurnFolder(turn_id, source="history", transform_output=transform_output)
        for event in events:
            folder.apply(event)
        msg = folder._msg  # ended by its message.complete, so already joined; the folder is discarded
        if msg.parts:
            messages.append(msg)
    return messages


# --------------------------------------------------------------------------------------------------------------
# Applying change records


def _find_part(message: dict[str, Any], part_id: str) -> dict[str, Any]:
    for part in message["parts"]:
        if part["id"] == part_id:
            return part
    raise KeyError(f"no part {part_id!r} in message {message['id']!r}")


def apply_changes(messages: dict[str, dict[str, Any]], changes: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """Apply change records in order to ``{message id: message dict}`` (in place; also returned).

    Values are copied, so the records stay untouched. Consecutive appends to one part are joined once.
    Raises ``KeyError`` for an unknown message or part and ``ValueError`` for an unknown op.
    """
    pending: list[str] = []
    target: dict[str, Any] | None = None
    for change in changes:
        op = change["op"]
        if op == "append":
            part = _find_part(messages[change["message_id"]], change["part_id"])
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
            _find_part(messages[change["message_id"]], change["part_id"]).update(copy.deepcopy(dict(change["fields"])))
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
