"""Undo variables in a REAL kernel (jupyter_client + ipykernel, no Hermes needed): the agent's ``run_code``,
approved on its Run card, runs on the kernel's main thread between a savepoint and its offer, as the tool
table answers it; Undo is then called on the main thread between cells, as a click is."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import eventually
from tests.kernel.preview.test_preview_kernels import PlainKernel, plain_kernel

SETUP = """
import asyncio, json, threading
import pandas as pd
from hermes_notebook.kernel.call import ToolCall
from hermes_notebook.kernel.code_tool import run_code
from hermes_notebook.kernel.execute import JOBS
from hermes_notebook.kernel.outputs import OUTPUTS
from hermes_notebook.kernel.undo.last_run import LAST_RUN
from tests.kernel.test_cell_tools import FakeTurn, Policy
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
"""


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
    assert card[0] == "tool:t1" and card[1]["offered"] and card[1]["text"] == answer.split("\n\n")[-1]
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
