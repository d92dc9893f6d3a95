"""The cell tools without Hermes: the document link's hello/bye/reply handling, the tools' checks and texts
against a scripted front end, the tool part's ``cell_change`` link, the server listing cell tools only while a
front end is attached (and telling a connected MCP client so), and the scripted model's cell keywords."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from hermes_notebook._demo.script import plan_reply
from hermes_notebook.client.dashboard import SessionRef, Turn
from hermes_notebook.client.dashboard.turn_state import TurnState
from hermes_notebook.kernel import proposals
from hermes_notebook.kernel.call import ToolCall
from hermes_notebook.kernel.document import DocumentLink
from hermes_notebook.kernel.execute import MainThreadJobs
from hermes_notebook.kernel.grants import Grants, Modes
from hermes_notebook.kernel.outputs import CellOutput, OutputLog
from hermes_notebook.kernel.server import ToolServer
from hermes_notebook.kernel.tools import TOOLS, answer, offered, tool_named
from hermes_notebook.kernel.undo.last_run import LAST_RUN
from hermes_notebook.kernel.versions import SeenCells, cell_version
from hermes_notebook.turns import Interaction, TurnFolder
from hermes_notebook.turns.events import Event
from tests.scripted_front_end import ScriptedFrontEnd, code_cell

#: The cell tools: the rows offered only while the notebook's front end is attached.
CELL_TOOLS = [tool.name for tool in TOOLS if tool.front_end]


class Policy:
    """A share's policy as the cell tools see it."""

    scrub_secrets: tuple[object, ...] = ()
    profile: str | None = None

    def __init__(self, read: bool = True, run: str = "ask", edit: str = "propose") -> None:
        self.grants = Grants(Modes.of(read, edit, run, 5.0))

    def may_read(self, session_id: str) -> bool:
        return self.grants.may_read(session_id)


class FakeTurn:
    """A turn whose Run card is answered by ``answer`` (a run's card by Stop when ``stop``, else it waits to
    be settled by the kernel), and that records the cards and links it was given."""

    def __init__(self, answer: str | None = "run", *, stop: bool = False) -> None:
        self.answer, self.stop, self.asked, self.links = answer, stop, [], []
        self.settled: dict[str, str] = {}
        self.done = self.stopping = False

    async def ask(self, part_id: str, interaction: Interaction, timeout: float) -> str | None:
        self.asked.append(interaction)
        if interaction.kind != "run":
            return self.answer
        if self.stop:
            return "stop"
        while interaction.request_id not in self.settled:
            await asyncio.sleep(0.01)
        return self.settled[interaction.request_id]

    def settle(self, request_id: str, response: str) -> bool:
        if request_id in self.settled:
            return False
        self.settled[request_id] = response
        return True

    def link_cell_change(self, part_id: str, change: Any) -> bool:
        self.links.append((part_id, change))
        return True

    def link_run_undo(self, part_id: str, undo: Any) -> bool:
        self.links.append((part_id, undo))
        return True


def _page(link: DocumentLink) -> ScriptedFrontEnd:
    page = ScriptedFrontEnd(
        link,
        cells=[
            code_cell("a", "import math\n\nx = math.pi", 3, ["execute_result: text/plain"]),
            {**code_cell("m", "# Title"), "type": "markdown"},
            code_cell("b", "print(x)"),
        ],
    )
    page.hello()
    return page


def _call(
    tool: str,
    arguments: dict[str, Any],
    link: DocumentLink,
    *,
    policy: Policy | None = None,
    turn: FakeTurn | None = None,
    seen: SeenCells | None = None,
) -> str:
    """What the kernel answers a bound call (the tool's row gates it, then its handler answers); ``seen``:
    what the agent read before (a fresh record by default)."""
    call = _bound(link, policy or Policy(), turn or FakeTurn(), seen=seen or SeenCells())
    return asyncio.run(_answer(tool, arguments, call)).text


