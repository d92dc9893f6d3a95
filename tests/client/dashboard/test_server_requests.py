"""Replays captured newer-Dashboard transcripts through the pure pieces, with no socket: server requests
become the turn model's interactions, the view's answers become the result frames the real client sent, and
``request.cancel`` ends an interaction with its reason."""

from __future__ import annotations

import json
from typing import Any

import pytest

from hermes_notebook.client.dashboard.server_requests import (
    ServerRequest,
    answer_result,
    clean_choice,
    prompt_event,
)
from hermes_notebook.errors import HermesUsageError
from hermes_notebook.turns import TurnFolder
from hermes_notebook.turns.events import Event
from tests.helpers import FIXTURES as TEST_FIXTURES

FIXTURES = TEST_FIXTURES / "newer"

# transcript -> (what the view answers, final interaction status, cancel reason)
CASES: dict[str, tuple[str | None, str, str | None]] = {
    "newer_approval_once": ("once", "answered", None),
    "newer_approval_deny": ("deny", "answered", None),
    "newer_clarify_answer": (json.dumps({"q0": "B", "q1": ["X", "Z"], "q2": "Ann"}), "answered", None),
    "newer_sudo": ("<TOKEN>", "answered", None),
    "newer_secret": ("<TOKEN>", "answered", None),
    "newer_clarify_timeout": (None, "expired", "timeout"),
    "newer_approval_interrupt": (None, "cancelled", "interrupted"),
}


def _frames(name: str) -> list[tuple[str, dict[str, Any]]]:
    rows = [
        json.loads(line) for line in (FIXTURES / f"{name}.jsonl").read_text().splitlines() if line.strip()
    ]
    return [
        (r["dir"], r["frame"]) for r in rows if r["dir"] in ("send", "recv") and isinstance(r["frame"], dict)
    ]


@pytest.mark.parametrize("name", sorted(CASES))
def test_transcript_replays_to_one_interaction_and_the_captured_answer(name: str) -> None:
    """Each capture folds to one interaction; our answer equals the captured result frame; the end state and
    cancel reason match what the server did."""
    response, final_status, reason = CASES[name]
    folder = TurnFolder("t1")
    requests: dict[str, ServerRequest] = {}
    answers_checked = 0
    for direction, frame in _frames(name):
        method = frame.get("method")
        if direction == "recv" and method == "event":
            event = Event.from_dashboard_frame(frame)
            if event is not None and event.session_id:
                folder.apply(event)
        elif direction == "recv" and method is not None and "id" in frame:
            request = ServerRequest(frame["id"], method, frame["params"])
            requests[request.id] = request
            event = prompt_event(request)
            assert event is not None and event.payload["request_id"] == request.id
            assert folder.apply(event), "the prompt must show as an interaction"
            assert [i.request_id for i in folder.pending()] == [request.id]
        elif direction == "send" and frame.get("id") in requests:
            assert response is not None
            # The client answers from the view's string; it must equal what the capturing client sent.
            assert answer_result(requests[frame["id"]], response) == frame["result"]
            assert folder.answer(frame["id"], response)
            answers_checked += 1
    assert len(requests) == 1 and answers_checked == (1 if response is not None else 0)
    message = folder.message
    assert message.status in ("complete", "interrupted")
    inter = next(p.interaction for p in message.parts if p.interaction is not None)
    assert (inter.status, inter.reason) == (final_status, reason)
    if inter.kind in ("sudo", "secret"):
        assert inter.response == "********"  # the value is never kept


def test_clarify_card_lists_every_question_with_clean_choices() -> None:
    """A three-question clarify becomes one interaction listing every question, " (Recommended)" stripped."""
    frame = next(f for d, f in _frames("newer_clarify_answer") if f.get("method") == "clarify")
    event = prompt_event(ServerRequest(frame["id"], "clarify", frame["params"]))
    assert event is not None
    folder = TurnFolder("t1")
    folder.apply(event)
    (inter,) = folder.pending()
    assert inter.questions == [
        {"qid": "q0", "question": "Pick one", "choices": ["A", "B"], "multi_select": False},
        {"qid": "q1", "question": "Pick any", "choices": ["X", "Y", "Z"], "multi_select": True},
        {"qid": "q2", "question": "Your name?", "choices": [], "multi_select": False},
    ]
    assert (inter.question, inter.choices) == ("Pick one", ["A", "B"])
    assert inter.to_dict()["questions"][1]["choices"] == ["X", "Y", "Z"]


def test_clarify_answers_plain_text_and_refuses_unknown_questions() -> None:
    """A plain answer goes to the first question (others skipped); unknown qids raise HermesUsageError."""
    frame = next(f for d, f in _frames("newer_clarify_answer") if f.get("method") == "clarify")
    request = ServerRequest(frame["id"], "clarify", frame["params"])
    assert answer_result(request, "A (Recommended)") == {"answers": {"q0": "A", "q1": None, "q2": None}}
    with pytest.raises(HermesUsageError, match="unknown question ids"):
        answer_result(request, json.dumps({"q9": "x"}))
    assert clean_choice("B") == "B"


def test_unhandled_request_methods_have_no_prompt_event() -> None:
    """Request methods other than the four prompts map to nothing and cannot be answered."""
    assert prompt_event(ServerRequest("srq-1", "theme.pick", {"session_id": "s"})) is None
    with pytest.raises(HermesUsageError):
        answer_result(ServerRequest("srq-1", "theme.pick", {}), "x")


def test_the_handshake_transcript_advertises_the_prompt_methods() -> None:
    """The capture's client.capabilities reply lists what the server may ask; our four are among them."""
    frames = _frames("newer_handshake")
    ready = next(
        f for d, f in frames if f.get("method") == "event" and f["params"]["type"] == "gateway.ready"
    )
    assert len(ready["params"]["payload"]["replay_epoch"]) == 32
    reply = next(
        f
        for d, f in frames
        if d == "recv" and isinstance(f.get("result"), dict) and "server_requests" in f["result"]
    )
    assert {"approval", "clarify", "sudo", "secret"} <= set(reply["result"]["server_requests"])
