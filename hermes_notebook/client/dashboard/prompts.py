"""Prompts the server asks (approval, clarify, sudo, secret) and how each answer goes back (no I/O).

A newer Dashboard asks by server request and takes the answer as that request's result frame (or, for a
multi-question clarify, as acknowledged ``clarify.lock`` calls); 0.19.0 asks by event and takes ``*.respond``
RPCs (docs/protocol/dashboard.md §3.1, §4.2; docs/protocol/dashboard-newer.md §1, §2.3). :class:`Prompts`
keeps the open server requests and decides which way an answer goes (an :class:`Answer`); the channel sends
it. The pure mapping (request -> prompt event, answer string -> result object) is in :mod:`.server_requests`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from ...errors import HermesUsageError
from ...turns.events import Event
from .routing import SessionState
from .rpc import encode_result
from .server_requests import PROMPT_METHODS, ServerRequest, answer_result, prompt_event

__all__ = ["RESPOND_METHODS", "RESPOND_VALUE_KEYS", "Answer", "Prompts"]

# 0.19.0: answers to blocking prompts and the parameter that carries the answer
# (docs/protocol/dashboard.md §3.1, §4.2).
RESPOND_METHODS = {"clarify": "clarify.respond", "sudo": "sudo.respond", "secret": "secret.respond"}
RESPOND_VALUE_KEYS = {
    "clarify.respond": "answer",
    "sudo.respond": "password",
    "secret.respond": "value",
    "terminal.read.respond": "text",
}


@dataclass(frozen=True, slots=True)
class Answer:
    """One answer and the way it goes out: ``method`` None is a newer server's result frame (maybe sent as
    ``clarify.lock`` calls), else the 0.19.0 RPC with ``params``. Once it is on the wire the core records it
    on ``session``'s turn (None: whichever open turn holds ``request_id``)."""

    request_id: str
    response: str
    method: str | None = None
    params: Mapping[str, Any] | None = None
    session: SessionState | None = None


