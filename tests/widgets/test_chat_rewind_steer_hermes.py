"""The chat's Undo with files, its subagent Steer/Stop and ``hermes.steer`` on an API Server run, on the real
servers.

Undo with files: the view asks ``turn_files`` for the last reply; the newer server names the files the turn's
checkpoint holds and the undo puts them back; 0.19.0 cannot rewind, so the question is refused and the view
offers nothing (no notice: nobody clicked). ``hermes.steer`` on a turn running ``via="api"`` goes to
``POST /v1/runs/{id}/steer`` (newer) or is refused in one line (0.19.0 has no such route). A running subagent
(the scripted model's ``DELEGATE RUN sleep``) gets Stop on both servers and Steer on the newer one only.
``hermes.branch(at=..., files=True)`` puts back the files changed after that message (newer; 0.19.0 cannot
branch: refused before anything changes).
"""

from __future__ import annotations

import time
import uuid
from typing import Any

import pytest

from hermes_notebook._demo.local_hermes import LocalHermes
from hermes_notebook.errors import HermesUsageError
from hermes_notebook.turns.steering import steer_marker
from tests.helpers import eventually

pytestmark = pytest.mark.both_servers


def next_second() -> None:
    """Start the next turn in a fresh second: Hermes times checkpoints in whole seconds, so a checkpoint taken
    in the second a turn starts (the scripted model's turns take well under one) counts as that turn's
    (turns/checkpoints.py ``checkpoint_for_turn``; the README's rollback notes say so)."""
    time.sleep(1.1)


def _chat(hermes: LocalHermes) -> tuple[Any, list[dict[str, Any]]]:
    from hermes_notebook.widgets import Chat

    chat = Chat(hermes.settings())
    sent: list[dict[str, Any]] = []
    chat.send = lambda content, buffers=None: sent.append(content)  # type: ignore[method-assign]
    chat.wait_ready(30)
    return chat, sent


def _settled(chat: Any) -> dict[str, Any]:
    eventually(
        lambda: (
            not chat.busy
            and any(m["role"] == "assistant" and m.get("status") == "complete" for m in chat.snapshot())
        ),
        90,
        "the reply",
    )
    return [m for m in chat.snapshot() if m["role"] == "assistant"][-1]


def _answer(sent: list[dict[str, Any]], request: str) -> dict[str, Any]:
    eventually(lambda: any(m.get("request") == request for m in sent), 30, "the answer")
    return next(m for m in sent if m.get("request") == request)


def test_the_chats_undo_with_files_names_the_files_and_puts_them_back(
    hermes: LocalHermes, hermes_server: str
) -> None:
    """``turn_files`` names the file the last turn edited (newer) and ``undo`` with ``files`` restores it and
    says which; on 0.19.0 the question is refused (the choice is not offered) and nothing changes."""
    target = hermes.workdir / f"chat-undo-{uuid.uuid4().hex[:8]}.txt"
    target.write_text("alpha\n")
    next_second()
    chat, sent = _chat(hermes)
    try:
        chat._dispatch(chat, {"type": "send", "text": f"EDIT {target} alpha ALPHA", "images": []}, [])
        reply = _settled(chat)
        assert target.read_text() == "ALPHA\n"
        chat._dispatch(chat, {"type": "turn_files", "request": "q1", "message_id": reply["id"]}, [])
        answered = _answer(sent, "q1")
        if hermes_server != "newer":
            assert answered["type"] == "error" and "not offered" in answered["message"]
            assert chat.notice == "" and target.read_text() == "ALPHA\n"
            return
        assert answered["type"] == "turn_files" and answered["message_id"] == reply["id"]
        assert [f["path"] for f in answered["files"]] == [target.name]
        assert answered["files"][0]["added"] == 1 and answered["files"][0]["removed"] == 1
        chat._dispatch(chat, {"type": "undo", "message_id": reply["id"], "files": True}, [])
        eventually(lambda: "Put back 1 file(s)" in chat.notice, 60, "the undo's notice")
        assert target.name in chat.notice and target.read_text() == "alpha\n"
        assert not [m for m in chat.snapshot() if m["role"] == "assistant"]
    finally:
        chat.close()