def _bound(link: DocumentLink, policy: Policy, turn: FakeTurn, **kernel: Any) -> ToolCall:
    """A call bound to the turn's tool part ``tool:t1`` in session ``stored-1``, through ``link``."""
    return ToolCall(policy, turn, "tool:t1", "stored-1", answer_timeout=5.0, document=link, **kernel)  # type: ignore[arg-type]


async def _answer(tool: str, arguments: dict[str, Any], call: ToolCall) -> Any:
    row = tool_named(tool)
    assert row is not None
    return await answer(row, call, arguments)


def test_the_link_attaches_on_hello_detaches_on_bye_and_says_so() -> None:
    """``attached`` follows hello and bye of the pages (several may attach); listeners hear each change once;
    messages without a client id, of unknown types or not even mappings are ignored."""
    link = DocumentLink()
    heard: list[bool] = []
    link.on_change(heard.append)
    assert not link.attached
    first = _page(link)
    second = ScriptedFrontEnd(link, client="second-page")
    second.hello()
    assert link.attached and link.front_end().id == "second-page"  # requests go to the newest page
    for junk in (
        None,
        "hello",
        {"type": "hello"},
        {"type": "hello", "client": ""},
        {"type": "bogus", "client": "x"},
    ):
        link.receive(junk)
    second.bye()
    assert link.attached and link.front_end().id == first.client
    first.bye()
    assert not link.attached and heard == [True, False]
    first.hello()
    link.closed()  # the comm went away: nobody is attached, whatever they said before
    assert not link.attached and heard == [True, False, True, False]


def test_a_request_without_an_answer_times_out_and_a_strangers_reply_is_ignored() -> None:
    """A page that never answers gives the agent a clear "did not answer"; a reply from another page (or with
    an unknown id) does not settle a request."""
    link = DocumentLink()
    page = _page(link)
    page.answering = False

    async def ask() -> Any:
        pending = asyncio.ensure_future(link.request("outline", timeout=0.3))
        await asyncio.sleep(0.05)
        link.receive({"type": "reply", "id": page.requests[-1]["id"], "client": "someone-else", "ok": True})
        link.receive({"type": "reply", "id": "r999", "client": page.client, "ok": True})
        return await pending

    answer = asyncio.run(ask())
    assert not answer.ok and answer.error == "the notebook did not answer within 0.3 s"
    page.bye()
    assert asyncio.run(link.request("outline")).error.startswith("no notebook front end")


def test_list_cells_is_an_outline_and_a_read() -> None:
    """The outline has one line per cell (index, type, execution count, first line, size, outputs) and the
    pending changes; with reads off for the session it is refused before the page is asked."""
    link = DocumentLink()
    page = _page(link)
    _call("insert_cell", {"index": 1, "source": "y = 2"}, link)
    text = _call("list_cells", {}, link)
    assert text.splitlines() == [
        "scripted.ipynb: 3 cells:",
        f"[0] code In[3] v{cell_version(page.cells[0]['source'])}: import math  (3 lines) -> execute_result: "
        "text/plain",
        f"[1] markdown v{cell_version('# Title')}: # Title",
        f"[2] code (not run) v{cell_version('print(x)')}: print(x)",
        "Pending changes (waiting for the user to keep or discard):",
        f"- {next(iter(page.pending))}: insert at index 1",
    ]
    asked = len(page.requests)
    assert "Reading the notebook is off" in _call("list_cells", {}, link, policy=Policy(read=False))
    assert len(page.requests) == asked


