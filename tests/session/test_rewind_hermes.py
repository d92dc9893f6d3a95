"""Undo, branch, regenerate and edit against the real Dashboards: the client, the facade, ``%hermes`` and the
chat.

The newer Dashboard rewrites the stored transcript; hermes-agent 0.19.0's ``session.undo`` only pops the
model's context and it has no ``session.branch_whole``, so there each is a one-line "not offered by this
Hermes" before anything changes (docs/protocol/dashboard-newer.md §5.8).
"""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import pytest
from IPython.core.interactiveshell import InteractiveShell

import hermes_notebook as hn
from hermes_notebook.client.dashboard import DashboardConnection, SessionRef
from hermes_notebook.client.dashboard.rewind import branch_session, undo_turn
from hermes_notebook.errors import HermesUsageError
from hermes_notebook.notebook import Hermes
from hermes_notebook.settings import Settings
from hermes_notebook.widgets.chat import Chat
from tests.helpers import agent_requests, eventually

pytestmark = pytest.mark.both_servers

NOT_OFFERED = "not offered by this Hermes"


def _prompts(messages: list[Any]) -> list[str]:
    """The user prompts of a history (Message objects or dicts), in order."""
    out = []
    for m in messages:
        role = m["role"] if isinstance(m, dict) else m.role
        parts = m["parts"] if isinstance(m, dict) else [p.to_dict() for p in m.parts]
        if role == "user":
            out.append("".join(p["text"] for p in parts if p["kind"] == "text"))
    return out


def _model_saw(model: Any, marker: str) -> list[str]:
    """The user turns of the last model request that mentions ``marker``."""
    body = next(b for b in reversed(agent_requests(model)) if marker in str(b.get("messages")))
    return [str(m.get("content")) for m in body["messages"] if m.get("role") == "user"]


async def _session(conn: DashboardConnection, *prompts: str) -> SessionRef:
    ref = await conn.create_session()
    for prompt in prompts:
        await asyncio.wait_for(await conn.submit(ref, prompt), 60)
    return ref


@pytest.mark.asyncio(loop_scope="module")
async def test_undo_removes_the_last_exchange_from_the_stored_history(
    conn: DashboardConnection, hermes_server: str, scripted_model: Any
) -> None:
    """Newer: the stored history loses the last prompt and reply, and the model's next request never sees
    them. 0.19.0: refused in one line, and the history is as it was."""
    tag = uuid.uuid4().hex[:8]
    ref = await _session(conn, f"keep {tag}", f"drop {tag}")
    if hermes_server != "newer":
        with pytest.raises(HermesUsageError, match=NOT_OFFERED):
            await undo_turn(conn, ref)
        assert _prompts(await conn.history(ref)) == [f"keep {tag}", f"drop {tag}"]
        return
    assert await undo_turn(conn, ref) == 2
    assert _prompts(await conn.history(ref)) == [f"keep {tag}"]
    await asyncio.wait_for(await conn.submit(ref, f"after {tag}"), 60)
    seen = _model_saw(scripted_model, f"after {tag}")
    assert any(f"keep {tag}" in s for s in seen) and not any(f"drop {tag}" in s for s in seen)
    assert _prompts(await conn.history(ref)) == [f"keep {tag}", f"after {tag}"]


@pytest.mark.asyncio(loop_scope="module")
async def test_branch_at_a_message_copies_the_history_up_to_it(
    conn: DashboardConnection, hermes_server: str
) -> None:
    """Newer: a branch at the first reply holds only the first exchange, and the original keeps all three.
    0.19.0: refused in one line before any session is made."""
    tag = uuid.uuid4().hex[:8]
    ref = await _session(conn, f"one {tag}", f"two {tag}", f"three {tag}")
    before = len(await conn.sessions(500))
    if hermes_server != "newer":
        with pytest.raises(HermesUsageError, match=NOT_OFFERED):
            await branch_session(conn, ref, drop_turns=2)
        assert len(await conn.sessions(500)) == before
        return
    child = await branch_session(conn, ref, drop_turns=2, name=f"branch {tag}")
    assert child.stored_id != ref.stored_id and child.title
    assert _prompts(await conn.history(child)) == [f"one {tag}"]
    assert _prompts(await conn.history(ref)) == [f"one {tag}", f"two {tag}", f"three {tag}"]
    message = await asyncio.wait_for(await conn.submit(child, f"four {tag}"), 60)
    assert message.status == "complete"
    assert _prompts(await conn.history(child)) == [f"one {tag}", f"four {tag}"]


