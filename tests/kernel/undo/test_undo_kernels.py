"""Undo variables in a REAL kernel (jupyter_client + ipykernel, no Hermes needed): the agent's ``run_code``,
approved on its Run card, runs on the kernel's main thread between a savepoint and its offer, as the tool
table answers it; ``run_cell`` and ``run_cells`` are run by the page as JupyterLab does (an execute_request
naming the cell's id), their savepoint taken from IPython's cell events; Undo is then called on the main
thread between cells, as a click is."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hermes_notebook.kernel.undo.cell_hooks import STILL_RUNNING
from tests.helpers import eventually
from tests.kernel.preview.test_preview_kernels import PlainKernel, plain_kernel

SETUP = """
import asyncio, json, threading, time
import pandas as pd
from hermes_notebook.kernel.call import ToolCall
from hermes_notebook.kernel.cell_runs import run_cell
from hermes_notebook.kernel.cell_sequences import run_cells
from hermes_notebook.kernel.code_tool import run_code
from hermes_notebook.kernel.document import DocumentLink
from hermes_notebook.kernel.execute import JOBS
from hermes_notebook.kernel.outputs import OUTPUTS
from hermes_notebook.kernel.undo.last_run import LAST_RUN
from hermes_notebook.kernel.grants import Grants, Modes
from tests.kernel.test_cell_tools import FakeTurn, Policy
from tests.scripted_front_end import ScriptedFrontEnd, code_cell
OUTPUTS.follow(get_ipython())
JOBS.attach_loop()
df = pd.DataFrame({"x": [1, 2], "y": [3, 4]})
_answers, _cards = {}, {}

def approved_run(code):
    '''The agent asks to run ``code``; the user clicks Run; its answer lands in ``_answers[code]``
    (private names: the harness's bookkeeping, changed by the run's own thread: not the user's).'''
    turn = _cards[code] = FakeTurn("run")
    call = ToolCall(Policy(run="ask"), turn, "tool:t1", "stored-1",
                    namespace=get_ipython().user_ns, shell=get_ipython())
    threading.Thread(target=lambda: _answers.update({code: asyncio.run(run_code(call, code)).text})).start()

class _Page(ScriptedFrontEnd):
    '''A page that answers a run as JupyterLab does: once the cell really ran (the test sends it, naming
    its cell id), ``_page.ran(count)``.'''
    def send(self, data):
        if data.get("op") == "run":
            self.requests.append(data)
            _wanted.append(data)
        else:
            super().send(data)

    def ran(self, count, outputs=()):
        data = _wanted.pop(0)
        self.link.receive({"type": "reply", "id": data["id"], "client": self.client, "ok": True,
                           "execution_count": count, "outputs": list(outputs)})

_wanted, _link = [], DocumentLink()
_page = _Page(_link)
_page.hello()

def approved_cells(tool, cells, *args):
    '''The notebook holds ``cells`` (id, source); the agent asks ``tool`` (run_cell, run_cells) with ``args``;
    the user clicks Run; its answer lands in ``_answers[tool]``.'''
    _page.cells[:] = [code_cell(i, s) for i, s in cells]
    _answers.pop(tool, None)
    _wanted.clear()  # an earlier run's request the page never answered
    turn = _cards[tool] = FakeTurn("run")
    policy = Policy(run="ask")
    policy.grants = Grants(Modes.of(True, "propose", "ask", 60.0))  # a loaded machine: 5 s may not do
    call = ToolCall(policy, turn, "tool:t1", "stored-1", namespace=get_ipython().user_ns,
                    shell=get_ipython(), document=_link)
    tool_call = run_cell if tool == "run_cell" else run_cells
    run = lambda: _answers.update({tool: getattr(asyncio.run(tool_call(call, *args)), "text", None)})
    threading.Thread(target=run).start()

def stop_when_running(tool, cell_id, name):
    '''The user clicks Stop on ``tool``'s running card once the notebook runs cell ``cell_id`` and that cell
    set ``name`` (from a thread: the cell holds the main thread).'''
    def click():
        while getattr(OUTPUTS.running(), "cell_id", None) != cell_id or name not in get_ipython().user_ns:
            time.sleep(0.01)
        turn = _cards[tool]
        turn.settle([card for card in turn.asked if card.kind == "run"][-1].request_id, "stop")
    threading.Thread(target=click, daemon=True).start()

_release = threading.Event()

