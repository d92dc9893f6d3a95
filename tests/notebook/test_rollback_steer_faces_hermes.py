"""Rollback, a turn's file changes and steering through the faces (``hermes.*``, ``%hermes``), on the real
servers.

The scripted model's ``EDIT path old new`` patches a file in the agent's folder; Hermes checkpoints the folder
first (both servers run with checkpoints on). Listing, diffing and restoring one file work on both servers; a
whole restore (``undo(files=True)``) also drops the last turn, which only the newer Dashboard does (0.19.0:
"not offered" before anything changes). ``RUN sleep`` keeps a turn in its tool long enough to steer it.
"""

from __future__ import annotations

import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell

from hermes_notebook._demo.local_hermes import LocalHermes
from hermes_notebook.errors import HermesUsageError
from hermes_notebook.notebook import Hermes
from hermes_notebook.turns.steering import steer_marker
from tests.helpers import eventually

pytestmark = pytest.mark.both_servers


def _file(hermes: LocalHermes, text: str) -> Path:
    """A new file in Hermes' folder, then a pause into the next second: checkpoint times have whole seconds,
    so an earlier test's checkpoint of this shared folder in the second a turn starts would count as the
    turn's (turns/checkpoints.py ``checkpoint_for_turn``; the README's rollback notes say so)."""
    target = hermes.workdir / f"faces-{uuid.uuid4().hex[:8]}.txt"
    target.write_text(text)
    time.sleep(1.1)
    return target


def test_changes_and_rollback_show_and_put_back_a_turns_file(
    hermes_nb: Hermes, hermes: LocalHermes, hermes_server: str
) -> None:
    """``changes()`` names the file the last turn edited with its diff; ``rollback()`` lists the checkpoints
    (a Table) and puts that one file back; ``undo(files=True)`` undoes a turn with its file (newer) or is
    refused before anything changes (0.19.0)."""
    target = _file(hermes, "alpha\nbeta\n")
    hermes_nb.ask(f"EDIT {target} alpha ALPHA", new=True)
    assert target.read_text() == "ALPHA\nbeta\n"
    changes = hermes_nb.changes()
    change = next(c for c in changes.files if c.path == target.name)
    assert "-alpha" in change.diff.splitlines() and "+ALPHA" in change.diff.splitlines()
    assert target.name in changes._repr_mimebundle_()["text/html"]
    listed = hermes_nb.rollback()
    assert changes.checkpoint is not None and changes.checkpoint.hash in {row["hash"] for row in listed}
    number = next(row["number"] for row in listed if row["hash"] == changes.checkpoint.hash)
    restored = hermes_nb.rollback(checkpoint=number, file=target.name)
    assert restored.files == (target.name,) and target.read_text() == "alpha\nbeta\n"
    with pytest.raises(HermesUsageError, match="is not one of this session's checkpoints"):
        hermes_nb.rollback(checkpoint="ffffffff", file=target.name)

    second = _file(hermes, "one\n")
    hermes_nb.ask(f"EDIT {second} one ONE")
    rows_before = len(hermes_nb.history())
    if hermes_server != "newer":
        with pytest.raises(HermesUsageError, match="not offered by this Hermes"):
            hermes_nb.undo(files=True)
        assert second.read_text() == "ONE\n" and len(hermes_nb.history()) == rows_before
        return
    undone = hermes_nb.undo(files=True)
    assert undone > 0 and second.name in undone.files and second.read_text() == "one\n"
    assert len(hermes_nb.history()) == rows_before - 2


def test_steer_reaches_the_running_turn_through_the_facade(hermes_nb: Hermes, scripted_model: Any) -> None:
    """``hermes.steer`` while a started turn runs its tool: accepted, seen by the model, marked in the reply;
    with no turn running it is refused in one line."""
    handle = hermes_nb.start("RUN sleep 3 && echo ran", new=True)
    eventually(lambda: any(p["kind"] == "tool" for p in handle.parts), 60, "the tool part")
    guidance = f"also mention STEER-{uuid.uuid4().hex[:8]}"
    assert hermes_nb.steer(guidance).status == "queued"
    reply = handle.wait(90)
    assert steer_marker(guidance) in [p["text"] for p in reply.parts if p["kind"] == "marker"]
    assert any(guidance in str(body.get("messages")) for body in scripted_model.requests)
    with pytest.raises(HermesUsageError, match="no running turn to steer"):
        hermes_nb.steer("too late")


@pytest.mark.servers("newer")
def test_hermes_magic_rollback_changes_and_undo_files(
    hermes_shell: InteractiveShell, hermes: LocalHermes, capsys: pytest.CaptureFixture[str]
) -> None:
    """``%hermes changes``, ``%hermes rollback [ID [FILE]]`` and ``%hermes undo --files`` on one session."""
    ip = hermes_shell
    target = _file(hermes, "red\n")
    ip.run_line_magic("hermes", f"--new EDIT {target} red RED")
    changes = ip.run_line_magic("hermes", "changes")
    assert [c.path for c in changes.files] == [target.name]
    listed = ip.run_line_magic("hermes", "rollback")
    assert listed and listed[0]["number"] == 1 and "hash" in listed.columns
    restored = ip.run_line_magic("hermes", f"rollback {changes.checkpoint.hash[:10]} {target.name}")
    assert str(restored).startswith("restored 1 file(s)") and target.read_text() == "red\n"
    ip.run_line_magic("hermes", f"EDIT {target} red BLUE")
    capsys.readouterr()
    ip.run_line_magic("hermes", "undo --files")
    assert f"put back {target.name}" in capsys.readouterr().out and target.read_text() == "red\n"
    with pytest.raises(UsageError, match="steer TEXT"):
        ip.run_line_magic("hermes", "steer")
    with pytest.raises(UsageError, match="no running turn to steer"):
        ip.run_line_magic("hermes", "steer go faster")


def test_the_chats_steer_goes_into_the_running_turn(hermes: LocalHermes, scripted_model: Any) -> None:
    """The composer's Steer: ``{"type": "steer"}`` while a turn runs its tool reaches the model in that turn
    and shows as a marker in it; with no turn running it is refused on the notice line (send it as a
    prompt)."""
    import json

    from hermes_notebook.widgets import Chat

    chat = Chat(hermes.settings())
    chat.send = lambda content, buffers=None: None  # type: ignore[method-assign]
    try:
        chat.wait_ready(30)
        chat._dispatch(chat, {"type": "steer", "text": "nothing runs"}, [])
        eventually(lambda: "no turn is running" in chat.notice, 30, "the refusal")
        chat._dispatch(chat, {"type": "send", "text": "RUN sleep 3 && echo ran", "images": []}, [])
        eventually(
            lambda: any(p["kind"] == "tool" for m in chat.snapshot() for p in m["parts"]), 60, "the tool"
        )
        guidance = f"chat steer STEER-{uuid.uuid4().hex[:8]}"
        chat._dispatch(chat, {"type": "steer", "text": guidance}, [])
        eventually(
            lambda: not chat.busy and any(m.get("status") == "complete" for m in chat.snapshot()), 90, "done"
        )
        reply = [m for m in chat.snapshot() if m["role"] == "assistant"][-1]
        assert steer_marker(guidance) in [p["text"] for p in reply["parts"] if p["kind"] == "marker"]
        assert any(guidance in json.dumps(body.get("messages")) for body in scripted_model.requests)
        assert len([m for m in chat.snapshot() if m["role"] == "user"]) == 1  # a steer is no new prompt
    finally:
        chat.close()