def test_facade_branch_regenerate_and_edit(
    hermes_nb: Hermes, hermes_server: str, scripted_model: Any
) -> None:
    """Newer: ``branch(at=)`` returns the new session and the next ask continues there; ``regenerate`` sends
    the last prompt again in place of its exchange; ``edit_last`` replaces it. 0.19.0: each is refused in one
    line."""
    tag = uuid.uuid4().hex[:8]
    hermes_nb.ask(f"alpha {tag}", new=True)
    hermes_nb.ask(f"beta {tag}")
    parent = hermes_nb.session_id
    first_reply = hermes_nb.history()[1]
    if hermes_server != "newer":
        for call in (
            lambda: hermes_nb.branch(at=first_reply),
            hermes_nb.regenerate,
            hermes_nb.undo,
            lambda: hermes_nb.edit_last("changed"),
        ):
            with pytest.raises(HermesUsageError, match=NOT_OFFERED):
                call()
        assert _prompts(list(hermes_nb.history())) == [f"alpha {tag}", f"beta {tag}"]
        return
    new_id = hermes_nb.branch(at=first_reply)
    assert new_id != parent and hermes_nb.session_id == new_id
    hermes_nb.ask(f"gamma {tag}")
    assert _prompts(list(hermes_nb.history())) == [f"alpha {tag}", f"gamma {tag}"]
    assert _prompts(list(hermes_nb.history(hn.resume(parent)))) == [f"alpha {tag}", f"beta {tag}"]
    requests = len(scripted_model.requests)
    reply = hermes_nb.regenerate()
    assert reply.text.endswith(f"gamma {tag}") and len(scripted_model.requests) > requests
    assert _prompts(list(hermes_nb.history())) == [f"alpha {tag}", f"gamma {tag}"]
    hermes_nb.edit_last(f"delta {tag}")
    assert _prompts(list(hermes_nb.history())) == [f"alpha {tag}", f"delta {tag}"]
    assert not any(f"gamma {tag}" in s for s in _model_saw(scripted_model, f"delta {tag}"))


def test_magic_undo_branch_regenerate(
    hermes_shell: InteractiveShell, hermes_server: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """``%hermes undo`` / ``branch`` / ``regenerate`` act on the notebook's session (newer) or say in one line
    that this Hermes does not offer them (0.19.0); without a session they say so."""
    ip = hermes_shell
    ip.run_cell("%hermes undo")
    assert "no session yet" in capsys.readouterr().err
    tag = uuid.uuid4().hex[:8]
    ip.run_cell(f"%hermes --new magic one {tag}").raise_error()
    ip.run_cell(f"%hermes magic two {tag}").raise_error()
    capsys.readouterr()
    if hermes_server != "newer":
        for sub in ("undo", "branch", "regenerate"):
            ip.run_cell(f"%hermes {sub}")
            assert NOT_OFFERED in capsys.readouterr().err
        return
    ip.run_cell("%hermes undo").raise_error()
    assert capsys.readouterr().out.strip() == "undid the last exchange"
    ip.run_cell("%hermes branch").raise_error()
    assert "branched: the notebook continues in session" in capsys.readouterr().out
    reply = ip.run_cell("%hermes regenerate").result
    assert reply.text.endswith(f"magic one {tag}")
    history = ip.run_cell("%hermes history").result
    assert _prompts(list(history)) == [f"magic one {tag}"]


def _settled(chat: Chat, count: int) -> bool:
    messages = chat.snapshot()
    return not chat.busy and len(messages) == count and messages[-1]["status"] == "complete"


def browser(chat: Chat, **content: Any) -> None:
    """Deliver a message as the front end would (through the comm handler)."""
    chat._dispatch(chat, content, [])


def test_chat_buttons_undo_edit_and_branch(settings: Settings, hermes_server: str) -> None:
    """The chat's buttons: undo re-fetches a history without the last exchange, edit re-sends the last prompt
    changed, branch opens the copy in the same widget; a button of an earlier reply is refused. 0.19.0: the
    notice says it is not offered, and the conversation stays."""
    tag = uuid.uuid4().hex[:8]
    chat = Chat(settings)
    try:
        chat.wait_ready(30)
        for n, text in enumerate((f"w-one {tag}", f"w-two {tag}"), 1):
            chat.send_prompt(text)
            eventually(lambda n=n: _settled(chat, 2 * n), 60, "the reply")
        first_reply, last_reply = chat.snapshot()[1]["id"], chat.snapshot()[3]["id"]
        if hermes_server != "newer":
            browser(chat, type="undo", message_id=last_reply)
            eventually(lambda: NOT_OFFERED in chat.notice, 30, "the refusal")
            assert _prompts(chat.snapshot()) == [f"w-one {tag}", f"w-two {tag}"]
            return
        browser(chat, type="undo", message_id=first_reply)
        eventually(lambda: "only the last reply" in chat.notice, 30, "the refusal of an earlier reply")
        browser(chat, type="undo", message_id=last_reply)
        eventually(lambda: chat.notice == "Undid the last exchange.", 30, "the undo")
        assert _prompts(chat.snapshot()) == [f"w-one {tag}"]
        browser(chat, type="edit", message_id=chat.snapshot()[0]["id"], text=f"w-edited {tag}")
        eventually(
            lambda: _settled(chat, 2) and _prompts(chat.snapshot()) == [f"w-edited {tag}"], 60, "the edit"
        )
        chat.send_prompt(f"w-three {tag}")
        eventually(lambda: _settled(chat, 4), 60, "the third exchange")
        parent = chat.session_id
        browser(chat, type="branch", message_id=chat.snapshot()[1]["id"])
        eventually(lambda: chat.notice.startswith("Branched"), 60, "the branch open in the widget")
        assert chat.session_id != parent and _prompts(chat.snapshot()) == [f"w-edited {tag}"]
    finally:
        chat.close()
