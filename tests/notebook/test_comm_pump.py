"""The comm pump without a browser: guards, and real ipykernel 7.4 / 6.29 kernels driven by jupyter_client.

A kernel client plays the frontend: it queues cells behind a blocking one (as Run All does) and sends a
``comm_msg`` while the first cell waits, exactly what a widget click sends.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from jupyter_client import KernelManager
from jupyter_client.kernelspec import KernelSpecManager

from hermes_notebook.notebook.comm_pump import CommPump, CommPumpWarning
from tests.helpers import REPO

ROOT = REPO
EXTRA_KERNELS = (
    Path(os.environ.get("HN_KERNELS_DIR", ROOT / ".venv-kernels")) / "share" / "jupyter" / "kernels"
)


class _NoKernelBits:
    """A 'kernel' with none of the internals the pump needs."""


def test_unavailable_outside_a_kernel() -> None:
    """Outside a kernel the pump says why it cannot work, warns, and ``poll`` does nothing."""
    with pytest.warns(CommPumpWarning, match="not running in an IPython kernel"):
        pump = CommPump()
    assert not pump.available and pump.poll() == 0
    pump.close()


def test_missing_internals_are_reported() -> None:
    """A kernel object without the private names degrades to 'unavailable' with the missing name."""
    pump = CommPump(_NoKernelBits(), warn=False)
    assert not pump.available and "session" in pump.reason


def _kernel_names() -> list[Any]:
    names: list[Any] = [pytest.param("python3", id="ipykernel-7.4-project-venv")]
    spec = EXTRA_KERNELS / "hn-k629"
    names.append(
        pytest.param(
            "hn-k629",
            id="ipykernel-6.29",
            marks=pytest.mark.skipif(
                not spec.exists(), reason="run scripts/setup-kernels for the ipykernel 6.29 kernelspec"
            ),
        )
    )
    return names


@pytest.fixture(params=_kernel_names())
def kernel(request: pytest.FixtureRequest) -> Iterator[Any]:
    """A started kernel and its client (the frontend stand-in)."""
    manager = KernelManager(kernel_name=request.param)
    manager.kernel_spec_manager = KernelSpecManager(
        kernel_dirs=[str(EXTRA_KERNELS), *KernelSpecManager().kernel_dirs]
    )
    manager.start_kernel(env={**os.environ, "PYTHONPATH": str(ROOT)})
    client = manager.client()
    client.start_channels()
    try:
        client.wait_for_ready(timeout=60)
        yield client, manager
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)


BLOCKING_CELL = """
import threading, time, comm
from hermes_notebook.notebook.comm_pump import CommPump
seen = []
c = comm.create_comm(target_name="hn-test", comm_id="hn-test-comm")
c.on_msg(lambda m: seen.append(
    (m["content"]["data"], threading.current_thread() is threading.main_thread(), time.time())
))
t0 = time.time()
with CommPump() as pump:
    print("PUMP", pump.available, pump.version)
    while not seen and time.time() - t0 < 15:
        pump.poll()
        time.sleep(0.01)