def release_when_answered(tool):
    '''Set ``_release`` once ``tool`` answered (a cell that ignores Stop waits for it).'''
    def wait():
        while _answers.get(tool) is None:
            time.sleep(0.01)
        _release.set()
    _release.clear()
    _answers.pop(tool, None)  # the last run's
    threading.Thread(target=wait, daemon=True).start()
"""

#: What the card says beside its Undo variables button after a run that rebound ``df``.
CARD_DF = "Puts back df, as before this run. Files and other effects are not undone."


@pytest.fixture(scope="module")
def kernel() -> Iterator[PlainKernel]:
    """The module's kernel, with pandas, ``df`` (columns x and y) and ``approved_run``."""
    with plain_kernel(SETUP) as started:
        yield started


def _run(kernel: PlainKernel, code: str) -> str:
    """Ask for an approved run of ``code`` and wait (cell by cell: the run goes between cells) for its
    answer."""
    kernel.run(f"approved_run({code!r})")
    answer: list[Any] = [None]

    def answered() -> bool:
        answer[0] = kernel.value(f"print(json.dumps(_answers.get({code!r})))")
        return answer[0] is not None

    eventually(answered, timeout=30)
    return str(answer[0])


def test_undo_restores_df_after_an_approved_drop_and_refuses_once_a_cell_changed_it(
    kernel: PlainKernel,
) -> None:
    """``df = df.drop(columns='x')`` approved and run: its answer offers Undo; Undo restores ``df`` with its
    column and says files were not undone; the same run again followed by the user's own cell on ``df``:
    Undo is refused with the reason and ``df`` keeps the user's change."""
    answer = _run(kernel, "df = df.drop(columns='x')")
    assert answer.endswith(
        "Undo variables is offered to the user: it restores df (files and other effects are not undone)."
    ), answer
    assert kernel.value("print(json.dumps(list(df.columns)))") == ["y"]
    card = kernel.value("print(json.dumps(_cards[\"df = df.drop(columns='x')\"].links[-1]))")
    assert card[0] == "tool:t1" and card[1]["offered"] and card[1]["text"] == CARD_DF
    said = kernel.value("print(json.dumps([LAST_RUN.undo(get_ipython().user_ns), list(df.columns)]))")
    assert said == [
        "Undone: restored df. Files, network, databases and other effects of the run were not undone.",
        ["x", "y"],
    ]
    _run(kernel, "df = df.drop(columns='x')\n")
    kernel.run("df['w'] = 0")  # the user's own cell, after the run
    said = kernel.value("print(json.dumps([LAST_RUN.undo(get_ipython().user_ns), list(df.columns)]))")
    assert said[0].startswith("Undo refused: df changed after the run") and said[1] == ["y", "w"]


def test_undo_is_refused_with_a_reason_after_a_run_that_touched_an_open_file(
    kernel: PlainKernel, tmp_path: Path
) -> None:
    """A run that writes to an open file: its answer says why Undo is not offered, Undo says the same and
    changes nothing (the name the run created stays)."""
    kernel.run(f"log_file = open({str(tmp_path / 'log.txt')!r}, 'w')")
    answer = _run(kernel, "log_file.write('x')\nlines = 1")
    reason = "Undo is not offered: log_file: an open file (TextIOWrapper) cannot be saved."
    assert answer.endswith(reason), answer
    card = kernel.value("print(json.dumps(_cards[\"log_file.write('x')\\nlines = 1\"].links[-1][1]))")
    assert card["offered"] is False and card["text"] == reason
    said = kernel.value("print(json.dumps([LAST_RUN.undo(get_ipython().user_ns), lines]))")
    assert said == [reason, 1]
    kernel.run("log_file.close()")


def _run_as_the_page(kernel: PlainKernel, cell_id: str, source: str) -> list[dict[str, Any]]:
    """Run ``source`` as JupyterLab runs a notebook cell: an execute_request whose metadata names its cell;
    the outputs the page's reply carries (its error, if it raised)."""
    content = {
        "code": source,
        "silent": False,
        "store_history": True,
        "user_expressions": {},
        "allow_stdin": False,
        "stop_on_error": True,
    }
    msg = kernel.client.session.msg("execute_request", content, metadata={"cellId": cell_id})
    kernel.client.shell_channel.send(msg)
    while (reply := kernel.client.get_shell_msg(timeout=30))["parent_header"].get("msg_id") != msg["header"][
        "msg_id"
    ]:
        pass
    content = reply["content"]
    if content["status"] != "error":
        return []
    return [{"output_type": "error", "ename": content["ename"], "evalue": content["evalue"], "traceback": []}]


