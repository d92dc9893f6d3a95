"""Kernel tools in REAL kernels (jupyter_client + ipykernel) against the real newer Dashboard: the
registration goes with the kernel, and each kernel has its own server, token and turns; and a busy kernel, for
real: a long cell runs while the agent lists the variables and reads the cell's output so far; each read is
answered within 100 ms from what is safe to read, the Hermes turn is stopped meanwhile, and the cell finishes
undisturbed. (The cell would run 60 s; it ends early at a flag file once the checks are done, to save CI time.
The 100 ms is asserted as a functional bound on a read while busy, the kernel's own timing of each call,
binding included; it is measured properly in benchmarks/bench_kernel_tools.py.)"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest

from hermes_notebook._demo.local_hermes import LocalHermes
from tests.helpers import eventually, native_images, png_bytes, registered_mcp_servers
from tests.kernels import Kernel

pytestmark = pytest.mark.servers("newer")


def _registered(hermes: LocalHermes) -> dict[str, str]:
    return registered_mcp_servers(hermes.settings())


@pytest.fixture
def kernels(hermes: LocalHermes, tmp_path: Path) -> Iterator[list[Kernel]]:
    """Start kernels on demand (``kernels.append(Kernel(...))``); all are shut down afterwards."""
    started: list[Kernel] = []
    try:
        yield started
    finally:
        for kernel in started:
            kernel.stop()


SHARE = (
    "import hermes_notebook as hn\nh = hn.connect()\nshare = h.share_kernel(read=True)\nprint('NAME', "
    "share.name)"
)


def _name(output: str) -> str:
    match = re.search(r"NAME (notebook_[0-9a-f]{8})", output)
    assert match, output
    return match.group(1)


def test_a_kernel_restart_removes_the_registration(
    hermes: LocalHermes, kernels: list[Kernel], tmp_path: Path
) -> None:
    """The registration lives as long as its kernel: a restart (shutdown request, atexit) removes it."""
    kernel = Kernel(hermes, tmp_path)
    kernels.append(kernel)
    name = _name(kernel.run(SHARE))
    assert name in _registered(hermes)
    kernel.manager.restart_kernel(now=False)
    eventually(lambda: name not in _registered(hermes), timeout=30, what="the registration removed")


def test_a_second_kernel_has_its_own_token_and_cannot_read_the_first(
    hermes: LocalHermes, kernels: list[Kernel], tmp_path: Path
) -> None:
    """Two kernels: two servers with their own tokens (one's token gets 401 at the other), and a turn of the
    second kernel calling the first kernel's tool is refused by the first: it answers only its own turns."""
    first, second = Kernel(hermes, tmp_path), Kernel(hermes, tmp_path)
    kernels.extend([first, second])
    secret = f"only-in-the-first-{uuid.uuid4().hex[:8]}"
    first.run(f"private = {secret!r}")
    name_a, name_b = _name(first.run(SHARE)), _name(second.run(SHARE))
    assert name_a != name_b and {name_a, name_b} <= set(_registered(hermes))
    env = dict(line.split("=", 1) for line in (hermes.home / ".env").read_text().splitlines() if "=" in line)
    token_a, token_b = env[f"MCP_{name_a.upper()}_API_KEY"], env[f"MCP_{name_b.upper()}_API_KEY"]
    assert token_a != token_b
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    headers = {"accept": "application/json, text/event-stream", "authorization": f"Bearer {token_b}"}
    assert (
        httpx.post(_registered(hermes)[name_a], json=body, headers=headers, trust_env=False).status_code
        == 401
    )
    output = second.run(f"r = h.ask('KERNEL@{name_a} describe private', new=True)\nprint('TEXT', r.text)")
    assert "Refused: no turn started from this notebook" in output, output
    assert secret not in output
    own = second.run("r = h.ask('KERNEL@" + name_b + " list_variables', new=True)\nprint('TEXT', r.text)")
    assert "share: " in own and "private" not in own  # its own kernel answers, and holds no `private`


#: A read while a cell runs must be answered within this (seconds).
READ_BOUND = 0.1

SETUP = """
import hermes_notebook as hn, numpy as np, pandas as pd, pathlib, threading
from hermes_notebook.kernel.share import KERNEL
h = hn.connect()
share = h.share_kernel(read=True, run="allow")
frame = pd.DataFrame({"city": ["Oslo", "Lima"], "sales": [3, 5]})
grid = np.arange(12).reshape(3, 4)
"""

START = """
busy_cell = len(In)  # the next cell's number
handle = h.start(
    f"KERNELS wait 2 ;; list_variables ;; read_output {busy_cell} ;; run_code agent_ran = 1 ;; slow 60"
)
def run_card():
    cards = (t["interaction"] for t in handle.tools if (t.get("interaction") or {}).get("kind") == "run")
    return next(cards, None)
def stop_when_asked():
    while not pathlib.Path(STOP).exists() or run_card() is None:  # the run_code waiting behind the busy cell
        threading.Event().wait(0.05)
    card = run_card()["description"]
    handle.interrupt()  # the user stops the Hermes turn while the cell still runs
    pathlib.Path(STOP + "-done").write_text(card)
threading.Thread(target=stop_when_asked, daemon=True).start()
print("BUSY", busy_cell, "SESSION", h.session_id)
"""

BUSY = """
import time, pathlib
started, i = time.monotonic(), 0
while not pathlib.Path(END).exists() and time.monotonic() - started < 60:
    print("tick", i, flush=True)
    i += 1
    time.sleep(0.1)
print("cell done after", i, "ticks")
cell_ended = time.monotonic()
"""


def test_reads_answer_at_once_while_a_long_cell_runs_and_the_cell_finishes_undisturbed(
    hermes: LocalHermes, kernels: list[Kernel], tmp_path: Path
) -> None:
    """The acceptance test of a busy kernel (see the module docstring): reads while a cell runs answer from
    the running cell's output so far and the namespace, never waiting; stopping the turn leaves the cell
    alone."""
    kernel = Kernel(hermes, tmp_path)
    kernels.append(kernel)
    stop, end = tmp_path / "stop-turn", tmp_path / "end-cell"
    kernel.run(SETUP)
    started = kernel.run(f"STOP, END = {str(stop)!r}, {str(end)!r}\n" + START)
    busy_cell = int(re.search(r"BUSY (\d+)", started).group(1))  # type: ignore[union-attr]
    assert hermes.model is not None
    with ThreadPoolExecutor(1) as pool:
        cell = pool.submit(kernel.run, BUSY, 120)

        def results() -> list[str] | None:
            """The two tool results, once the model has both (the turn then streams its slow ending)."""
            for body in reversed(hermes.model.requests):  # type: ignore[union-attr]
                tools = [m for m in body.get("messages") or [] if m.get("role") == "tool"]
                if len(tools) >= 2 and "KERNELS wait 2" in str(body.get("messages")):
                    return [str(m.get("content")) for m in tools[-2:]]
            return None

        variables, output = eventually(results, timeout=90, what="both reads answered while the cell runs")
        assert not cell.done(), "the cell ended before the reads: nothing was tested"
        assert f"In[{busy_cell}] is running" in variables
        assert "frame: pandas.DataFrame (2x2)" in variables and "grid: numpy.ndarray (3x4)" in variables
        assert f"In[{busy_cell}] (running now: its output so far):\\nimport time, pathlib" in output
        assert "tick 0" in output
        stop.touch()  # stop the Hermes turn while the cell runs
        eventually(lambda: Path(f"{stop}-done").exists(), timeout=30, what="the turn stopped")
        assert not cell.done()  # the stop went to Hermes, not to the kernel
        # run_code (allowed for the session, so no Run card) showed it waits for the busy cell, with Stop
        assert f"Waiting for the running cell In[{busy_cell}] to finish" in Path(f"{stop}-done").read_text()
        end.touch()
        printed = cell.result(timeout=60)
    ticks = [int(n) for n in re.findall(r"^tick (\d+)$", printed, re.M)]
    assert ticks == list(range(len(ticks))) and len(ticks) >= 20, printed[-500:]  # every tick, in order
    assert f"cell done after {len(ticks)} ticks" in printed and "Traceback" not in printed
    report = kernel.run(
        "import json\nprint(json.dumps([(r.tool, r.seconds, r.running_cell) for r in "
        "KERNEL.recent_calls()]))\n"
        "print('TURN', handle.wait(timeout=30).status)"
    )
    calls: list[tuple[str, float, Any]] = json.loads(report.splitlines()[0])
    reads = [
        (tool, seconds) for tool, seconds, running in calls if running == busy_cell and tool != "run_code"
    ]
    assert [tool for tool, _ in reads] == ["list_variables", "read_output"], calls
    assert all(seconds < READ_BOUND for _, seconds in reads), reads
    assert "TURN interrupted" in report, report
    # run_code (allowed for the session) waited behind the busy cell; the stopped turn dropped it: it never
    # ran
    assert "RAN False" in kernel.run("print('RAN', 'agent_ran' in dir())"), (
        "the waiting run ran after the stop"
    )


def test_a_cells_plot_goes_to_the_model_as_an_image_and_the_tool_part_shows_it(
    hermes: LocalHermes, kernels: list[Kernel], tmp_path: Path
) -> None:
    """A cell displays a PNG (as a plot does); read_output sends it as MCP image content. The newer Hermes,
    with a model that takes images in tool results, hands it to the model natively (resized, as its own image
    lane does); the tool part records exactly the PNG that was sent. Without that lane the model gets Hermes'
    MEDIA: path in the text (what 0.19.0 always does: tools/mcp_tool.py _cache_mcp_image_block)."""
    png = png_bytes(40, 30)
    kernel = Kernel(hermes, tmp_path)
    kernels.append(kernel)
    kernel.run(SETUP)
    shown = kernel.run(
        f"from IPython.display import Image, display\ndisplay(Image(data={png!r}))\n"
        "print('CELL', len(In) - 1)"
    )
    cell = int(re.search(r"CELL (\d+)", shown).group(1))  # type: ignore[union-attr]
    ask = (
        f"r = h.ask('KERNEL read_output {cell}', new=True)\nimport json\nprint(r.text)\n"
        "print('SENT', json.dumps([i['label'] + ' ' + str(i['bytes']) + ' ' + i['data'][:40] "
        "for t in r.tools for i in t.get('sent_images') or []]))"
    )
    with native_images(hermes.home):
        native = kernel.run(ask)
    assert "Images received: 1 (image/" in native, native
    assert f"image/png 40x30, 1 KB (In[{cell}] display 1): attached" in native
    import base64

    sent = json.loads(native.split("SENT ", 1)[1].splitlines()[0])
    assert sent == [f"In[{cell}] display 1 {len(png)} {base64.b64encode(png).decode()[:40]}"]
    text_only = kernel.run(ask)
    assert "Images received" not in text_only and "MEDIA:" in text_only, text_only