print("CELL1", bool(seen))
"""


def _read_until(
    client: Any,
    done: Callable[[dict[str, Any]], bool],
    timeout: float = 30,
    what: str = "the awaited kernel message",
) -> list[dict[str, Any]]:
    """IOPub messages up to and including the first for which ``done(msg)`` is true."""
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
    raise AssertionError(f"{what} did not arrive in time")


def _collect(client: Any, until_idle_of: str, timeout: float = 30) -> list[dict[str, Any]]:
    return _read_until(
        client,
        lambda msg: (
            msg["msg_type"] == "status"
            and msg["content"]["execution_state"] == "idle"
            and msg["parent_header"].get("msg_id") == until_idle_of
        ),
        timeout,
        "the kernel going idle after the last cell",
    )


def _pumping(client: Any, cell: str) -> list[dict[str, Any]]:
    """Wait until ``cell`` (a BLOCKING_CELL) prints that its pump runs: from then on it blocks in the pump
    loop."""
    return _read_until(
        client,
        lambda msg: (
            msg["msg_type"] == "stream"
            and msg["parent_header"].get("msg_id") == cell
            and "PUMP" in msg["content"]["text"]
        ),
        what="cell 1's PUMP line",
    )


def _stdout(messages: list[dict[str, Any]], msg_id: str) -> str:
    return "".join(
        m["content"]["text"]
        for m in messages
        if m["msg_type"] == "stream" and m["parent_header"].get("msg_id") == msg_id
    )


def test_click_is_handled_while_the_cell_blocks(kernel: Any) -> None:
    """A comm_msg sent mid-cell runs on the main thread at once; queued cells run after, in order, and see
    it."""
    client, _ = kernel
    cell1 = client.execute(BLOCKING_CELL)
    cell2 = client.execute("print('CELL2', seen[0][0], seen[0][1])")
    cell3 = client.execute("print('CELL3')")
    messages = _pumping(client, cell1)  # cell 1 is blocking now, cells 2 and 3 are queued behind it
    sent = time.time()
    client.shell_channel.send(
        client.session.msg("comm_msg", {"comm_id": "hn-test-comm", "data": {"choice": "once"}})
    )
    messages += _collect(client, cell3)
    assert "PUMP True" in _stdout(messages, cell1)
    assert "CELL1 True" in _stdout(messages, cell1)
    assert "CELL2 {'choice': 'once'} True" in _stdout(messages, cell2)
    assert "CELL3" in _stdout(messages, cell3)
    inputs = [m for m in messages if m["msg_type"] == "execute_input"]
    assert [m["parent_header"]["msg_id"] for m in inputs] == [cell1, cell2, cell3]
    handled = client.execute_interactive("print(seen[0][2])", timeout=10)
    assert handled["content"]["status"] == "ok"
    status = [
        m for m in messages if m["msg_type"] == "status" and m["parent_header"].get("msg_type") == "comm_msg"
    ]
    assert [m["content"]["execution_state"] for m in status] == ["busy", "idle"]
    assert time.time() - sent < 15


def test_interrupt_while_pumping(kernel: Any) -> None:
    """Kernel > Interrupt during the pump raises KeyboardInterrupt within a second; the next cell still
    runs."""
    client, manager = kernel
    cell1 = client.execute(BLOCKING_CELL.replace("< 15", "< 30"))
    cell2 = client.execute("print('CELL2 ran')")
    _pumping(client, cell1)
    t0 = time.monotonic()
    manager.interrupt_kernel()
    deadline = time.monotonic() + 10
    error = None
    while time.monotonic() < deadline and error is None:
        try:
            msg = client.get_iopub_msg(timeout=0.5)
        except Exception:
            continue
        if msg["msg_type"] == "error" and msg["parent_header"].get("msg_id") == cell1:
            error = msg
    assert error is not None and error["content"]["ename"] == "KeyboardInterrupt"
    assert time.monotonic() - t0 < 1.0
    del cell2  # aborted with the rest of the queue, as Jupyter does after an error
    statuses = []
    for _ in range(20):  # requests that arrive while the kernel still aborts the old queue are aborted too
        statuses.append(client.execute_interactive("print('after')", timeout=15)["content"]["status"])
        if statuses[-1] == "ok":
            break
        time.sleep(0.25)
    assert statuses[-1] == "ok", statuses


DISABLE_PUMP_CELL = """
import hermes_notebook.notebook.comm_pump as _cp
# as on a kernel without the internals
_cp.CommPump._locate = lambda self: "the kernel has no 'shell_handlers'"
%load_ext hermes_notebook
"""


def test_without_the_pump_hermes_warns_and_falls_back_to_input(hermes: Any, workdir: Path) -> None:
    """With the pump's kernel internals missing, ``%hermes`` warns, still blocks, and takes "deny" from
    ``input()``."""
    workdir.mkdir(parents=True)
    settings = hermes.settings()
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "HERMES_API_URL": settings.api_url,
        "HERMES_DASHBOARD_URL": settings.dashboard_url,
        "HERMES_API_KEY": settings.api_key.reveal(),
        "HERMES_DASHBOARD_TOKEN": settings.dashboard_token.reveal(),
    }
    manager = KernelManager(kernel_name="python3")  # the project venv's own ipykernel (7.4)
    manager.start_kernel(env=env)
    client = manager.client()
    client.start_channels()
    try:
        client.wait_for_ready(timeout=60)
        prefix: list[str] = []
        setup = client.execute_interactive(
            DISABLE_PUMP_CELL + "import sys; print(sys.prefix)",
            timeout=60,
            output_hook=lambda m: prefix.append(m["content"].get("text", "")),
        )
        assert setup["content"]["status"] == "ok" and "".join(prefix).strip() == str(ROOT / ".venv")
        cell = client.execute(f"r = %hermes DANGER {workdir.name}", allow_stdin=True)
        after = client.execute("print('STATUS', r.status, 'BLOCKED' in str(r.tools[0]['result']), r.text)")
        again = client.execute(
            "r2 = %hermes hello again without the pump"
        )  # warns again, not once per kernel
        last = client.execute("print('AGAIN', r2.status, r2.text)")
        request = client.get_stdin_msg(timeout=60)  # the cell blocks on input(), Run All style
        assert request["msg_type"] == "input_request" and not request["content"]["password"]
        assert "Allow?" in request["content"]["prompt"] and "deny" in request["content"]["prompt"]
        client.input("deny")
        messages = _collect(client, last, timeout=60)
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)

    def stderr(msg_id: str) -> str:
        return "".join(
            m["content"]["text"]
            for m in messages
            if m["msg_type"] == "stream"
            and m["content"]["name"] == "stderr"
            and m["parent_header"].get("msg_id") == msg_id
        )

    errors = [m["content"]["ename"] for m in messages if m["msg_type"] == "error"]
    assert not errors
    for msg_id in (cell, again):
        assert "CommPumpWarning: the buttons may not respond while this cell waits" in stderr(msg_id)
        assert "the kernel has no 'shell_handlers'" in stderr(msg_id) and "text prompt" in stderr(msg_id)
    assert _stdout(messages, last).startswith("AGAIN complete") and "hello again without the pump" in _stdout(
        messages, last
    )
    assert f"rm -rf ./{workdir.name}" in _stdout(messages, cell)  # what input() asked about
    out = _stdout(messages, after)
    assert out.startswith("STATUS complete True") and "blocked" in out.lower()
    assert workdir.exists()
