"""Kernel tools without a server: the ``code`` interaction in the turn model and on a Turn, the read tools,
running approved code, the main-thread queue, registration helpers and the scripted model's ``KERNEL``
keyword."""

from __future__ import annotations

import asyncio
import os
import socket
import stat
import time
from pathlib import Path
from typing import Any

import pytest

from hermes_notebook._demo.script import plan_reply
from hermes_notebook.client.dashboard import SessionRef, Turn
from hermes_notebook.client.dashboard.turn_state import TurnState
from hermes_notebook.kernel import reading, registration
from hermes_notebook.kernel.execute import MainThreadJobs, run_code
from hermes_notebook.kernel.undo.last_run import LAST_RUN, NOTHING_TO_UNDO
from hermes_notebook.notebook.interactions import normalize_answer
from hermes_notebook.turns import CODE_CHOICES, Interaction, TurnFolder
from hermes_notebook.turns.events import Event


def _code(request_id: str = "code-1") -> Interaction:
    return Interaction("code", request_id, command="x = 1", choices=list(CODE_CHOICES))


def _running_tool(folder: TurnFolder) -> None:
    folder.apply(
        Event("tool.start", {"tool_id": "k1", "name": "mcp__notebook_0a1b2c3d__run_code", "context": "x"})
    )


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
    """Nobody answers: ``ask`` returns None, the interaction shows ``expired`` and can no longer be
    answered."""
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
    ns: dict[str, Any] = {
        "In": ["", "a = 1", "b = [1, 2]", "print(a)"],
        "Out": {2: [1, 2]},
        "a": 1,
        "b": [1, 2],
        "_hidden": 3,
        "socket": socket,
    }
    assert reading.list_variables(ns) == "a: int\nb: list (len 2)"
    assert reading.describe(ns, "b") == "b (list):\nlist of 2 items: 1, 2"
    assert "not a variable name" in reading.describe(ns, "__import__('os').getcwd()")
    assert "no variable 'socket'" in reading.describe(ns, "socket")
    assert reading.read_cells(ns, "2:3") == "In[2]:\nb = [1, 2]\n\nIn[3]:\nprint(a)"
    assert reading.read_cells(ns, "-1") == "In[3]:\nprint(a)"
    assert "Out[2] (list)" in reading.read_output(ns, 2).text
    assert "There is no cell 9" in reading.read_output(ns, 9).text


def test_run_code_reports_output_result_and_error_and_changes_the_namespace() -> None:
    """The last expression is the result, printed text is captured, an exception is reported, not raised."""
    ns: dict[str, Any] = {"x": 2}
    assert run_code(ns, "print('hi')\ny = x * 21\ny").text == "stdout:\nhi\n\nresult (int):\n42"
    assert ns["y"] == 42
    report = run_code(ns, "z = 1\n1 / 0").text
    assert ns["z"] == 1 and "ZeroDivisionError: division by zero" in report and "1 / 0" in report


def test_main_thread_jobs_run_in_order_and_a_cancelled_one_never_runs() -> None:
    """Queued jobs run when the main thread takes them; one dropped before that never runs."""
    jobs = MainThreadJobs()
    ran: list[int] = []
    first, dropped = jobs.submit(lambda: ran.append(1) or "one"), jobs.submit(lambda: ran.append(2))
    assert dropped.stop() == "dropped"
    assert jobs.run_pending() == 2  # taken; the dropped one skipped
    assert ran == [1] and first.future.result() == "one" and dropped.future.cancelled()


def test_registration_helpers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Hermes' env key naming, the snippet, the 0600 token file, and staleness (only for loopback URLs)."""
    assert registration.env_key("notebook_0a1b2c3d") == "MCP_NOTEBOOK_0A1B2C3D_API_KEY"
    assert "${MCP_NOTEBOOK_0A1B2C3D_API_KEY}" in registration.config_snippet(
        "notebook_0a1b2c3d", "http://x/mcp"
    )
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
    direct = {
        "messages": [{"role": "user", "content": "KERNEL describe df"}],
        "tools": [{"type": "function", "function": {"name": "mcp_notebook_0a1b2c3d_describe"}}],
    }
    [call] = plan_reply(direct).tool_calls
    assert (call.name, dict(call.arguments)) == ("mcp_notebook_0a1b2c3d_describe", {"name": "df"})
    deferred = {
        "messages": [{"role": "user", "content": "KERNEL run_code x = 1"}],
        "tools": [
            {"type": "function", "function": {"name": "tool_call", "description": "invoke"}},
            {
                "type": "function",
                "function": {"name": "tool_search", "description": "- mcp__notebook_0a1b2c3d__run_code"},
            },
        ],
    }
    [call] = plan_reply(deferred).tool_calls
    assert call.name == "tool_call"
    assert call.arguments == {
        "calls": [{"name": "mcp__notebook_0a1b2c3d__run_code", "arguments": {"code": "x = 1"}}]
    }
    assert "no notebook tool" in plan_reply({"messages": direct["messages"], "tools": []}).text