def _cells_run(
    kernel: PlainKernel,
    tool: str,
    cells: list[tuple[str, str]],
    *args: int,
    asked: int | None = None,
    between: str = "",
) -> str:
    """An approved ``tool`` call over the notebook's ``cells``: the page runs each cell the kernel asks for
    (``asked`` of them: all by default), in order, and the user's own cell ``between`` (if any) after the
    first; the agent's answer."""
    kernel.run(f"approved_cells({tool!r}, {cells!r}, *{args!r})")
    sources = dict(cells)
    for count in range(1, (len(cells) if asked is None else asked) + 1):
        wanted = eventually(
            lambda: kernel.value("print(json.dumps([w['cell'] for w in _wanted]))"), 30, "a run request"
        )
        outputs = _run_as_the_page(kernel, wanted[0], sources[wanted[0]])
        kernel.run(f"_page.ran({count}, {outputs!r})")
        if between and count == 1:
            _run_as_the_page(kernel, "c-user", between)
    return str(
        eventually(lambda: kernel.value(f"print(json.dumps(_answers.get({tool!r})))"), 30, "the answer")
    )


def test_undo_of_an_approved_run_cell_restores_df_with_its_column(kernel: PlainKernel) -> None:
    """``run_cell`` of ``df = df.drop(columns='x')``, approved, run by the page: its answer and its card offer
    Undo; Undo restores ``df`` with its ``x`` column."""
    kernel.run('df = pd.DataFrame({"x": [1, 2], "y": [3, 4]})')
    answer = _cells_run(kernel, "run_cell", [("c-drop", "df = df.drop(columns='x')")], 0)
    offer = "Undo variables is offered to the user: it restores df (files and other effects are not undone)."
    assert answer.startswith("Ran cell 0 (In[1]).") and answer.endswith(offer), answer
    links = kernel.value("print(json.dumps(_cards['run_cell'].links))")
    assert [(part, card["offered"], card["text"]) for part, card in links] == [("tool:t1", True, CARD_DF)]
    said = kernel.value("print(json.dumps([LAST_RUN.undo(get_ipython().user_ns), list(df.columns)]))")
    assert said[0].startswith("Undone: restored df.") and said[1] == ["x", "y"], said


def test_undo_of_approved_run_cells_deletes_what_they_created_and_refuses_after_a_users_cell(
    kernel: PlainKernel,
) -> None:
    """``run_cells`` of two cells, the second rebinding ``b`` that the first created: Undo restores ``df`` and
    deletes ``a`` and ``b`` (nothing else); the same run again, then the user's own cell on ``b``: Undo is
    refused with the reason and changes nothing."""
    kernel.run('df = pd.DataFrame({"x": [1, 2], "y": [3, 4]})\nfor n in ("a", "b"): globals().pop(n, None)')
    cells = [("c-first", "a = int(df.x.sum())\nb = [a]"), ("c-second", "b = b + [a]\ndf = df.assign(z=1)")]
    answer = _cells_run(kernel, "run_cells", cells, 0, 1)
    assert answer.startswith("Ran all 2 code cells in order without an error."), answer
    assert answer.endswith(
        "Undo variables is offered to the user: it restores df and deletes a, b (files and other effects "
        "are not undone)."
    ), answer
    links = kernel.value("print(json.dumps(_cards['run_cells'].links))")
    assert links[-1][1]["text"] == (
        "Puts back df and deletes a, b, as before this run. Files and other effects are not undone."
    )
    assert kernel.value("print(json.dumps([b, list(df.columns)]))") == [[3, 3], ["x", "y", "z"]]
    said = kernel.value(
        "print(json.dumps([LAST_RUN.undo(get_ipython().user_ns), list(df.columns), 'a' in globals(), "
        "'b' in globals()]))"
    )
    assert said == [
        "Undone: restored df; deleted a, b. Files, network, databases and other effects of the run were not "
        "undone.",
        ["x", "y"],
        False,
        False,
    ]
    _cells_run(kernel, "run_cells", cells, 0, 1)
    kernel.run("b.append(5)")  # the user's own cell, after the run
    said = kernel.value("print(json.dumps([LAST_RUN.undo(get_ipython().user_ns), b, list(df.columns)]))")
    assert said[0].startswith("Undo refused: b changed after the run"), said
    assert said[1:] == [[3, 3, 5], ["x", "y", "z"]]