class Prompts:
    """The open server requests of one connection (newer Dashboards) and the features they come with."""

    def __init__(self) -> None:
        self.open: dict[str, ServerRequest] = {}  # srq id -> request, until answered or withdrawn
        self.methods: frozenset[str] | None = None  # client.capabilities reply; None = 0.19.0
        self.clarify_locks: bool | None = None  # clarify.lock on this socket: None untried, False refused

    def new_socket(self) -> None:
        """Features belong to the socket they were seen on; open requests survive (a resume restores them)."""
        self.methods = None
        self.clarify_locks = None

    def set_capabilities(self, result: object) -> None:
        """The ``client.capabilities`` reply: which server request methods this server sends."""
        methods = result.get("server_requests") if isinstance(result, Mapping) else None
        self.methods = frozenset(
            m for m in (methods if isinstance(methods, list) else PROMPT_METHODS) if isinstance(m, str)
        )

    # --- requests in ----------------------------------------------------------------------------------------

    def take(self, request_id: object, method: object, params: object) -> tuple[ServerRequest, Event] | None:
        """A server request we can show: kept open, with the prompt event it becomes; None means refuse it."""
        if isinstance(request_id, str) and isinstance(method, str) and method in PROMPT_METHODS:
            request = ServerRequest(request_id, method, params if isinstance(params, Mapping) else {})
            event = prompt_event(request)
            if event is not None:
                self.open[request_id] = request
                return request, event
        return None

    def withdraw(self, request_id: object) -> None:
        """``request.cancel``: the server settled the request (a timeout); it can no longer be answered."""
        self.open.pop(str(request_id), None)

    def settle_session(self, live_id: str) -> None:
        """Drop the open prompts of a session whose turn ended (settled elsewhere, without a cancel)."""
        for request_id in [k for k, r in self.open.items() if r.session_id == live_id]:
            del self.open[request_id]

    def of_session(self, live_id: str) -> Iterator[Event]:
        """Prompt events of the requests open for ``live_id`` (shown when its session is bound)."""
        for request in [r for r in self.open.values() if r.session_id == live_id]:
            event = prompt_event(request)
            if event is not None:
                yield event

    def restore(self, entries: object) -> list[Event]:
        """Prompts still open on the server (a resume's ``open_requests``): answerable again by their original
        id."""
        events: list[Event] = []
        for entry in entries if isinstance(entries, list) else []:
            if not isinstance(entry, Mapping):
                continue
            request_id, method, params = entry.get("id"), entry.get("method"), entry.get("params")
            if not (isinstance(request_id, str) and isinstance(method, str) and method in PROMPT_METHODS):
                continue
            request = self.open[request_id] = ServerRequest(
                request_id, method, params if isinstance(params, Mapping) else {}
            )
            event = prompt_event(request)
            if event is not None:
                events.append(event)  # the turn model ignores an id it already shows
        return events

    # --- answers out
    # -----------------------------------------------------------------------------------------

    def plan(self, session: SessionState, request_id: str, response: str) -> Answer:
        """How to answer a pending interaction of ``session``; raises :class:`HermesUsageError` for an answer
        the server would refuse (not one of an approval's choices, or not its oldest approval on 0.19.0)."""
        found = session.find_interaction(request_id)
        if found is None:
            raise HermesUsageError(
                f"no pending interaction {request_id!r} in session {session.ref.stored_id}"
            )
        inter = found[0]
        if inter.kind == "approval" and inter.choices and response not in inter.choices:
            raise HermesUsageError(f"{response!r} is not one of the approval's choices {inter.choices}")
        if request_id in self.open:
            return Answer(request_id, response, session=session)
        if inter.kind == "approval":
            oldest = session.oldest_approval() or inter
            if oldest.request_id != request_id:
                raise HermesUsageError(
                    f"answer {oldest.request_id} first: approval.respond resolves the oldest pending approval"
                )
            params = {"session_id": session.ref.live_id, "choice": response}
            return Answer(request_id, response, "approval.respond", params, session)
        method = RESPOND_METHODS.get(inter.kind)
        if method is None:
            raise HermesUsageError(f"cannot answer a {inter.kind!r} interaction")
        return Answer(
            request_id,
            response,
            method,
            {"request_id": request_id, RESPOND_VALUE_KEYS[method]: response},
            session,
        )

    def plan_request(self, method: str, params: Mapping[str, Any]) -> Answer | None:
        """A raw ``*.respond`` call that answers a prompt (marked answered when sent); None for any other
        call.

        A newer Dashboard no longer has those RPCs (-32601), so an answer to one of its open requests goes
        back as the request's result frame instead.
        """
        value_key = RESPOND_VALUE_KEYS.get(method)
        if value_key is None or "request_id" not in params:
            return None
        request_id, value = str(params["request_id"]), str(params.get(value_key, ""))
        if request_id in self.open:
            return Answer(request_id, value)
        return Answer(request_id, value, method, params)

    def answer_frame(self, request_id: str, response: str) -> str:
        """The result frame answering an open server request with the view's ``response`` string."""
        request = self.open.get(request_id)
        if request is None:
            raise HermesUsageError(f"no pending interaction {request_id!r}")
        return encode_result(request_id, answer_result(request, response))

    def lock_params(self, request_id: str, response: str) -> list[dict[str, Any]] | None:
        """``clarify.lock`` params answering a multi-question clarify one question at a time, or None when the
        answer goes as one result frame (another prompt, one question, or a server without locks).

        Locks are acknowledged and kept by the server across a drop (docs/protocol/dashboard-newer.md §2.3);
        a result frame gets no reply, so an answer lost to a drop would vanish unnoticed. The last lock
        resolves the request.
        """
        request = self.open.get(request_id)
        if (
            request is None
            or request.method != "clarify"
            or self.methods is None
            or self.clarify_locks is False
        ):
            return None
        questions = request.params.get("questions")
        if not isinstance(questions, list) or len(questions) < 2:
            return None
        answers = answer_result(request, response)["answers"]
        return [
            {"request_id": request_id, "question_id": qid, "answer": value} for qid, value in answers.items()
        ]

    def locks_refused(self) -> None:
        """The server has no ``clarify.lock`` (-32601): answers go as result frames from now on."""
        self.clarify_locks = False

    def lock_taken(self, request_id: str, result: object) -> None:
        """One ``clarify.lock`` was acknowledged; ``expired`` means the request settled on the server first
        (timed out, or answered by another client) and raises :class:`HermesUsageError`."""
        self.clarify_locks = True
        if isinstance(result, Mapping) and result.get("status") == "expired":
            self.open.pop(request_id, None)
            raise HermesUsageError(
                f"clarify {request_id} was already settled by the server (it expired or was answered "
                "elsewhere); the answer was not taken"
            )