def test_proposals_are_checked_sent_and_linked_to_the_tool_part() -> None:
    """insert/edit/delete go to the page as proposals (never applied here) and link the tool part; bad
    arguments and the page's refusals come back as text, and nothing is linked then."""
    link = DocumentLink()
    page = _page(link)
    turn = FakeTurn()
    text = _call("edit_cell", {"index": 2, "source": "print(x)\nprint(x * 2)"}, link, turn=turn)
    [(part_id, change)] = turn.links
    assert part_id == "tool:t1" and change == {
        "id": change["id"],
        "kind": "edit",
        "index": 2,
        "cell_type": "code",
    }
    assert text.startswith(
        f"Proposed an edit of cell 2 (version {cell_version('print(x)')}) (+2 / -1 lines) in scripted.ipynb "
        f"as pending change {change['id']}."
    )
    assert page.pending[change["id"]]["source"] == "print(x)\nprint(x * 2)"
    assert page.cells[2]["source"] == "print(x)"  # proposed, not applied
    assert "deleting cell 1 (markdown, version" in _call("delete_cell", {"index": 1}, link, turn=turn)
    assert "a new markdown cell at index 0" in _call(
        "insert_cell", {"index": 0, "source": "## Notes", "cell_type": "markdown"}, link, turn=turn
    )
    assert len(turn.links) == 3

    refused = FakeTurn()
    assert "takes a cell index" in _call("edit_cell", {"index": -1, "source": "x"}, link, turn=refused)
    assert "takes a cell index" in _call("delete_cell", {"index": True}, link, turn=refused)
    assert _call("insert_cell", {"index": 0}, link, turn=refused) == (
        "insert_cell was called with the wrong arguments: missing a required argument: 'source'."
    )
    assert "needs the cell's `source` as text" in _call("edit_cell", {"index": 0, "source": 3}, link)
    assert "cell_type must be one of" in _call(
        "insert_cell", {"index": 0, "source": "x", "cell_type": "html"}, link, turn=refused
    )
    too_long = "x" * (proposals.MAX_SOURCE_CHARS + 1)
    assert "at most 20,000 can be proposed" in _call(
        "insert_cell", {"index": 0, "source": too_long}, link, turn=refused
    )
    assert _call("edit_cell", {"index": 9, "source": "x"}, link, turn=refused) == (
        "Nothing was changed: there is no cell 9; the notebook has 3 cells."
    )
    assert refused.links == []