# --- binding calls to parts, grants, registration
# -------------------------------------------------------------------


class FakeDashboard:
    """What ``KernelTools`` needs of a sharing conversation, over a stand-in Dashboard: its profile's MCP
    servers (``conversation.mcp``, whose ``mcp.servers.*`` requests are recorded and answered like a newer
    Dashboard, or -32601 like 0.19.0) and the turns it is running (real ``Turn``/``TurnState``/folder)."""

    def __init__(
        self, *, registers: bool = True, servers: dict[str, str] | None = None, profile: str | None = None
    ) -> None:
        from hermes_notebook.session.mcp_servers import McpServers

        self.profile: str | None = profile
        self.registers = registers
        self.servers: dict[str, str] = dict(servers or {})
        self.requests: list[tuple[str, dict[str, Any]]] = []
        self.mcp = McpServers(self._connection)
        self.turns: list[Turn] = []
        self.states: dict[
            str, TurnState
        ] = {}  # turn id -> its producer side (where respond() records answers)

    async def _connection(self) -> FakeDashboard:
        return self

    async def request(self, method: str, params: dict[str, Any]) -> Any:
        from hermes_notebook.errors import HermesRPCError

        self.requests.append((method, dict(params)))
        if not self.registers:
            raise HermesRPCError("method not found", code=-32601)
        if method == "mcp.servers.list":
            return {"servers": [{"name": n, "url": u} for n, u in self.servers.items()]}
        if method == "mcp.servers.add":
            if params["name"] in self.servers:
                raise HermesRPCError("exists", code=4090)
            self.servers[params["name"]] = params["config"]["url"]
            return {"ok": True, "server": {"name": params["name"]}}
        if method == "mcp.servers.remove":
            if self.servers.pop(params["name"], None) is None:
                raise HermesRPCError("not found", code=4064)
            return {"ok": True, "removed": True}
        return {"status": "reloaded"}

    def running_turns(self) -> list[Turn]:
        return [t for t in self.turns if not t.done]

    def start_tool(self, turn_id: str, tool_id: str, payload: dict[str, Any]) -> Turn:
        """A turn whose tool part ``tool:<tool_id>`` is running (``payload``: the rest of the tool.start)."""
        folder = TurnFolder(turn_id)
        state = TurnState(SessionRef("live-" + turn_id, "stored-" + turn_id), turn_id, "hi", folder)
        folder.apply(Event("tool.start", {"tool_id": tool_id, **payload}))
        self.states[turn_id] = state
        turn = Turn(state)
        self.turns.append(turn)
        return turn


@pytest.fixture
def tools(monkeypatch: pytest.MonkeyPatch) -> Any:
    """A fresh ``KernelTools`` (not the process's ``KERNEL``) over a namespace, with a short routing wait."""
    from types import SimpleNamespace

    from hermes_notebook.kernel.server import tools_available
    from hermes_notebook.kernel.share import KernelTools

    if not tools_available():
        pytest.skip("the tools extra (mcp) is not installed")
    monkeypatch.setattr("hermes_notebook.kernel.binding.ROUTE_WAIT", 0.3)
    namespace: dict[str, Any] = {"df": [1, 2, 3], "secret_plan": "x"}
    monkeypatch.setattr("hermes_notebook.shell.host.ipython", lambda: SimpleNamespace(user_ns=namespace))
    kernel = KernelTools()
    yield kernel
    kernel.close()


DASHBOARD = "http://127.0.0.1:9119"


def _share(
    tools: Any,
    conversation: FakeDashboard,
    dashboard_url: str = DASHBOARD,
    secrets: tuple[object, ...] = (),
    **modes: Any,
) -> Any:
    """``share_kernel(**modes)`` as the facade does it: the kernel attaches on this thread, then shares."""
    from hermes_notebook.kernel.grants import Modes
    from hermes_notebook.runtime import run_sync

    tools.attach()
    return run_sync(
        tools.share(conversation, Modes.of(**modes), dashboard_url=dashboard_url, secrets=secrets)
    )


def _unshare(tools: Any, conversation: FakeDashboard) -> None:
    from hermes_notebook.runtime import run_sync

    run_sync(tools.unshare(conversation))


def _notes(turn: Turn) -> list[str]:
    return [p.text for p in turn.message.parts if p.kind == "marker"]