def _state(kernel: PlainKernel, *names: str) -> list[Any]:
    """Undo, clicked now (on the main thread, between cells), and then each of ``names`` (None: not there;
    a DataFrame: its columns)."""
    shown = ", ".join(f"_shown({name!r})" for name in names)
    kernel.run(
        "def _shown(name):\n    value = globals().get(name)\n"
        "    return list(value.columns) if isinstance(value, pd.DataFrame) else value"
    )
    return list(kernel.value(f"print(json.dumps([LAST_RUN.undo(get_ipython().user_ns), {shown}]))"))


def test_run_cells_stopped_part_way_offers_undo_of_exactly_what_ran_and_a_users_rerun_refuses_it(
    kernel: PlainKernel,
) -> None:
    """``run_cells`` of three cells, Stop clicked while the second runs: Undo is offered for what the first
    cell and the second's part did (``df``, ``keep`` restored; ``a``, ``b`` deleted), not for the third
    cell's names, which keep their values; the user then edits the first cell and re-runs it: Undo is refused
    with the reason and changes nothing. The same run again, Undo clicked: it restores and deletes exactly
    those names and says files were not undone."""
    reset = 'df = pd.DataFrame({"x": [1, 2], "y": [3, 4]})\nkeep = [0]\nc = "before"\nLAST_RUN.begin({}, "")'
    cells = [
        ("c-one", "a = 1\ndf = df.assign(z=1)"),
        ("c-two", "b = [a]\nkeep = keep + [1]\nwhile True: pass\nlate = 1"),
        ("c-three", "c = 3\ndf = df.drop(columns='x')"),
    ]
    for rerun in (True, False):
        kernel.run(f"{reset}\nfor n in ('a', 'b', 'late'): globals().pop(n, None)")
        kernel.run("stop_when_running('run_cells', 'c-two', 'b')")
        answer = _cells_run(kernel, "run_cells", cells, 0, 2, asked=2)
        offer = (
            "Undo variables is offered to the user: it restores df, keep and deletes a, b (files and other "
            "effects are not undone)."
        )
        assert answer.endswith(offer), answer  # whether the page's reply came within Stop's wait or not
        links = kernel.value("print(json.dumps(_cards['run_cells'].links))")
        assert links[-1][1]["offered"] and links[-1][1]["text"] == (
            "Puts back df, keep and deletes a, b, as before this run. Files and other effects are not undone."
        )
        if rerun:  # the user edits the first cell and runs it: Undo would overwrite their a
            _run_as_the_page(kernel, "c-one", "a = 10")
            said = _state(kernel, "a", "b", "keep", "df", "c")
            assert said[0].startswith("Undo refused: a changed after the run"), said
            assert said[1:] == [10, [1], [0, 1], ["x", "y", "z"], "before"]
        else:
            said = _state(kernel, "a", "b", "keep", "df", "c", "late")
            assert said == [
                "Undone: restored df, keep; deleted a, b. Files, network, databases and other effects of the "
                "run were not undone.",
                None,
                None,
                [0],
                ["x", "y"],
                "before",
                None,
            ]


def test_run_cells_stopped_or_failing_in_its_first_cell_offers_undo_of_that_cells_part_only(
    kernel: PlainKernel,
) -> None:
    """``run_cells`` of two cells whose first is stopped part way (Stop clicked in its endless loop), then
    whose first raises after changing names: each time Undo is offered for what the first cell did before it
    ended (``keep`` restored, ``a`` deleted), the second cell never ran, and Undo does exactly that."""
    for how, ending in (("stop", "while True: pass"), ("error", "raise ValueError('no')")):
        kernel.run('keep = [0]\nLAST_RUN.begin({}, "")\nfor n in ("a", "b"): globals().pop(n, None)')
        if how == "stop":
            kernel.run("stop_when_running('run_cells', 'c-one', 'a')")
        cells = [("c-one", f"a = 1\nkeep = keep + [1]\n{ending}"), ("c-two", "b = 2\nkeep = None")]
        answer = _cells_run(kernel, "run_cells", cells, 0, 1, asked=1)
        assert answer.endswith(
            "Undo variables is offered to the user: it restores keep and deletes a (files and other effects "
            "are not undone)."
        ), (how, answer)
        if how == "error":
            assert answer.startswith("Stopped at the first error: cell 0 (id c-one) raised ValueError: no")
        said = _state(kernel, "a", "b", "keep")
        assert said == [
            "Undone: restored keep; deleted a. Files, network, databases and other effects of the run were "
            "not undone.",
            None,
            None,
            [0],
        ], (how, said)


