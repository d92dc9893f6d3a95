"""Kernel tools without a server: the ``code`` interaction in the turn model and on a Turn, the read tools, running
approved code, the main-thread queue, registration helpers and the scripted model's ``KERNEL`` keyword."""

from __future__ import annotations

import asyncio
import socket
import stat
from pathlib import Path
from typing import Any

import pytest

from hermes_notebook._demo.script import plan_reply
from hermes_notebook.client.dashboard import SessionRef, Turn
from hermes_notebook.client.dashboard.turn_state import TurnState
from hermes_notebook.kernel import reading, registration
from hermes_notebook.kernel.execute import MainThreadJobs, run_code
from hermes_notebook.notebook.interactions import normalize_answer
from hermes_notebook.turns import CODE_CHOICES, Interaction, TurnFolder
from hermes_notebook.turns.events import Event


def _code(request_id: str = "code-1") -> Interaction:
    return Interaction("code", request_id, command="x = 1", choices=list(CODE_CHOICES))


def _running_tool(folder: TurnFolder) -> None:
    folder.apply(Event("tool.start", {"tool_id": "k1", "name": "mcp__notebook_0a1b2c3d__run_code", "context": "x"}))


def test_folder_asks_on_a_running_tool_part_once() -> None:
    """``ask`` hangs a code interaction on the running tool part (not on others), once per request id."""
    folder = TurnFolder("t1")
    assert folder.ask("tool:k1", _code()) == []  # no such part yet
    _running_tool(folder)
    [patch] = folder.ask("tool:k1", _code())
    assert patch["op"] == "patch" and patch["fields"]["interaction"]["kind"] == "code"
    assert patch["fields"]["interaction"]["status"] == "pending"
    assert folder.ask("tool:k1", _code()) == []  # the same question is asked once


async def test_turn_ask_returns_the_answer_and_records_it() -> None:
    """``Turn.ask`` waits for the answer the connection records (``TurnState.answer_asked``); the card shows
    answered, with the choice."""
    folder = TurnFolder("t1")
    state = TurnState(SessionRef("live", "stored"), "t1", "hi", folder)
    turn = Turn(state)
    _running_tool(folder)
    asking = asyncio.ensure_future(turn.ask("tool:k1", _code(), timeout=5))
    await asyncio.sleep(0)
    assert state.answer_asked("code-1", "run")
    assert await asking == "run"
    inter = next(p for p in turn.message.parts if p.id == "tool:k1").interaction
    assert inter is not None and (inter.status, inter.response) == ("answered", "run")
    assert not state.answer_asked("code-1", "run")  # answered once


async def test_turn_ask_times_out_as_expired() -> None:
    """Nobody answers: ``ask`` returns None, the interaction shows ``expired`` and can no longer be answered."""
    folder = TurnFolder("t1")
    state = TurnState(SessionRef("live", "stored"), "t1", "hi", folder)
    turn = Turn(state)
    _running_tool(folder)
    assert await turn.ask("tool:k1", _code(), timeout=0.01) is None
    inter = turn.message.parts[-1].interaction
    assert inter is not None and inter.status == "expired"
    assert not state.answer_asked("code-1", "run")


def test_a_code_answer_other_than_run_denies() -> None:
    """Only an exact choice counts; anything else (a policy's "once", a typo) is a deny."""
    request = {"kind": "code", "choices": ["run", "deny"]}
    assert normalize_answer(request, "run", []) == "run"
    assert normalize_answer(request, "once", []) == "deny"
    assert normalize_answer(request, "RUN ", []) == "deny"