def test_hermes_steer_reaches_a_turn_running_through_the_api_server(
    hermes_nb: Any, scripted_model: Any, hermes_server: str
) -> None:
    """While a ``via="api"`` turn runs its tool, ``hermes.steer`` is taken by the run, seen by the model and
    marked in the reply (newer); 0.19.0 refuses it as not offered and the run ends as it would have."""
    handle = hermes_nb.start("RUN sleep 3 && echo ran", new=True, via="api")
    eventually(lambda: any(p["kind"] == "tool" for p in handle.parts), 60, "the tool part")
    guidance = f"also mention APISTEER-{uuid.uuid4().hex[:8]}"
    if hermes_server != "newer":
        with pytest.raises(HermesUsageError, match="steering a run is not offered by this Hermes"):
            hermes_nb.steer(guidance)
        assert handle.wait(90).status == "complete"
        return
    assert hermes_nb.steer(guidance).status == "queued"
    reply = handle.wait(90)
    assert steer_marker(guidance) in [p["text"] for p in reply.parts if p["kind"] == "marker"]
    assert any(guidance in str(body.get("messages")) for body in scripted_model.requests)
    with pytest.raises(HermesUsageError, match="no running turn to steer"):
        hermes_nb.steer("too late")


def test_the_chats_subagent_controls_steer_and_stop_a_running_subagent(
    hermes: LocalHermes, hermes_server: str
) -> None:
    """``subagent_controls`` says Steer is offered on the newer server only and Stop on both; while the
    subagent
        runs its tool, Steer is taken by it (newer: "queued"; stopped right after, it never reads it) and Stop
        ends it
    before it completes, each said on the notice line."""
    chat, sent = _chat(hermes)
    try:
        chat._dispatch(chat, {"type": "subagent_controls", "request": "c1"}, [])
        offered = _answer(sent, "c1")
        assert offered == {
            "type": "subagent_controls",
            "request": "c1",
            "steer": hermes_server == "newer",
            "stop": True,
        }
        chat._dispatch(chat, {"type": "send", "text": "DELEGATE RUN sleep 6 && echo child", "images": []}, [])

        def running() -> list[dict[str, Any]]:
            return [
                p
                for m in chat.snapshot()
                for p in m["parts"]
                if p["kind"] == "subagent" and p["subagent"]["status"] == "running"
            ]

        eventually(
            lambda: running() and any(t["name"] == "terminal" for t in running()[0]["subagent"]["tools"]),
            60,
            "the subagent's running tool",
        )
        subagent_id = running()[0]["subagent"]["id"]
        if hermes_server == "newer":
            guidance = f"subagent steer SUBSTEER-{uuid.uuid4().hex[:8]}"
            chat._dispatch(chat, {"type": "subagent_steer", "subagent_id": subagent_id, "text": guidance}, [])
            eventually(lambda: "Sent to the subagent" in chat.notice, 30, "the steer's notice")
        chat._dispatch(chat, {"type": "subagent_stop", "subagent_id": subagent_id}, [])
        eventually(lambda: chat.notice == "Stopped the subagent.", 30, "the stop's notice")
        _settled(chat)
        ended = [p for m in chat.snapshot() for p in m["parts"] if p["kind"] == "subagent"]
        assert ended and ended[0]["subagent"]["status"] != "completed", ended[0]["subagent"]
    finally:
        chat.close()


def test_branch_with_files_puts_back_the_files_changed_after_the_message(
    hermes_nb: Any, hermes: LocalHermes, hermes_server: str
) -> None:
    """Two turns edit a file; branching at the first reply with ``files=True`` keeps one exchange and puts the
    file back as the first turn left it, naming it; 0.19.0 refuses before any session or file changes."""
    target = hermes.workdir / f"branch-{uuid.uuid4().hex[:8]}.txt"
    target.write_text("one\ntwo\n")
    next_second()
    first = hermes_nb.ask(f"EDIT {target} one ONE", new=True)
    next_second()
    hermes_nb.ask(f"EDIT {target} two TWO")
    assert target.read_text() == "ONE\nTWO\n"
    original = hermes_nb.conversation.current
    at = [m for m in hermes_nb.history() if m["role"] == "assistant"][0]
    assert first.text and at["id"]
    if hermes_server != "newer":
        with pytest.raises(HermesUsageError, match="not offered by this Hermes"):
            hermes_nb.branch(at=at, files=True)
        assert target.read_text() == "ONE\nTWO\n" and hermes_nb.conversation.current == original
        return
    child = hermes_nb.branch(at=at, files=True)
    assert child != original and child.files == (target.name,) and child.skipped == ()
    assert target.read_text() == "ONE\ntwo\n"
    assert [m["role"] for m in hermes_nb.history()] == ["user", "assistant"]
    again = hermes_nb.branch(files=True)  # nothing left out: no file changes
    assert again.files == () and target.read_text() == "ONE\ntwo\n"