def test_stop_interrupts_again_when_its_first_interrupt_lands_in_a_cell_hook(kernel: PlainKernel) -> None:
    """Stop clicked while IPython runs the cell's ``pre_run_cell`` hooks (the Undo savepoint is taken there):
    IPython catches the interrupt in the hook, so Stop interrupts again while the cell runs, and the run ends
    stopped instead of running on."""
    kernel.run(
        "for n in ('a', 'in_hook'): globals().pop(n, None)\n"
        "def _slow_hook(info):\n"
        "    if getattr(info, 'cell_id', None) == 'c-hook':\n"
        "        globals()['in_hook'] = 1\n"
        "        time.sleep(1)  # the interrupt lands here, and IPython catches it\n"
        "get_ipython().events.register('pre_run_cell', _slow_hook)\n"
        "stop_when_running('run_cells', 'c-hook', 'in_hook')"
    )
    try:
        answer = _cells_run(kernel, "run_cells", [("c-hook", "a = 1\nwhile True: pass")], 0, 0)
    finally:
        kernel.run("get_ipython().events.unregister('pre_run_cell', _slow_hook)")
    assert "STILL RUNNING" not in answer and "still running" not in answer, answer
    assert kernel.value("print(json.dumps([a, 1 + 1]))") == [1, 2]  # the loop ended; the kernel answers


def test_run_cells_ending_while_its_cell_still_runs_withdraws_undo_with_the_reason(
    kernel: PlainKernel,
) -> None:
    """Stop clicked while a cell that ignores it (it catches every interrupt and goes on) runs: the run ends
    before the cell does, so Undo is withdrawn with the one-line reason on the card and for the agent, after
    the first cell had offered it; Undo then changes nothing, not even the first cell's ``a``."""
    kernel.run('keep = [0]\nfor n in ("a", "b", "late"): globals().pop(n, None)')
    kernel.run("stop_when_running('run_cells', 'c-two', 'b')\nrelease_when_answered('run_cells')")
    stubborn = (  # every interrupt is caught (Stop interrupts again while the cell runs)
        "b = 1\nwhile not _release.is_set():\n    try:\n        _release.wait(60)\n"
        "    except KeyboardInterrupt:\n        pass\nlate = 1"
    )
    cells = [("c-one", "a = 1"), ("c-two", stubborn), ("c-three", "keep = None")]
    answer = _cells_run(kernel, "run_cells", cells, 0, 2, asked=2)
    assert answer.startswith("The run still running after 1 of 3 cells."), answer
    assert answer.endswith(STILL_RUNNING), answer
    links = kernel.value("print(json.dumps(_cards['run_cells'].links))")
    assert [card["offered"] for _, card in links] == [False] and links[-1][1]["text"] == STILL_RUNNING
    assert _state(kernel, "a", "b", "late", "keep") == [STILL_RUNNING, 1, 1, 1, [0]]


def test_run_cells_withdraws_undo_when_the_users_cell_changed_its_names_between_its_cells(
    kernel: PlainKernel,
) -> None:
    """The user's own cell runs between the run's two cells (queued while the first ran): one that creates
    ``other``, which the run does not name, leaves Undo offered for the run's own changes only (``x``
    restored, ``a`` deleted, the user's ``other`` kept); one that sets ``x``, which the second cell then
    changes, withdraws it with the reason (restoring ``x`` would undo the user's cell too), and Undo changes
    nothing."""
    cells = [("c-one", "a = 1"), ("c-two", "x = x + 1")]
    for between, offer in (
        (
            "other = 5",
            "Undo variables is offered to the user: it restores x and deletes a (files and other "
            "effects are not undone).",
        ),
        (
            "x = 10",
            "Undo is not offered: x changed between the run's cells (another cell ran then), so "
            "undoing would undo that cell too.",
        ),
    ):
        kernel.run('x = 0\nfor n in ("a", "other"): globals().pop(n, None)')
        answer = _cells_run(kernel, "run_cells", cells, 0, 1, between=between)
        assert answer.endswith(offer), (between, answer)
        links = kernel.value("print(json.dumps(_cards['run_cells'].links))")
        assert links[-1][1]["offered"] is (between == "other = 5"), links
        if between == "other = 5":  # the user's other is theirs: Undo leaves it
            assert _state(kernel, "x", "a", "other") == [
                "Undone: restored x; deleted a. Files, network, databases and other effects of the run were "
                "not undone.",
                0,
                None,
                5,
            ]
    assert _state(kernel, "x", "a") == [offer, 11, 1]