def test_read_tools_list_describe_and_never_evaluate() -> None:
    """Variables skip private names and modules; ``describe`` looks a plain name up and evaluates nothing."""
    ns: dict[str, Any] = {"In": ["", "a = 1", "b = [1, 2]", "print(a)"], "Out": {2: [1, 2]}, "a": 1, "b": [1, 2],
                          "_hidden": 3, "socket": socket}
    assert reading.list_variables(ns) == "a: int\nb: list (len 2)"
    assert reading.describe(ns, "b") == "b (list):\nlist of 2 items: 1, 2"
    assert "not a variable name" in reading.describe(ns, "__import__('os').getcwd()")
    assert "no variable 'socket'" in reading.describe(ns, "socket")
    assert reading.read_cells(ns, "2:3") == "In[2]:\nb = [1, 2]\n\nIn[3]:\nprint(a)"
    assert reading.read_cells(ns, "-1") == "In[3]:\nprint(a)"
    assert "Out[2] (list)" in reading.read_output(ns, 2)
    assert "There is no cell 9" in reading.read_output(ns, 9)


def test_run_code_reports_output_result_and_error_and_changes_the_namespace() -> None:
    """The last expression is the result, printed text is captured, an exception is reported, not raised."""
    ns: dict[str, Any] = {"x": 2}
    assert run_code(ns, "print('hi')\ny = x * 21\ny") == "stdout:\nhi\n\nresult (int):\n42"
    assert ns["y"] == 42
    report = run_code(ns, "z = 1\n1 / 0")
    assert ns["z"] == 1 and "ZeroDivisionError: division by zero" in report and "1 / 0" in report


def test_main_thread_jobs_run_in_order_and_a_cancelled_one_never_runs() -> None:
    """Queued jobs run when the main thread takes them; one dropped before that never runs."""
    jobs = MainThreadJobs()
    ran: list[int] = []
    first, dropped = jobs.submit(lambda: ran.append(1) or "one"), jobs.submit(lambda: ran.append(2))
    assert dropped.cancel()
    assert jobs.run_pending() == 1
    assert ran == [1] and first.result() == "one"


def test_registration_helpers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Hermes' env key naming, the snippet, the 0600 token file, and staleness (only for loopback URLs)."""
    assert registration.env_key("notebook_0a1b2c3d") == "MCP_NOTEBOOK_0A1B2C3D_API_KEY"
    assert "${MCP_NOTEBOOK_0A1B2C3D_API_KEY}" in registration.config_snippet("notebook_0a1b2c3d", "http://x/mcp")
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    path = registration.token_file("notebook_0a1b2c3d", "tok")
    assert path.read_text() == "tok" and stat.S_IMODE(path.stat().st_mode) == 0o600
    with socket.socket() as listening:
        listening.bind(("127.0.0.1", 0))
        listening.listen()
        port = listening.getsockname()[1]
        assert not registration.is_stale(f"http://127.0.0.1:{port}/mcp")
    assert registration.is_stale(f"http://127.0.0.1:{port}/mcp")
    assert not registration.is_stale("http://192.0.2.1:9/mcp")  # never probed, never removed


def test_scripted_model_calls_kernel_tools_directly_or_through_tool_call() -> None:
    """``KERNEL describe df`` calls the offered tool, or a newer Hermes' ``tool_call`` for a deferred one."""
    direct = {"messages": [{"role": "user", "content": "KERNEL describe df"}],
              "tools": [{"type": "function", "function": {"name": "mcp_notebook_0a1b2c3d_describe"}}]}
    [call] = plan_reply(direct).tool_calls
    assert (call.name, dict(call.arguments)) == ("mcp_notebook_0a1b2c3d_describe", {"name": "df"})
    deferred = {"messages": [{"role": "user", "content": "KERNEL run_code x = 1"}], "tools": [
        {"type": "function", "function": {"name": "tool_call", "description": "invoke"}},
        {"type": "function", "function": {"name": "tool_search", "description": "- mcp__notebook_0a1b2c3d__run_code"}},
    ]}
    [call] = plan_reply(deferred).tool_calls
    assert call.name == "tool_call"
    assert call.arguments == {"calls": [{"name": "mcp__notebook_0a1b2c3d__run_code", "arguments": {"code": "x = 1"}}]}
    assert "no notebook tool" in plan_reply({"messages": direct["messages"], "tools": []}).text
