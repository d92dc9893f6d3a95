"""Comm messages follow the front end's subshell (shell/subshells.py), on real kernels driven by
jupyter_client.

The kernel client plays JupyterLab with ``commsOverSubshells`` on: it creates a subshell (control channel) and
sends a ``comm_msg`` whose header names it, while a cell keeps the main shell busy. On ipykernel 7.4 that
message waits for the cell unless the comm follows the front end's subshell; with it, the handler runs at once
on the subshell's thread and the cell's output is untouched. ipykernel 6.29 has no subshells: the helper says
so and changes nothing.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from jupyter_client import KernelManager
from jupyter_client.kernelspec import KernelSpecManager

from hermes_notebook.shell.subshells import follow_frontend_subshells, kernel_has_subshells
from tests.helpers import REPO

ROOT = REPO
EXTRA_KERNELS = (
    Path(os.environ.get("HN_KERNELS_DIR", ROOT / ".venv-kernels")) / "share" / "jupyter" / "kernels"
)


def test_outside_a_kernel_nothing_changes() -> None:
    """No kernel, no comm: the helper reports "none" and raises nothing."""
    assert not kernel_has_subshells()
    assert follow_frontend_subshells(None) == "none"
    assert follow_frontend_subshells(object()) == "none"


@pytest.fixture
def kernel(request: pytest.FixtureRequest) -> Iterator[Any]:
    """A started kernel (``request.param``: a kernelspec name) and its client (the front end stand-in)."""
    name = request.param
    if name != "python3" and not (EXTRA_KERNELS / name).exists():
        pytest.skip(f"run scripts/setup-kernels for the {name} kernelspec")
    manager = KernelManager(kernel_name=name)
    manager.kernel_spec_manager = KernelSpecManager(
        kernel_dirs=[str(EXTRA_KERNELS), *KernelSpecManager().kernel_dirs]
    )
    manager.start_kernel(env={**os.environ, "PYTHONPATH": str(ROOT)})
    client = manager.client()
    client.start_channels()
    try:
        client.wait_for_ready(timeout=60)
        yield client
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)


#: Cell 1 makes a comm the way our widgets do (opened by a cell, published to from another thread afterwards).
SETUP = """
import threading, time, comm
from hermes_notebook.shell.subshells import follow_frontend_subshells
seen = []
c = comm.create_comm(target_name="hn-sub", comm_id="hn-sub-comm")
c.on_msg(lambda m: seen.append((m["content"]["data"], threading.current_thread().name, time.time())))
publisher = threading.Thread(target=lambda: c.send({"from": "another thread"}), name="publisher")
publisher.start(); publisher.join()
print("ROUTING", {follow} and follow_frontend_subshells(c))
"""

#: Cell 2 keeps the main shell busy (up to ``limit`` s) and prints ticks; it notes whether the message came
# meanwhile.
BUSY = """
t0 = time.time()
for i in range(400):
    if i % 50 == 0:
        print("tick", i // 50)
    if seen or time.time() - t0 > {limit}:
        break
    time.sleep(0.01)
print("DURING", bool(seen), "ENDED", time.time())
"""


def _iopub_until(client: Any, done: Any, timeout: float = 30) -> list[dict[str, Any]]:
    messages = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            msg = client.get_iopub_msg(timeout=1)
        except Exception:  # queue.Empty
            continue
        messages.append(msg)
        if done(msg):
            return messages
    raise AssertionError("the awaited kernel message did not arrive in time")


def _idle(msg_id: str) -> Any:
    return lambda m: (
        m["msg_type"] == "status"
        and m["content"]["execution_state"] == "idle"
        and m["parent_header"].get("msg_id") == msg_id
    )


def _stdout(messages: list[dict[str, Any]], msg_id: str) -> str:
    return "".join(
        m["content"]["text"]
        for m in messages
        if m["msg_type"] == "stream" and m["parent_header"].get("msg_id") == msg_id
    )


def _create_subshell(client: Any) -> str | None:
    """What JupyterLab does for a comm target when the kernel lists "kernel subshells": one subshell for
    it."""
    msg = client.session.msg("create_subshell_request", {})
    client.control_channel.send(msg)
    reply = client.control_channel.get_msg(timeout=10)
    assert reply["parent_header"]["msg_id"] == msg["header"]["msg_id"]
    return reply["content"].get("subshell_id")


def _supports_subshells(client: Any) -> bool:
    """What the front end reads from kernel_info before it makes subshells for comms."""
    msg_id = client.kernel_info()
    while True:
        reply = client.get_shell_msg(timeout=10)
        if reply["parent_header"].get("msg_id") == msg_id:
            return "kernel subshells" in reply["content"].get("supported_features", [])


def _click_during_busy_cell(client: Any, *, follow: bool, limit: float) -> tuple[str, str, str]:
    """Run SETUP and BUSY; send a comm_msg on a subshell (if the kernel has them) while BUSY runs.

    Returns SETUP's, BUSY's and a final check cell's output."""
    subshell = _create_subshell(client) if _supports_subshells(client) else None
    setup = client.execute(SETUP.replace("{follow}", str(follow)))
    messages = _iopub_until(client, _idle(setup))
    busy = client.execute(BUSY.replace("{limit}", str(limit)))
    messages += _iopub_until(client, lambda m: m["msg_type"] == "stream" and "tick 0" in m["content"]["text"])
    click = client.session.msg("comm_msg", {"comm_id": "hn-sub-comm", "data": {"choice": "once"}})
    if subshell is not None:
        click["header"]["subshell_id"] = subshell
    client.shell_channel.send(click)
    waiting = {busy, click["header"]["msg_id"]}  # both idle: the cell ended and the message was handled

    def both_idle(m: dict[str, Any]) -> bool:
        if m["msg_type"] == "status" and m["content"]["execution_state"] == "idle":
            waiting.discard(m["parent_header"].get("msg_id"))
        return not waiting

    messages += _iopub_until(client, both_idle)
    check = client.execute(
        "print('SEEN', seen[0][0], seen[0][1] == threading.main_thread().name, seen[0][2])"
    )
    messages += _iopub_until(client, _idle(check))
    return _stdout(messages, setup), _stdout(messages, busy), _stdout(messages, check)


@pytest.mark.parametrize("kernel", ["python3"], indirect=True, ids=["ipykernel-7.4"])
def test_a_followed_comm_is_handled_on_its_subshell_while_a_cell_runs(kernel: Any) -> None:
    """With the route, the message sent on a subshell is handled mid-cell, off the main thread; the cell's
    own output is complete and in order."""
    routing, busy, check = _click_during_busy_cell(kernel, follow=True, limit=20)
    assert "ROUTING followed" in routing
    assert busy.startswith("tick 0\n") and "DURING True" in busy, busy
    ended = float(busy.split("ENDED")[1])
    seen = check.split()
    assert seen[1:4] == ["{'choice':", "'once'}", "False"], check  # the data, and not on the main thread
    assert float(seen[4]) < ended
    ticks = [line for line in busy.splitlines() if line.startswith("tick")]
    assert ticks == [f"tick {i}" for i in range(len(ticks))]


@pytest.mark.parametrize("kernel", ["python3"], indirect=True, ids=["ipykernel-7.4"])
def test_without_the_route_ipykernel_74_makes_the_message_wait(kernel: Any) -> None:
    """The control: the same message, same subshell, no route: 7.4 sends it to the busy main shell, where it
    runs only once the cell is over (a prompt typed in the chat waited for the whole cell)."""
    routing, busy, check = _click_during_busy_cell(kernel, follow=False, limit=2)
    assert "ROUTING False" in routing
    assert "DURING False" in busy, busy
    seen = check.split()
    assert seen[3] == "True" and float(seen[4]) > float(busy.split("ENDED")[1]), check


@pytest.mark.parametrize("kernel", ["hn-k629"], indirect=True, ids=["ipykernel-6.29"])
def test_ipykernel_6_has_no_subshells_and_nothing_changes(kernel: Any) -> None:
    """ipykernel 6: the helper answers "none"; the message is handled on the main thread after the cell."""
    routing, busy, check = _click_during_busy_cell(kernel, follow=True, limit=2)
    assert "ROUTING none" in routing
    assert "DURING False" in busy, busy
    assert check.split()[3] == "True", check


FRONTEND_TARGET = """
import threading, time
from hermes_notebook.shell.subshells import follow_frontend_subshells
seen, routes = [], []
def opened(comm, msg):  # a comm the front end opens (as a front-end extension's would be)
    routes.append(follow_frontend_subshells(comm))
    comm.on_msg(lambda m: seen.append((m["content"]["data"], threading.current_thread().name, time.time())))
get_ipython().kernel.comm_manager.register_target("hn-frontend", opened)
"""


@pytest.mark.parametrize("kernel", ["python3"], indirect=True, ids=["ipykernel-7.4"])
def test_a_comm_the_front_end_opens_can_follow_too(kernel: Any) -> None:
    """A comm opened by the front end (its target calls the helper) and written to by a cell also runs its
    messages on the front end's subshell while a cell runs."""
    subshell = _create_subshell(kernel)
    setup = kernel.execute(FRONTEND_TARGET)
    _iopub_until(kernel, _idle(setup))
    opening = kernel.session.msg(
        "comm_open", {"comm_id": "hn-fe-comm", "target_name": "hn-frontend", "data": {}}
    )
    opening["header"]["subshell_id"] = subshell
    kernel.shell_channel.send(opening)
    _iopub_until(kernel, _idle(opening["header"]["msg_id"]))
    # The kernel side talks on it from a cell (a diff to show, say): ipykernel 7.4 would now route to the main
    # shell.
    pushed = kernel.execute(
        "get_ipython().kernel.comm_manager.get_comm('hn-fe-comm').send({'diff': 'from a cell'})"
    )
    _iopub_until(kernel, _idle(pushed))
    busy = kernel.execute(BUSY.replace("{limit}", "20"))
    messages = _iopub_until(kernel, lambda m: m["msg_type"] == "stream" and "tick 0" in m["content"]["text"])
    click = kernel.session.msg("comm_msg", {"comm_id": "hn-fe-comm", "data": {"keep": "diff-1"}})
    click["header"]["subshell_id"] = subshell
    kernel.shell_channel.send(click)
    messages += _iopub_until(kernel, _idle(busy))
    check = kernel.execute("print('SEEN', routes, seen[0][1] != threading.main_thread().name)")
    messages += _iopub_until(kernel, _idle(check))
    assert "DURING True" in _stdout(messages, busy)
    assert "SEEN ['followed'] True" in _stdout(messages, check)