def test_change_ids_differ_across_kernel_processes() -> None:
    """A restarted kernel's first proposal does not reuse the id of a change still waiting in the page (which
    keeps them across restarts and reloads): ids carry a tag of the kernel process."""
    import subprocess
    import sys

    first = [
        subprocess.run(
            [
                sys.executable,
                "-c",
                "from hermes_notebook.kernel.proposals import new_change_id as n;print(n(), n())",
            ],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
        for _ in range(2)
    ]
    assert [ids[0].split("-")[0] for ids in first] == ["c1", "c1"] and first[0][1].startswith("c2-")
    assert first[0][0] != first[1][0], first  # the same first number, another process: another id


def test_run_cell_asks_with_the_whole_source_and_runs_only_after_run() -> None:
    """The card shows the cell's source; deny or no answer runs nothing; run asks the page to run exactly that
    source; run="never", non-code and empty cells are refused without a card."""
    link = DocumentLink()
    page = _page(link)
    denied = FakeTurn("deny")
    assert "The user denied it: cell 2 was NOT run" in _call("run_cell", {"index": 2}, link, turn=denied)
    [card] = denied.asked
    assert (card.kind, card.command, card.choices) == ("code", "print(x)", ["run", "deny"])
    assert "cell 2 of this notebook" in (card.description or "")
    assert "did not answer within 5 s" in _call("run_cell", {"index": 2}, link, turn=FakeTurn(None))
    assert not any(r["op"] == "run" for r in page.requests)

    page.run_outputs = [
        {"output_type": "stream", "name": "stdout", "text": "3.14\n"},
        {"output_type": "execute_result", "text": "42", "mimes": ["text/plain"]},
        {"output_type": "error", "ename": "ValueError", "evalue": "bad"},
    ]
    text = _call("run_cell", {"index": 2}, link)
    assert (
        text == "Ran cell 2 (In[1]).\n\nstdout:\n3.14\n\nresult (text/plain):\n42\n\nerror:\nValueError: bad"
    )
    assert [r for r in page.requests if r["op"] == "run"][0]["source"] == "print(x)"

    never = FakeTurn()
    assert "running code in this notebook is off" in _call(
        "run_cell", {"index": 2}, link, policy=Policy(run="never"), turn=never
    )
    assert "only code cells run" in _call("run_cell", {"index": 1}, link, turn=never)
    assert never.asked == []
    reads = FakeTurn("allow_reads")
    policy = Policy(read=False)
    assert "allowed the read tools" in _call("run_cell", {"index": 0}, link, policy=policy, turn=reads)
    assert reads.asked[0].choices == ["run", "deny", "allow_reads"] and policy.grants.sessions() == [
        "stored-1"
    ]


class BusyLog(OutputLog):
    """The kernel's output log as the cell tools read it, with a cell (In[7]) running until ``busy`` is
    cleared."""

    def __init__(self) -> None:
        super().__init__()
        self.is_busy = True

    @property
    def busy(self) -> bool:
        return self.is_busy

    def running(self) -> Any:
        return CellOutput(7, 0.0) if self.is_busy else None


def _busy_call(
    tool: str,
    arguments: dict[str, Any],
    link: DocumentLink,
    log: BusyLog,
    jobs: MainThreadJobs,
    turn: FakeTurn,
    *,
    policy: Policy | None = None,
    then: Any = None,
) -> str:
    """Call while In[7] runs; ``then()`` runs on this (the main) thread once the run's card shows."""
    bound = _bound(link, policy or Policy(), turn, outputs=log, jobs=jobs)

    async def go() -> str:
        call = asyncio.ensure_future(_answer(tool, arguments, bound))
        while not call.done() and not any(card.kind == "run" for card in turn.asked):
            await asyncio.sleep(0.01)
        if then is not None:
            then()
        while not call.done():
            jobs.run_pending()  # what the %hermes wait does between pump rounds
            await asyncio.sleep(0.01)
        return str(call.result().text)

    return asyncio.run(go())


def test_run_cell_waits_for_the_users_running_cell_then_runs_and_stop_cancels_it() -> None:
    """While a user's cell runs, an approved run_cell waits behind it, its card saying so (with Stop), and the
    notebook is asked to run the cell only once that cell has ended; Stop while waiting runs nothing. Without
    kernel subshells the page cannot answer meanwhile, so every cell tool says so at once."""
    link, log, jobs = DocumentLink(), BusyLog(), MainThreadJobs()
    page = _page(link)
    link.connect(page, answers_while_busy=True)
    turn = FakeTurn()
    sent_while_busy: list[bool] = []

    def cell_ends() -> None:
        sent_while_busy.append(any(r["op"] == "run" for r in page.requests))
        log.is_busy = False

    text = _busy_call("run_cell", {"index": 2}, link, log, jobs, turn, then=cell_ends)
    assert text.startswith("Ran cell 2 (In[1]).") and sent_while_busy == [False]
    code, waiting, running = turn.asked
    assert (code.kind, waiting.kind, running.kind) == ("code", "run", "run")
    assert "Waiting for the running cell In[7] to finish" in (
        waiting.description or ""
    ) and waiting.choices == ["stop"]
    assert waiting.command == running.command == "print(x)"
    assert [turn.settled[c.request_id] for c in (waiting, running)] == ["started", "finished"]

    log.is_busy, stopped, before = True, FakeTurn(stop=True), len(page.requests)
    text = _busy_call("run_cell", {"index": 2}, link, log, jobs, stopped)
    assert "the run stopped before it started; nothing ran" in text
    assert [r["op"] for r in page.requests[before:]] == ["cell"]

    link.connect(page, answers_while_busy=False)  # ipykernel 6: the page's replies wait behind the cell
    asked = len(page.requests)
    for tool in CELL_TOOLS:
        assert "cannot be read while a cell runs" in _busy_call(
            tool, {"index": 0, "source": "x"}, link, log, jobs, FakeTurn()
        )
    assert len(page.requests) == asked


def test_under_a_hermes_wait_the_kernel_runs_the_cell_and_the_page_shows_its_outputs() -> None:
    """A %hermes cell waiting for this turn keeps the kernel busy; the notebook would queue the cell behind it
    for ever. So the wait runs the cell's source on the main thread, and the page writes the outputs into the
    cell; the run offers Undo variables (on its answer and its tool part), which deletes what it created."""
    link, log, jobs = DocumentLink(), BusyLog(), MainThreadJobs()
    page = _page(link)
    page.cells[2]["source"] = "print('half', x)\ny = 1\nx * 2"
    namespace, turn = {"x": 21}, FakeTurn()
    with jobs.serve():
        bound = _bound(link, Policy(), turn, namespace=namespace, outputs=log, jobs=jobs)

        async def go() -> str:
            call = asyncio.ensure_future(_answer("run_cell", {"index": 2}, bound))
            while not call.done():
                jobs.run_pending()
                await asyncio.sleep(0.01)
            return str(call.result().text)

        text = asyncio.run(go())
    assert (
        "Ran cell 2 in the kernel while a %hermes cell waited" in text and "half 21" in text and "42" in text
    )
    assert text.endswith(
        "Undo variables is offered to the user: it deletes y (files and other effects are not undone)."
    )
    [(part, card)] = turn.links
    assert part == "tool:t1" and card["offered"] and card["text"].startswith("Deletes y, as before this run.")
    assert LAST_RUN.undo(namespace, card["run"]).startswith("Undone: deleted y.") and "y" not in namespace
    [shown] = [r for r in page.requests if r["op"] == "outputs"]
    assert shown["cell"] == "b" and shown["outputs"][0] == {
        "output_type": "stream",
        "name": "stdout",
        "text": "half 21\n",
    }
    assert shown["outputs"][1]["output_type"] == "execute_result" and not any(
        r["op"] == "run" for r in page.requests
    )


def test_edits_off_refuses_proposals_and_runs_allowed_skip_the_card() -> None:
    """edit="off": insert/edit/delete are refused before the page hears of them. run="allow": no Run card, but
    the run still shows (its code, with Stop) and says why no card was asked."""
    link = DocumentLink()
    page = _page(link)
    for tool in ("insert_cell", "edit_cell", "delete_cell"):
        assert "editing this notebook is off" in _call(
            tool, {"index": 0, "source": "x"}, link, policy=Policy(edit="off")
        )
    assert not any(r["op"] == "propose" for r in page.requests)
    turn = FakeTurn("deny")  # never asked: a Run card would deny
    assert _call("run_cell", {"index": 2}, link, policy=Policy(run="allow"), turn=turn).startswith(
        "Ran cell 2"
    )
    [card] = turn.asked
    assert card.kind == "run" and "runs are allowed for this session" in (card.description or "")


def test_without_a_front_end_the_tools_say_so() -> None:
    """Called while no page is attached (Hermes listed them earlier), every cell tool explains and changes
    nothing."""
    link = DocumentLink()
    for tool in CELL_TOOLS:
        assert "front end is not attached" in _call(tool, {"index": 0, "source": "x"}, link)
    assert [name for name in offered(True) if name not in offered(False)] == CELL_TOOLS


def test_a_turn_links_a_tool_part_to_its_cell_change() -> None:
    """``Turn.link_cell_change`` patches the running tool part (a change record views apply) and snapshots
    keep it; no such part, or a finished turn, links nothing."""
    folder = TurnFolder("t1")
    state = TurnState(SessionRef("live", "stored"), "t1", "hi", folder)
    turn = Turn(state)
    folder.apply(Event("tool.start", {"tool_id": "k1", "name": "mcp__notebook_0a1b2c3d__insert_cell"}))
    change = {"id": "c7", "kind": "insert", "index": 2, "cell_type": "code"}
    assert turn.link_cell_change("tool:k1", change)  # type: ignore[arg-type]
    assert state.records[-1] == {
        "op": "patch",
        "message_id": "assistant:t1",
        "part_id": "tool:k1",
        "fields": {"cell_change": change},
    }
    assert turn.message.parts[-1].to_dict()["cell_change"] == change
    assert not turn.link_cell_change("tool:nope", change)  # type: ignore[arg-type]
    state.end("complete")
    assert not turn.link_cell_change("tool:k1", change)  # type: ignore[arg-type]


async def test_the_server_lists_cell_tools_while_attached_and_tells_its_clients() -> None:
    """An MCP client (the official SDK, as Hermes uses it) lists no cell tools until a page attaches; then the
    server sends ``notifications/tools/list_changed`` and the next list has them; a page leaving withdraws
    them."""
    import httpx2
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    link = DocumentLink()

    async def handler(tool: str, arguments: dict[str, Any]) -> str:
        return tool

    server = ToolServer(handler, offered=lambda: offered(link.attached)).start()
    link.on_change(lambda _attached: server.tools_changed())
    notified = asyncio.Event()

    async def on_message(message: Any) -> None:
        if getattr(message, "method", "") == "notifications/tools/list_changed":
            notified.set()

    async def names(session: Any) -> set[str]:
        return {tool.name for tool in (await session.list_tools()).tools}

    try:
        auth = {"Authorization": f"Bearer {server.token.reveal()}"}
        async with (
            httpx2.AsyncClient(headers=auth) as http,
            streamable_http_client(server.url, http_client=http) as (read, write, *_),
            ClientSession(read, write, message_handler=on_message) as session,
        ):
            init = await session.initialize()
            assert init.capabilities.tools is not None and init.capabilities.tools.list_changed
            assert await names(session) == set(offered(False))
            assert server.clients_current
            page = ScriptedFrontEnd(link)
            page.hello()  # here, on this thread: the check below runs before the server's loop can catch up
            # At once, not when the server's loop gets to it: a turn started now may not have the cell tools
            # yet.
            assert not server.clients_current
            await asyncio.wait_for(notified.wait(), 10)
            assert await names(session) == {tool.name for tool in TOOLS}
            assert server.clients_current
            notified.clear()
            await asyncio.to_thread(page.bye)
            await asyncio.wait_for(notified.wait(), 10)
            assert await names(session) == set(offered(False))
    finally:
        server.stop()


@pytest.mark.parametrize(
    ("prompt", "arguments"),
    [
        ("KERNEL list_cells", {}),
        (
            'KERNEL insert_cell 2 markdown "# Notes\\nmore"',
            {"index": 2, "cell_type": "markdown", "source": "# Notes\nmore"},
        ),
        ("KERNEL edit_cell 0 x = 2", {"index": 0, "source": "x = 2"}),
        ("KERNEL delete_cell 1", {"index": 1}),
        ("KERNEL run_cell 3", {"index": 3}),
        ("KERNEL run_cells 2 4", {"first": 2, "last": 4}),
        ("KERNEL run_cells", {}),
        ("KERNEL restart_and_run_all", {}),
    ],
)
def test_scripted_model_calls_the_cell_tools(prompt: str, arguments: dict[str, Any]) -> None:
    """``KERNEL <cell tool> ...`` calls that tool with its arguments (a quoted source is a JSON string)."""
    tool = prompt.split()[1]
    body = {
        "messages": [{"role": "user", "content": prompt}],
        "tools": [{"type": "function", "function": {"name": f"mcp_notebook_0a1b2c3d_{tool}"}}],
    }
    [call] = plan_reply(body).tool_calls
    assert (call.name, dict(call.arguments)) == (f"mcp_notebook_0a1b2c3d_{tool}", arguments)
