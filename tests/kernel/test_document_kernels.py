"""The document comm (kernel/document.py) in real kernels, jupyter_client playing the page with the extension:
the kernel opens the comm, a hello attaches the page (on ipykernel 7.4 even while a cell runs, sent on the
page's subshell as JupyterLab does), a request gets its reply over the comm, and the page closing the comm
detaches it.
"""

from __future__ import annotations

from typing import Any

import pytest

from hermes_notebook.kernel.document import TARGET
from tests.shell.test_subshells import (
    _create_subshell,
    _idle,
    _iopub_until,
    _stdout,
    _supports_subshells,
    kernel,  # noqa: F401  (the fixture: a started kernel and its client, the page stand-in)
)

OPEN = "from hermes_notebook.kernel.document import DOCUMENT\nprint('OPEN', DOCUMENT.open())"
#: Keeps the main shell busy until the page is attached (or 20 s), ticking so the test knows it started.
BUSY = """
import time
t0 = time.time()
print("tick", flush=True)
while not DOCUMENT.attached and time.time() - t0 < {limit}:
    time.sleep(0.01)
print("DURING", DOCUMENT.attached)
"""


def _run(client: Any, code: str) -> str:
    msg_id = client.execute(code)
    return _stdout(_iopub_until(client, _idle(msg_id)), msg_id)


def _comm_msg(client: Any, comm_id: str, data: dict[str, Any], subshell: str | None = None) -> None:
    msg = client.session.msg("comm_msg", {"comm_id": comm_id, "data": data})
    if subshell is not None:
        msg["header"]["subshell_id"] = subshell
    client.shell_channel.send(msg)


@pytest.mark.parametrize(
    "kernel", ["python3", "hn-k629"], indirect=True, ids=["ipykernel-7.4", "ipykernel-6.29"]
)
def test_the_page_attaches_answers_and_detaches_over_the_kernels_comm(kernel: Any) -> None:  # noqa: F811 (the fixture imported above)
    """comm_open to the extension's target; hello attaches (7.4: during a busy cell, on the page's subshell;
    6.29: once the cell ends); a request's reply comes back through the comm; comm_close detaches."""
    subshell = _create_subshell(kernel) if _supports_subshells(kernel) else None
    opened = kernel.execute(OPEN)
    messages = _iopub_until(kernel, _idle(opened))
    assert "OPEN True" in _stdout(messages, opened)
    [comm_open] = [m for m in messages if m["msg_type"] == "comm_open"]
    assert comm_open["content"]["target_name"] == TARGET and comm_open["content"]["data"] == {"protocol": 1}
    comm_id = comm_open["content"]["comm_id"]

    busy = kernel.execute(BUSY.replace("{limit}", "20" if subshell else "1"))
    messages = _iopub_until(kernel, lambda m: m["msg_type"] == "stream" and "tick" in m["content"]["text"])
    _comm_msg(kernel, comm_id, {"type": "hello", "client": "page-1", "app": "lab"}, subshell)
    messages += _iopub_until(kernel, _idle(busy))
    assert f"DURING {subshell is not None}" in _stdout(messages, busy)
    assert "ATTACHED True" in _run(kernel, "print('ATTACHED', DOCUMENT.attached)")

    asked = kernel.execute(
        "from hermes_notebook import runtime\nf = runtime.submit(DOCUMENT.request('outline'))"
    )
    request = _iopub_until(kernel, lambda m: m["msg_type"] == "comm_msg")[-1]["content"]["data"]
    assert (request["type"], request["op"], request["to"]) == ("request", "outline", "page-1")
    _iopub_until(kernel, _idle(asked))
    _comm_msg(
        kernel,
        comm_id,
        {"type": "reply", "id": request["id"], "client": "page-1", "ok": True, "cells": []},
        subshell,
    )
    assert "ANSWER True {'ok': True, 'cells': []}" in _run(
        kernel, "a = f.result(timeout=10)\nprint('ANSWER', a.ok, {'ok': True, **a.data})"
    )

    close = kernel.session.msg("comm_close", {"comm_id": comm_id, "data": {}})
    kernel.shell_channel.send(close)
    _iopub_until(kernel, _idle(close["header"]["msg_id"]))
    assert "ATTACHED False" in _run(kernel, "print('ATTACHED', DOCUMENT.attached)")