def test_a_call_answers_only_the_part_that_asked_for_exactly_it_and_only_once(tools: Any) -> None:
    """Bound by arguments (a newer tool.start's ``args``; 0.19.0's preview), a part answers one call for the
    life of its turn: another session's call with other arguments, or a second call for the same part after
    the first returned, is refused, and the turn shows a notice. (Before, the name alone bound, and the claim
    ended with the call, so both were answered.)"""
    from hermes_notebook.runtime import run_sync

    conn = FakeDashboard()
    _share(tools, conn, read=True)
    name = f"mcp__{tools.name}__describe"
    newer = conn.start_tool("t1", "k1", {"name": name, "context": "df", "args": {"name": "df"}})
    assert run_sync(tools.call("describe", {"name": "secret_plan"}), 10).text.startswith("Refused")
    assert run_sync(tools.call("describe", {"name": "df"}), 10).text == "df (list):\nlist of 3 items: 1, 2, 3"
    assert run_sync(tools.call("describe", {"name": "df"}), 10).text.startswith(
        "Refused"
    )  # the part is still running
    notes = _notes(newer)
    assert len(notes) == 2 and "whose arguments no step of this turn asked for was refused" in notes[0]
    assert "A second call of the kernel tool describe for a step that was answered already" in notes[1]
    # 0.19.0: the tool.start carries the preview only (agent/display.py build_tool_preview)
    old = conn.start_tool("t2", "k2", {"name": f"mcp__{tools.name}__describe", "context": "df"})
    assert run_sync(tools.call("describe", {"name": "secret_plan"}), 10).text.startswith("Refused")
    assert run_sync(tools.call("describe", {"name": "df"}), 10).text.startswith("df (list)")
    assert len(_notes(old)) == 1
    # an exact name, never a substring: another kernel's server whose name contains ours is not us
    conn.start_tool("t3", "k3", {"name": f"mcp__x{tools.name}__describe", "args": {"name": "df"}})
    assert run_sync(tools.call("describe", {"name": "df"}), 10).text.startswith("Refused")


def test_binding_helpers_follow_hermes_preview_and_claims_last_the_turn() -> None:
    """The 0.19.0 preview is the first of query/text/command/path/name/prompt/code/goal, one line, cut to
    80."""
    from hermes_notebook.kernel.binding import Claims, hermes_preview, tool_name

    assert hermes_preview({"code": "x = 1\n\ny = 2"}) == "x = 1 y = 2"
    assert hermes_preview({"cells": "1:3"}) == ""
    assert hermes_preview({"code": "a" * 100}) == "a" * 77 + "..."
    assert tool_name("notebook_0a1b2c3d", "run_code") == "mcp__notebook_0a1b2c3d__run_code"
    claims = Claims()
    assert claims.claim("t", "p") and not claims.claim("t", "p")
    claims.forget_ended(["other"])
    assert claims.claim("t", "p")


def test_a_new_policy_revokes_card_grants_and_the_status_lists_them(tools: Any) -> None:
    """ "Allow reads for this session" from a Run card is a grant the status names;
    ``share_kernel(read=False)`` (or ``--kernel ask``) is a new policy, and the grant is gone: reads are off
    as the status says. The 0.19.0 token file goes when the share ends."""
    from hermes_notebook.runtime import run_sync
    from hermes_notebook.turns import READS_CHOICE

    conn = FakeDashboard(registers=False)
    share = _share(tools, conn)
    turn = conn.start_tool("t1", "k1", {"name": f"mcp__{tools.name}__run_code", "context": "x = 1"})

    async def click_allow_reads() -> str:
        import asyncio

        answer = asyncio.ensure_future(tools.call("run_code", {"code": "x = 1"}))
        while not turn.pending():
            await asyncio.sleep(0.01)
        assert turn.pending()[0].choices == ["run", "deny", READS_CHOICE]
        # what DashboardConnection.respond() does for the card's "allow reads" button
        assert conn.states["t1"].answer_asked(turn.pending()[0].request_id, READS_CHOICE)
        return (await answer).text

    assert "allowed the read tools" in run_sync(click_allow_reads(), 10)
    assert share.may_read("stored-t1") and share.grants.sessions() == ["stored-t1"]
    assert "reads off, but allowed from a card for session(s) stored-t1" in str(share)
    again = _share(tools, conn, read=False)
    assert not again.may_read("stored-t1") and not share.may_read("stored-t1")
    assert "reads off (Run cards can allow them per session)" in str(again)
    assert again.grants.revoke() == []
    assert (
        again.token_path is not None and again.token_path.exists()
    )  # 0.19.0: the token file for the snippet
    _unshare(tools, conn)
    assert not again.token_path.exists()


def test_run_code_refuses_key_shaped_code_before_asking(tools: Any) -> None:
    """Code holding a key-shaped literal (or the connection's own key) is refused before any card: a card
    never hides what runs, so it would put the key on screen and in the model's next turn."""
    from hermes_notebook.runtime import run_sync

    conn = FakeDashboard(registers=False)
    _share(tools, conn, secrets=("own-key-0123456789",))
    for i, code in enumerate(
        [
            'client = OpenAI(api_key="sk-proj-abcdefghijklmnop1234")',
            "requests.get(url, headers={'x': 'own-key-0123456789'})",
        ]
    ):
        turn = conn.start_tool(f"t{i}", f"k{i}", {"name": f"mcp__{tools.name}__run_code", "context": code})
        text = run_sync(tools.call("run_code", {"code": code}), 10).text
        assert text.startswith("Refused before asking the user: the code holds a key") and not turn.pending()
        assert all(p.interaction is None for p in turn.message.parts)
        assert "it was refused without asking" in _notes(turn)[0]