def test_magic_branch_back_with_files_and_a_name(
    hermes_shell: Any, hermes: LocalHermes, hermes_server: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """``%hermes branch --back 1 --files --name T`` copies the session without its last exchange, puts back
    the file that exchange changed (naming it) and titles the copy; asking to leave out every exchange is
    refused in one line before anything changes; 0.19.0 says it does not offer branching."""
    ip = hermes_shell
    target = hermes.workdir / f"magic-branch-{uuid.uuid4().hex[:8]}.txt"
    target.write_text("one\ntwo\n")
    next_second()
    ip.run_cell(f"%hermes --new EDIT {target} one ONE").raise_error()
    next_second()
    ip.run_cell(f"%hermes EDIT {target} two TWO").raise_error()
    assert target.read_text() == "ONE\nTWO\n"
    capsys.readouterr()
    ip.run_cell("%hermes branch --back 2")
    assert (
        "the session has 2 exchange(s): leaving out the last 2 would leave none to copy"
        in capsys.readouterr().err
    )
    title = f"copy {uuid.uuid4().hex[:6]}"
    ip.run_cell(f"%hermes branch --back 1 --files --name '{title}'")
    if hermes_server != "newer":
        assert "not offered by this Hermes" in capsys.readouterr().err and target.read_text() == "ONE\nTWO\n"
        return
    out = capsys.readouterr().out
    assert "branched: the notebook continues in session" in out and f"put back {target.name}" in out, out
    assert target.read_text() == "ONE\ntwo\n"
    assert [m["role"] for m in ip.run_cell("%hermes history").result] == ["user", "assistant"]
    sessions = ip.run_cell("%hermes sessions").result
    assert any(row.get("title") == title for row in sessions), list(sessions)


@pytest.mark.servers("newer")
def test_the_chats_branch_with_files_puts_back_the_files_changed_after_the_reply(hermes: LocalHermes) -> None:
    """The ``turn_files`` answer says Hermes takes checkpoints (Branch with files is offered);
    ``branch_files`` at the first of two editing replies lists the file it would put back and changes nothing;
    ``branch`` with ``files`` there then opens the copy and puts the file back, naming it."""
    target = hermes.workdir / f"chat-branch-{uuid.uuid4().hex[:8]}.txt"
    target.write_text("one\ntwo\n")
    next_second()
    chat, sent = _chat(hermes)
    try:
        chat._dispatch(chat, {"type": "send", "text": f"EDIT {target} one ONE", "images": []}, [])
        first = _settled(chat)
        next_second()
        chat._dispatch(chat, {"type": "send", "text": f"EDIT {target} two TWO", "images": []}, [])
        eventually(lambda: _settled(chat)["id"] != first["id"], 90, "the second reply")
        chat._dispatch(chat, {"type": "turn_files", "request": "b1", "message_id": _settled(chat)["id"]}, [])
        assert _answer(sent, "b1")["checkpoints"] is True
        original = chat.session_id
        chat._dispatch(chat, {"type": "branch_files", "request": "b2", "message_id": first["id"]}, [])
        listed = _answer(sent, "b2")
        assert [(f["path"], f["status"]) for f in listed["files"]] == [(target.name, "modified")], listed
        assert target.read_text() == "ONE\nTWO\n" and chat.session_id == original  # only listed
        chat._dispatch(chat, {"type": "branch", "message_id": first["id"], "files": True}, [])
        eventually(lambda: "Put back 1 file(s)" in chat.notice, 60, "the branch's notice")
        assert target.name in chat.notice and target.read_text() == "ONE\ntwo\n"
        assert chat.session_id != original
        assert [m["role"] for m in chat.snapshot()] == ["user", "assistant"]
    finally:
        chat.close()
