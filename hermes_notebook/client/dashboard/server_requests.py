"""Server -> client JSON-RPC requests of newer Dashboards, mapped onto the turn model's prompt events.

Newer Hermes (``desktop_contract`` >= 7) no longer sends ``approval.request``/``clarify.request``/... events:
a blocking prompt arrives as a JSON-RPC *request* ``{"id": "srq-…", "method": "approval", "params": {...}}``
and is answered with a result frame ``{"id": "srq-…", "result": {...}}``. The server only sends them to a
client that advertised ``client.capabilities {"server_requests": true}`` on this socket; otherwise it
withdraws every prompt at once.

So the rest of the package keeps one shape, each request becomes the 0.19.0-style prompt event the turn model
already folds (with the ``srq-`` id as the interaction's ``request_id``), and the view's answer string becomes
the result object the server expects. Pure functions: no I/O here.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ...errors import HermesUsageError
from ...turns.events import Event

__all__ = [
    "PROMPT_METHODS",
    "RECOMMENDED_SUFFIX",
    "ServerRequest",
    "answer_result",
    "clean_choice",
    "prompt_event",
]

#: Request methods that become an :class:`~hermes_notebook.turns.Interaction`; any other is refused (-32601).
PROMPT_METHODS = frozenset({"approval", "clarify", "sudo", "secret"})
#: Display suffix the server adds to a clarify question's first choice; never part of an answer.
RECOMMENDED_SUFFIX = " (Recommended)"


@dataclass(frozen=True, slots=True)
class ServerRequest:
    """One open server request: its ``srq-`` id, method and params (kept until answered or cancelled)."""

    id: str
    method: str
    params: Mapping[str, Any]

    @property
    def session_id(self) -> str:
        """The live session id the request belongs to ("" when the server sent none)."""
        sid = self.params.get("session_id")
        return sid if isinstance(sid, str) else ""


def clean_choice(choice: object) -> str:
    """A clarify choice as the user should see and answer it (the " (Recommended)" marker stripped)."""
    text = str(choice)
    return text[: -len(RECOMMENDED_SUFFIX)] if text.endswith(RECOMMENDED_SUFFIX) else text


def _questions(params: Mapping[str, Any]) -> list[dict[str, Any]]:
    raw = params.get("questions")
    out: list[dict[str, Any]] = []
    if not isinstance(raw, Sequence) or isinstance(raw, str):
        return out
    for index, item in enumerate(raw):
        if not isinstance(item, Mapping):
            continue
        choices = item.get("choices")
        out.append(
            {
                "qid": str(item.get("qid") or f"q{index}"),
                "question": str(item.get("question") or ""),
                "choices": [clean_choice(c) for c in choices] if isinstance(choices, list) else [],
                "multi_select": bool(item.get("multi_select")),
            }
        )
    return out


def prompt_event(request: ServerRequest) -> Event | None:
    """The prompt event the turn model folds for ``request``; None for methods we do not answer."""
    p = request.params
    method = request.method
    payload: dict[str, Any]
    if method == "approval":
        payload = {
            "request_id": request.id,
            "command": p.get("command"),
            "description": p.get("description"),
            "choices": p.get("choices"),
        }
    elif method == "clarify":
        questions = _questions(p)
        first = questions[0] if questions else {"question": p.get("question"), "choices": []}
        payload = {"request_id": request.id, "question": first["question"], "choices": first["choices"]}
        if len(questions) > 1 or (questions and questions[0]["multi_select"]):
            payload["questions"] = questions
        locked = p.get("answers")
        if isinstance(locked, Mapping) and locked:
            payload["answers"] = dict(locked)
    elif method == "sudo":
        command = p.get("command")
        payload = {
            "request_id": request.id,
            "question": "Password for sudo"
            + (f": {command}" if isinstance(command, str) and command else ""),
        }
    elif method == "secret":
        payload = {"request_id": request.id, "prompt": p.get("prompt"), "env_var": p.get("env_var")}
    else:
        return None
    return Event(f"{method}.request", payload, request.session_id or None)


def answer_result(request: ServerRequest, response: str) -> dict[str, Any]:
    """The ``result`` object answering ``request`` with the view's ``response`` string.

    Clarify: a JSON object string ``{"q0": "B", "q1": ["X", "Z"], "q2": null}`` answers several questions
    (lists are multi-select answers, null skips); any other string answers the first question and skips the
    rest. Approval: the choice; sudo/secret: the value (``""`` skips).
    """
    method = request.method
    if method == "approval":
        return {"choice": response}
    if method in ("sudo", "secret"):
        return {"value": response}
    if method == "clarify":
        questions = _questions(request.params) or [{"qid": "q0", "multi_select": False}]
        qids = [q["qid"] for q in questions]
        given: Mapping[str, Any] | None = None
        if response.startswith("{"):
            try:
                parsed = json.loads(response)
            except ValueError:
                parsed = None
            if isinstance(parsed, Mapping):
                unknown = sorted(set(parsed) - set(qids))
                if unknown:
                    raise HermesUsageError(
                        f"clarify answer names unknown question ids {unknown}; expected {qids}"
                    )
                given = parsed
        if given is None:
            given = {qids[0]: response}
        answers: dict[str, Any] = {}
        for q in questions:
            value = given.get(q["qid"])
            if isinstance(value, list):
                value = json.dumps([clean_choice(v) for v in value])
            elif value is not None:
                value = clean_choice(value)
            answers[q["qid"]] = value
        return {"answers": answers}
    raise HermesUsageError(f"cannot answer a {method!r} server request")