def test_reads_run_no_user_code_and_every_failure_is_a_fixed_message(
    tools: Any, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Properties, ``__getattr__``, ``__len__``, ``__repr__``, ``items()`` and ``savefig`` of the user's
    objects never run in a read; a two-million-item dict is read 20 items deep; a read that fails (a namespace
    changing under it) answers a fixed message and writes nothing to the running cell's stderr."""
    import tracemalloc

    ran: list[str] = []

    class Sneaky:
        shape = property(lambda self: ran.append("shape") or (1,))

        def __repr__(self) -> str:
            ran.append("repr")
            return "x"

        def __len__(self) -> int:
            ran.append("len")
            return 1

        def __getattr__(self, name: str) -> Any:
            ran.append(name)
            raise AttributeError(name)

    class SneakyDict(dict):  # type: ignore[type-arg]
        def items(self) -> Any:
            ran.append("items")
            return super().items()

    class Figure:  # looks like matplotlib's by name and module: savefig is still the user's code here
        __module__ = "matplotlib.figure"

        def savefig(self, *args: Any, **kwargs: Any) -> None:
            ran.append("savefig")

    big = dict.fromkeys(range(2_000_000), 0)
    ns: dict[str, Any] = {
        "In": ["", "obj"],
        "Out": {1: Sneaky()},
        "obj": Sneaky(),
        "d": SneakyDict(a=1),
        "fig": Figure(),
        "nested": [Sneaky(), {"k": Sneaky()}],
        "big": big,
        "db_password": "hunter2",
    }
    shown = [
        reading.list_variables(ns),
        *(reading.describe(ns, n) for n in ("obj", "d", "fig", "nested")),
        reading.read_output(ns, 1).text,
    ]
    tracemalloc.start()
    shown.append(reading.describe(ns, "big"))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert ran == [], ran
    assert shown[0].endswith(".Sneaky") and "\nbig: dict (len 2000000)" in "\n" + shown[0]
    assert "only its type" in shown[1] and shown[4].endswith("list of 2 items: <Sneaky>, {'k': <Sneaky>}")
    assert "… [1,999,980 more items]" in shown[-1] and peak < 1_000_000, peak
    assert reading.describe(ns, "db_password") == "db_password (str):\n<withheld: 7 chars>"

    class Changing(dict):  # type: ignore[type-arg]
        def items(self) -> Any:
            raise RuntimeError("dictionary changed size during iteration")

    from types import SimpleNamespace

    from hermes_notebook.runtime import run_sync

    monkeypatch.setattr("hermes_notebook.shell.host.ipython", lambda: SimpleNamespace(user_ns=Changing(x=1)))
    conn = FakeDashboard(registers=False)
    _share(tools, conn, read=True)
    conn.start_tool("t1", "k1", {"name": f"mcp__{tools.name}__list_variables", "context": ""})
    capsys.readouterr()
    assert run_sync(tools.call("list_variables", {}), 10).text == reading.READ_FAILED
    assert capsys.readouterr().err == ""


def test_registration_follows_each_dashboard_and_each_server(tools: Any) -> None:
    """Unsharing on one Dashboard removes the entry there although another Dashboard still shares; a restarted
    server (new port and token) is registered again, never left to the old entry (another process could bind
    that port)."""
    here, there = FakeDashboard(), FakeDashboard()
    _share(tools, here)
    _share(tools, there, "http://127.0.0.1:9229")
    assert set(here.servers) == {tools.name} == set(there.servers)
    _unshare(tools, here)
    assert here.servers == {} and set(there.servers) == {tools.name}
    old_url = there.servers[tools.name]
    assert tools.server is not None
    tools.server.stop()  # the server died (or was stopped): the next share starts another
    share = _share(tools, there, "http://127.0.0.1:9229")
    assert there.servers[tools.name] == share.url != old_url
    assert [m for m, _ in there.requests].count("mcp.servers.add") == 2


def test_stale_entries_go_only_on_this_machine_and_names_are_reused(tmp_path: Path) -> None:
    """A dead ``127.0.0.1`` entry is removed only when the Dashboard runs here (elsewhere that loopback is
    another machine's); a new kernel takes the first free name of a fixed series, so Hermes' ``.env`` keeps
    one line per name instead of gaining one per kernel."""
    from hermes_notebook.runtime import run_sync

    with socket.socket() as gone:
        gone.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{gone.getsockname()[1]}/mcp"
    slot0 = registration.slot_name(0)
    remote = FakeDashboard(servers={slot0: dead})
    assert run_sync(registration.remove_stale(remote.mcp, set(), "http://10.0.0.7:9119")) == []
    assert slot0 in remote.servers
    local = FakeDashboard(servers={slot0: dead})
    assert run_sync(registration.remove_stale(local.mcp, set(), "http://127.0.0.1:9119")) == [slot0]
    assert (
        run_sync(registration.free_name(local.mcp)) == slot0
    )  # the dead kernel's name (and .env line) reused
    local.servers[slot0] = "http://127.0.0.1:1/mcp"
    assert run_sync(registration.free_name(local.mcp)) == registration.slot_name(1) != slot0


def test_the_token_file_is_created_afresh_never_through_a_link_and_removed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """0.19.0's token file: a link planted where it goes is replaced, not followed; the file is new
    (``O_EXCL``), 0600, and gone once the share ends."""
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    victim = tmp_path / "victim.txt"
    victim.write_text("keep")
    folder = tmp_path / f"hermes-notebook-{os.getuid()}"
    folder.mkdir(mode=0o700)
    (folder / "notebook_0a1b2c3d.token").symlink_to(victim)
    path = registration.token_file("notebook_0a1b2c3d", "tok")
    assert victim.read_text() == "keep" and not path.is_symlink() and path.read_text() == "tok"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    registration.remove_token_file(path)
    assert not path.exists()


def test_arguments_fit_as_the_tool_received_them() -> None:
    """The SDK coerces ``"2"`` to ``2`` for an int parameter and drops keys a tool does not take: still the
    same call. Another value for a parameter the tool takes is another call."""
    from hermes_notebook.kernel.binding import arguments_fit
    from hermes_notebook.turns import Part

    part = Part(
        "tool:1", "tool", name="mcp__n__read_output", status="running", arguments={"cell": "2", "x": 1}
    )
    assert arguments_fit(part, {"cell": 2})
    assert not arguments_fit(part, {"cell": 3}) and not arguments_fit(part, {"cell": 2, "extra": "y"})


# --- permission modes, an agent's run (Stop, time limit, waiting), the output log
# ------------------------------------


def test_modes_are_checked_described_and_revoked_whole() -> None:
    """One policy per connection: bad values name themselves; "allow for this session" is said in words, and
    revoking withdraws it (runs back to ask) with every card grant, telling the listeners."""
    from hermes_notebook.errors import HermesUsageError
    from hermes_notebook.kernel.grants import Grants, Modes

    with pytest.raises(HermesUsageError, match="run must be one of ask, allow, never, not 'always'"):
        Modes.of(run="always")
    with pytest.raises(HermesUsageError, match="read must be True/False or one of off, on, not 'yes'"):
        Modes.of(read="yes")
    with pytest.raises(HermesUsageError, match="edit must be one of propose, off"):
        Modes.of(edit="apply")
    grants, heard = Grants(Modes.of(True, "off", "allow")), []
    grants.on_change(lambda: heard.append(grants.state()))
    assert grants.describe() == "reads on, edits off, runs allowed for this session (no Run card)"
    grants.grant("s1")
    assert grants.revoke() == ["s1"] and grants.modes == Modes("on", "off", "ask")
    assert heard[-1] == {"reads": "on", "edits": "off", "runs": "ask", "granted": False}
    off = Grants(Modes.of(False))
    off.grant("s2")
    assert off.may_read("s2") and not off.may_read("s3") and off.state("s2")["granted"]
    assert off.describe().startswith("reads off, but allowed from a card for session(s) s2")


def test_share_kernel_sets_the_modes_the_header_follows_and_revoke_ends_allow(tools: Any) -> None:
    """``share(read=, edit=, run=)`` is the connection's policy; ``watch`` gives the chat header its modes at
    once and on every change (a revoke, a new policy, the share's end); ``revoke`` is the header's button."""
    conn = FakeDashboard()
    seen: list[Any] = []
    share = _share(tools, conn, read=True, edit="off", run="allow")
    assert "reads on, edits off, runs allowed for this session" in str(share) and share.run == "allow"
    tools.watch(conn, seen.append)
    assert seen[-1]["runs"] == "allow" and seen[-1]["server"] == tools.name and seen[-1]["edits"] == "off"
    assert tools.revoke(conn) and share.run == "ask" and seen[-1]["runs"] == "ask"
    _share(tools, conn, run="never")
    assert seen[-1]["runs"] == "never" and seen[-1]["reads"] == "off"
    _unshare(tools, conn)
    assert seen[-1] is None and not tools.revoke(conn)


async def _on_loop(function: Any, *args: Any) -> Any:
    return function(*args)


def _drive(
    tools: Any, call: Any, turn: Turn, conn: FakeDashboard, answer: Any = None, timeout: float = 20
) -> str:
    """Run ``tools.call`` on the package loop while this (the main) thread takes approved jobs, as the kernel
    does; ``answer(pending)`` may answer a card (from another thread: a running job holds the main thread)."""
    import threading

    from hermes_notebook import runtime
    from hermes_notebook.kernel.execute import JOBS

    future = runtime.submit(call)
    done = threading.Event()

    def answering() -> None:
        while not done.is_set() and answer is not None:
            for inter in turn.pending():
                response = answer(inter)
                if response is not None:  # answered on the package loop, as a click's respond() is
                    runtime.run_sync(_on_loop(conn.states[turn.id].answer_asked, inter.request_id, response))
            done.wait(0.01)

    helper = threading.Thread(target=answering, daemon=True)
    helper.start()
    deadline = time.monotonic() + timeout
    try:
        while not future.done():
            JOBS.run_pending()
            assert time.monotonic() < deadline, "the call did not end"
            time.sleep(0.005)
    finally:
        done.set()
    return str(future.result().text)


def test_runs_allowed_for_the_session_skip_the_card_and_still_show_the_run(tools: Any) -> None:
    """run="allow": no Run card; the run shows on the part (its code, Stop, why no card) and is settled
    "finished"; its answer says Undo variables is offered, and Undo deletes what the run created."""
    conn = FakeDashboard()
    _share(tools, conn, run="allow")
    turn = conn.start_tool(
        "t1", "k1", {"name": f"mcp__{tools.name}__run_code", "args": {"code": "ran = 6 * 7"}}
    )
    assert _drive(tools, tools.call("run_code", {"code": "ran = 6 * 7"}), turn, conn) == (
        "The code ran; it printed nothing and returned nothing.\n\nUndo variables is offered to the user: it "
        "deletes ran (files and other effects are not undone)."
    )
    assert tools._namespace["ran"] == 42
    # the approved run took a savepoint; its part offers Undo, which (on the main thread) deletes what it made
    part = next(p for p in turn.message.parts if p.kind == "tool")
    assert LAST_RUN.offered and part.run_undo is not None and part.run_undo["offered"]
    assert part.run_undo["text"] == "Deletes ran, as before this run. Files and other effects are not undone."
    said = LAST_RUN.undo(tools._namespace, part.run_undo["run"])
    assert said.startswith("Undone: deleted ran.") and "ran" not in tools._namespace
    assert LAST_RUN.undo(tools._namespace) == NOTHING_TO_UNDO
    inter = part.interaction
    assert inter is not None and (inter.kind, inter.command, inter.status, inter.response) == (
        "run",
        "ran = 6 * 7",
        "answered",
        "finished",
    )
    assert "runs are allowed for this session" in (inter.description or "")


def test_stop_ends_an_approved_run_at_its_next_python_line_and_the_time_limit_does_too(tools: Any) -> None:
    """Run, then Stop while the code loops: it stops inside the code (what it did so far stays), the agent is
    told, and the card says Stopped. A run that outlives the policy's time limit is stopped the same way."""
    conn = FakeDashboard()
    _share(tools, conn)
    code = "laps = 0\nwhile True:\n    laps += 1"
    turn = conn.start_tool("t1", "k1", {"name": f"mcp__{tools.name}__run_code", "args": {"code": code}})

    def click(inter: Any) -> str | None:
        if inter.kind == "code":
            return "run"
        return "stop" if tools._namespace.get("laps", 0) > 1000 else None

    text = _drive(tools, tools.call("run_code", {"code": code}), turn, conn, click)
    assert "RunStopped" in text and tools._namespace["laps"] > 1000
    part = next(p for p in turn.message.parts if p.kind == "tool")
    assert part.interaction is not None and part.interaction.response == "stop"  # the click settled it
    _share(tools, conn, run_limit=0.5)  # share_kernel(run_limit=)
    turn2 = conn.start_tool("t2", "k2", {"name": f"mcp__{tools.name}__run_code", "args": {"code": code}})
    text = _drive(
        tools,
        tools.call("run_code", {"code": code}),
        turn2,
        conn,
        lambda inter: "run" if inter.kind == "code" else None,
    )
    assert "RunStopped" in text
    part2 = next(p for p in turn2.message.parts if p.kind == "tool")
    assert part2.interaction is not None and part2.interaction.response == "timed_out"


def test_a_stop_that_comes_too_late_never_lands_in_the_next_code() -> None:
    """Jobs: one dropped before it runs never runs; a stop after a job ended is a no-op, and the next code on
    the main thread runs to its end (the stop is cleared, not left pending)."""
    from hermes_notebook.kernel.execute import MainThreadJobs, RunStopped

    jobs = MainThreadJobs()
    quick = jobs.submit(lambda: "quick")
    jobs.run_pending()
    assert quick.future.result() == "quick" and quick.stop() == "done"
    total = sum(range(200_000))  # plenty of Python lines for a leaked stop to fire in
    assert total == 19_999_900_000
    import threading

    looping = jobs.submit(lambda: [None for _ in iter(int, 1)])
    threading.Timer(0.2, looping.stop).start()
    jobs.run_pending()
    assert isinstance(looping.future.exception(), RunStopped)


def test_run_code_sends_what_it_displays_and_the_figures_it_opens_as_images(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """What approved code displays, and the matplotlib figures it opens (drawn, then closed), come back as PNG
    images; a PNG over the bound is named, not sent. (pyplot stands in here: only its four calls are used.)"""
    import sys
    import types

    from hermes_notebook.kernel.images import MAX_SENT_BYTES
    from tests.helpers import png_bytes

    class Figure:
        def __init__(self, number: int) -> None:
            self.number = number

        def savefig(self, buffer: Any, format: str, dpi: int) -> None:  # noqa: A002 - pyplot's name
            buffer.write(png_bytes(64, 48) if self.number == 1 else b"\x89PNG" + b"0" * (MAX_SENT_BYTES + 1))

    open_figures: dict[int, Figure] = {}
    pyplot = types.SimpleNamespace(
        get_fignums=lambda: sorted(open_figures),
        figure=lambda n: open_figures[n],
        close=lambda f: open_figures.pop(f.number),
        subplots=lambda n: open_figures.setdefault(n, Figure(n)),
    )
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", pyplot)
    answer = run_code({"plt": pyplot}, "plt.subplots(1)\nplt.subplots(2)\nprint('plotted')")
    assert [i.describe() for i in answer.images] == ["image/png 64x48, 1 KB (run_code figure 1)"]
    assert "too large to send" in answer.text and "plotted" in answer.text and open_figures == {}


def test_take_png_sends_only_small_real_pngs() -> None:
    """A PNG's size comes from its header; anything else, or too big, is named instead of sent."""
    import base64

    from hermes_notebook.kernel.images import MAX_SIDE, take_png
    from tests.helpers import png_bytes

    image = take_png(base64.b64encode(png_bytes(10, 7)).decode(), "In[2] display 1")
    assert not isinstance(image, str) and (image.width, image.height, image.label) == (
        10,
        7,
        "In[2] display 1",
    )
    assert take_png("not base64!", "x") == "x: not a valid PNG"
    assert take_png(base64.b64encode(b"GIF89a" + b"0" * 40).decode(), "x") == "x: not a valid PNG"
    assert "too large to send" in str(take_png(png_bytes(MAX_SIDE + 1, 1), "x"))


def test_the_output_log_copies_what_cells_publish_and_keeps_the_agents_displays_apart(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Through ipykernel's hooks (played here by publishers that call them as ipykernel does): a cell's
    streams (the end kept), displays and PNGs are recorded under its In[] number while it runs; messages pass
    on unchanged; clear_output clears; an agent's run captures (and keeps out of the cell) what it
    displays."""
    import base64
    import sys
    import types

    from IPython.core.events import EventManager, available_events

    from hermes_notebook.kernel.outputs import TEXT_CHARS, OutputLog
    from tests.helpers import png_bytes

    class Publisher:  # ipykernel's ZMQDisplayPublisher / OutStream hook chain
        def __init__(self) -> None:
            self.hooks: list[Any] = []
            self.parent_header = {"msg_id": "exec-1"}
            self.pub_thread = types.SimpleNamespace(schedule=lambda fn: fn())

        def register_hook(self, hook: Any) -> None:
            self.hooks.append(hook)

        def send(self, kind: str, content: dict[str, Any], parent: str = "exec-1") -> Any:
            msg: Any = {"header": {"msg_type": kind}, "parent_header": {"msg_id": parent}, "content": content}
            for hook in self.hooks:
                msg = hook(msg)
                if msg is None:
                    return None
            return msg

    display, stdout = Publisher(), Publisher()
    monkeypatch.setattr(sys, "stdout", stdout)
    shell = types.SimpleNamespace(
        display_pub=display, history_manager=types.SimpleNamespace(input_hist_parsed=["", "a = 1", "b = 2"])
    )
    shell.events = EventManager(shell, available_events)
    log = OutputLog()
    log.follow(shell)
    log.follow(shell)  # once per shell
    assert not log.busy and log.running() is None
    shell.events.trigger("pre_execute")
    shell.events.trigger("pre_run_cell", types.SimpleNamespace(cell_id="cell-abc"))
    png = base64.b64encode(png_bytes(20, 10)).decode()
    message = {"name": "stdout", "text": "x" * (TEXT_CHARS + 10) + "end\n"}
    assert stdout.send("stream", message)["content"] is message  # passed on as it was
    stdout.send("stream", {"name": "stdout", "text": "someone else's\n"}, parent="exec-0")
    display.send("display_data", {"data": {"text/plain": "<Figure>", "image/png": png}})
    running = log.running()
    assert log.busy and running is not None and (running.count, running.cell_id) == (3, "cell-abc")
    assert (
        running.text.endswith("end\n")
        and len(running.text) == TEXT_CHARS
        and running.chars == TEXT_CHARS + 14
    )
    assert running.displays == ["<Figure>"] and running.images[0].label == "In[3] display 1"
    with log.capture("run_code") as captured:
        assert display.send("display_data", {"data": {"image/png": png}}) is None  # not into the cell
    assert len(captured.images) == 1 and len(log.running().images) == 1  # type: ignore[union-attr]
    display.send("clear_output", {"wait": False})
    assert log.running().text == "" and log.running().images == []  # type: ignore[union-attr]
    stdout.send("stream", {"name": "stdout", "text": "after\n"})
    shell.events.trigger("post_run_cell", None)
    shell.events.trigger("post_execute")
    done = log.cell(3)
    assert (
        not log.busy
        and log.running() is None
        and done is not None
        and not done.running
        and done.text == "after\n"
    )


def test_the_faces_set_and_show_the_modes(tools: Any) -> None:
    """``%hermes --kernel read,allow`` spells modes as words (a wrong one is named by argparse); ``status``
    says what is shared; the chat header follows its conversation's modes and its Revoke withdraws the
    allowance."""
    from IPython.core.error import UsageError

    from hermes_notebook.notebook.magic_line import kernel_modes
    from hermes_notebook.notebook.magics import HermesMagics
    from hermes_notebook.notebook.results import Status
    from hermes_notebook.widgets.chat_kernel import follow_kernel_modes

    assert kernel_modes("read,allow") == {"read": "on", "run": "allow"}
    assert kernel_modes("read-only") == {"read": "on", "edit": "off", "run": "never"}
    assert kernel_modes("ask") == {"run": "ask"}
    with pytest.raises(UsageError, match="invalid kernel mode value: 'sometimes'"):
        HermesMagics.hermes.parser.parse_args(["--kernel", "sometimes"])
    assert (
        Status({"kernel": "Kernel tools notebook_x at u: reads on"}).lines()[-1]
        == "Kernel tools notebook_x at u: reads on"
    )
    assert "not shared" in Status({}).lines()[-1]

    conn = FakeDashboard()
    actions: dict[str, Any] = {}
    chat = types_namespace(
        kernel_modes=None,
        conversation=conn,
        on_action=lambda name, handler: actions.__setitem__(name, handler),
    )
    follow_kernel_modes(chat, tools)
    assert chat.kernel_modes is None
    _share(tools, conn, run="allow")
    assert chat.kernel_modes["runs"] == "allow" and chat.kernel_modes["cells"] is False
    actions["kernel_revoke"]({})
    assert chat.kernel_modes["runs"] == "ask"
    chat.conversation = FakeDashboard()  # the chat's profile picker moved it to another conversation
    _share(tools, conn, run="allow")
    assert chat.kernel_modes is None  # the kernel's tools are not that conversation's
    _share(tools, chat.conversation)  # nor does another conversation's share show in this header
    assert chat.kernel_modes is None


def types_namespace(**fields: Any) -> Any:
    import types

    return types.SimpleNamespace(**fields)


def test_registration_is_kept_per_profile_probes_only_here_and_names_differ_by_user_and_profile(
    tools: Any,
) -> None:
    """A second profile on the same Dashboard is registered too (the record is keyed by Dashboard and
    profile), and unsharing one leaves the other; a name held by a dead-looking loopback entry is probed and
    taken over only for a Dashboard on this machine; the name series differs by user (two users sharing a uid)
    and by profile."""
    from hermes_notebook.runtime import run_sync

    first, second = FakeDashboard(profile="research"), FakeDashboard(profile="teaching")
    _share(tools, first)
    _share(tools, second)  # the same Dashboard URL, another profile
    assert set(first.servers) == {tools.name} == set(second.servers)
    _unshare(tools, first)
    assert first.servers == {} and set(second.servers) == {tools.name}

    with socket.socket() as gone:
        gone.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{gone.getsockname()[1]}/mcp"
    name = registration.slot_name(0)
    remote = FakeDashboard(servers={name: dead})
    assert not run_sync(
        registration.register(
            remote.mcp, name, "http://127.0.0.1:1/mcp", "t", dashboard_url="http://10.0.0.7:9119"
        )
    )
    assert remote.servers == {name: dead} and "mcp.servers.list" not in [m for m, _ in remote.requests]
    local = FakeDashboard(servers={name: dead})
    assert run_sync(
        registration.register(
            local.mcp, name, "http://127.0.0.1:1/mcp", "t", dashboard_url="http://127.0.0.1:9119"
        )
    )
    assert local.servers == {name: "http://127.0.0.1:1/mcp"}

    names = {
        registration.slot_name(0, profile, user)
        for profile in ("research", "teaching", None)
        for user in ("alice:1000", "bob:1000")
    }
    assert len(names) == 6 and all(n.startswith(registration.NAME_PREFIX) for n in names)
    assert registration.slot_name(3, "research", "alice:1000") == registration.slot_name(
        3, "research", "alice:1000"
    )
