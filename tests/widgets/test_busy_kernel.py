"""Hermes while a cell runs, in a REAL ipykernel 7.4 against the real Hermes, without a browser.

A jupyter_client client plays JupyterLab with its default ``commsOverSubshells`` (one subshell for the
widgets' comm target): it sends exactly the comm messages the views send, with that subshell in their header,
while a cell keeps the main shell busy. The chat answers a prompt, the jobs widget lists, pauses and runs a
job, and a background ``%hermes -b`` turn streams into its live view, whose approval button is answered and
takes effect: all before the busy cell ends, and the busy cell's own output stays complete and in order.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from jupyter_client import KernelManager

from hermes_notebook._demo.local_hermes import LocalHermes
from tests.kernels import kernel_env

Msg = dict[str, Any]


class FrontEnd:
    """The client side of one kernel: every IOPub message kept (with its arrival time), waits by predicate."""

    def __init__(self, hermes: LocalHermes, cwd: Path) -> None:
        self.manager = KernelManager(kernel_name="python3")
        self.manager.start_kernel(env=kernel_env(hermes), cwd=str(cwd))
        self.client = self.manager.client()
        self.client.start_channels()
        self.client.wait_for_ready(timeout=60)
        self.messages: list[Msg] = []

    def wait(self, done: Callable[[Msg], bool], timeout: float, what: str) -> Msg:
        """The first IOPub message (seen before or arriving now) for which ``done`` is true."""
        for msg in self.messages:
            if done(msg):
                return msg
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                msg = self.client.get_iopub_msg(timeout=0.5)
            except Exception:  # queue.Empty
                continue
            msg["received"] = time.time()
            self.messages.append(msg)
            if done(msg):
                return msg
        raise AssertionError(f"{what} did not arrive within {timeout} s")

    def idle(self, msg_id: str, timeout: float = 120) -> Msg:
        return self.wait(
            lambda m: (
                m["msg_type"] == "status"
                and m["content"]["execution_state"] == "idle"
                and m["parent_header"].get("msg_id") == msg_id
            ),
            timeout,
            f"idle after {msg_id}",
        )

    def stdout(self, msg_id: str) -> str:
        return "".join(
            m["content"]["text"]
            for m in self.messages
            if m["msg_type"] == "stream" and m["parent_header"].get("msg_id") == msg_id
        )

    def errors(self) -> list[str]:
        return [m["content"]["evalue"] for m in self.messages if m["msg_type"] == "error"]

    def create_subshell(self) -> str:
        msg = self.client.session.msg("create_subshell_request", {})
        self.client.control_channel.send(msg)
        reply = self.client.control_channel.get_msg(timeout=10)
        return str(reply["content"]["subshell_id"])

    def send_custom(self, comm_id: str, content: dict[str, Any], subshell: str) -> str:
        """What a view's ``model.send(content)`` puts on the wire, on the subshell the front end chose."""
        msg = self.client.session.msg(
            "comm_msg", {"comm_id": comm_id, "data": {"method": "custom", "content": content}}
        )
        msg["header"]["subshell_id"] = subshell
        self.client.shell_channel.send(msg)
        return str(msg["header"]["msg_id"])

    def stop(self) -> None:
        self.client.stop_channels()
        if self.manager.has_kernel:
            self.manager.shutdown_kernel(now=True)


@pytest.fixture
def front_end(hermes: LocalHermes, tmp_path: Path) -> Iterator[FrontEnd]:
    fe = FrontEnd(hermes, tmp_path)
    try:
        yield fe
    finally:
        fe.stop()


def _custom(msg: Msg, comm_id: str) -> dict[str, Any] | None:
    """The content of a kernel -> view custom message on ``comm_id``."""
    if msg["msg_type"] != "comm_msg" or msg["content"].get("comm_id") != comm_id:
        return None
    data = msg["content"].get("data") or {}
    return data.get("content") if data.get("method") == "custom" else None


def _texts(msg: Msg, comm_id: str) -> list[str]:
    """The text a chat-protocol message adds (appends, ``more``, new parts, splices, whole messages)."""
    content = _custom(msg, comm_id) or {}
    if content.get("type") == "more":
        return [str(content.get("text", ""))]
    found = []
    for change in content.get("changes") or []:
        if change.get("op") in ("append", "splice"):
            found.append(str(change.get("text", "")))
        elif change.get("op") == "part":
            found.append(str(change["part"].get("text") or ""))
        elif change.get("op") == "message":
            found += [str(p.get("text") or "") for p in change["message"].get("parts", [])]
    return found


def _shown(fe: FrontEnd, comm_id: str, text: str) -> Callable[[Msg], bool]:
    """True once the text streamed to the views of ``comm_id`` so far holds ``text``."""
    streamed: list[str] = []

    def seen(msg: Msg) -> bool:
        streamed.extend(_texts(msg, comm_id))
        return text in "".join(streamed)

    return seen


def _pending_approval(msg: Msg, comm_id: str) -> dict[str, str] | None:
    """The ids of a pending approval a batch shows (what the card's button sends back)."""
    content = _custom(msg, comm_id) or {}
    for change in content.get("changes") or []:
        if change.get("op") == "part":
            part, message_id = change["part"], change["message_id"]
            interaction = part.get("interaction")
        elif change.get("op") == "patch":
            part, message_id = {"id": change["part_id"]}, change["message_id"]
            interaction = (change.get("fields") or {}).get("interaction")
        else:
            continue
        if interaction and interaction.get("kind") == "approval" and interaction.get("status") == "pending":
            return {"message_id": message_id, "part_id": part["id"], "request_id": interaction["request_id"]}
    return None


SETUP = """
import hermes_notebook as hn
from hermes_notebook.widgets import Chat, Jobs
h = hn.connect()
chat = Chat().wait_ready()
job = h.jobs.create(name="busy-kernel-{tag}", schedule="every 2h", prompt="hello from a job")
jobs = Jobs(include_disabled=True, auto_refresh=0)
jobs.wait_idle()
print("IDS", chat.comm.comm_id, jobs.comm.comm_id, job.id, chat.comm_routing, jobs.comm_routing)
"""

BACKGROUND = "%load_ext hermes_notebook\nturn = %hermes -b --new DANGER {target}"

#: The user's long cell: ticks, until the test drops the flag file (or 90 s pass).
BUSY = """
import os, time
t0 = time.time()
i = 0
while not os.path.exists({flag!r}) and time.time() - t0 < 90:
    print("tick", i, flush=True)
    i += 1
    time.sleep(0.2)
print("BUSY DONE", i, time.time())
"""


def test_chat_jobs_and_a_background_turn_work_while_a_cell_runs(
    front_end: FrontEnd, hermes: LocalHermes, workdir: Path, tmp_path: Path
) -> None:
    """While a cell runs: a chat prompt answered long before the cell ends, jobs listed, run and paused, a
    background turn's approval answered and its command run; the cell is never interrupted and its output is
    all its own."""
    fe = front_end
    subshell = fe.create_subshell()  # JupyterLab's per-comm-target subshell for "jupyter.widget"
    tag = uuid.uuid4().hex[:8]
    setup = fe.client.execute(SETUP.replace("{tag}", tag))
    fe.idle(setup)
    ids = fe.stdout(setup).split()
    assert ids[:1] == ["IDS"] and ids[4:] == ["followed", "followed"], (fe.stdout(setup), fe.errors())
    chat_id, jobs_id, job_id = ids[1:4]

    workdir.mkdir(parents=True)
    background = fe.client.execute(BACKGROUND.replace("{target}", workdir.name))
    fe.idle(background)  # -b returns at once; the turn goes on in the background
    turn_open = fe.wait(
        lambda m: (
            m["msg_type"] == "comm_open" and (m["content"]["data"].get("state") or {}).get("mode") == "turn"
        ),
        10,
        "the %hermes live view",
    )
    turn_id = turn_open["content"]["comm_id"]

    flag = tmp_path / "stop-busy-cell"
    busy = fe.client.execute(BUSY.replace("{flag!r}", repr(str(flag))))
    fe.wait(
        lambda m: m["msg_type"] == "stream" and m["parent_header"].get("msg_id") == busy, 20, "the first tick"
    )

    def busy_ended(m: Msg) -> bool:
        return (
            m["msg_type"] == "status"
            and m["parent_header"].get("msg_id") == busy
            and m["content"]["execution_state"] == "idle"
        )

    # 1. the chat takes a prompt and streams the answer
    sent = time.time()
    fe.send_custom(chat_id, {"type": "send", "text": f"hello while busy {tag}", "images": []}, subshell)
    answered = _shown(fe, chat_id, f"You said: hello while busy {tag}")
    answer = fe.wait(lambda m: answered(m) or busy_ended(m), 30, "the chat's answer")
    assert not busy_ended(answer), "the chat answered only after the cell"
    # Well before the cell's 90 s: a fresh 0.19.0 builds its agent on the first turn (MCP discovery
    # included, with its [mcp] extra), 6-9 s at load 6-9 on 2 cores; the speed itself is benchmarks' business
    assert answer["received"] - sent < 30

    # 2. the jobs widget lists, runs and pauses a job
    def row_state(m: Msg) -> str | None:
        if m["msg_type"] != "comm_msg" or m["content"].get("comm_id") != jobs_id:
            return None
        rows = (m["content"]["data"].get("state") or {}).get("jobs") or []
        return next((str(row.get("state")) for row in rows if row.get("id") == job_id), None)

    def result(request: int) -> Callable[[Msg], bool]:
        return lambda m: busy_ended(m) or (_custom(m, jobs_id) or {}).get("request") == request

    listed_from = len(fe.messages)
    fe.send_custom(jobs_id, {"type": "refresh"}, subshell)
    listed = fe.wait(
        lambda m: (
            busy_ended(m)
            or (
                fe.messages.index(m) >= listed_from
                and m["msg_type"] == "comm_msg"
                and m["content"].get("comm_id") == jobs_id
                and "updated_at" in (m["content"]["data"].get("state") or {})
            )
        ),
        30,
        "the refreshed list",
    )
    assert not busy_ended(listed)
    assert any(row_state(m) == "scheduled" for m in fe.messages)  # our job is in the list
    fe.send_custom(jobs_id, {"type": "action", "request": 1, "action": "run", "id": job_id}, subshell)
    ran = fe.wait(result(1), 30, "the run result")
    assert not busy_ended(ran) and _custom(ran, jobs_id)["ok"], _custom(ran, jobs_id)
    fe.send_custom(jobs_id, {"type": "action", "request": 2, "action": "pause", "id": job_id}, subshell)
    paused = fe.wait(result(2), 30, "the pause result")
    assert not busy_ended(paused) and _custom(paused, jobs_id)["ok"], _custom(paused, jobs_id)
    shown = fe.wait(lambda m: busy_ended(m) or row_state(m) == "paused", 30, "the paused row")
    assert not busy_ended(shown)

    # 3. the background turn's live view shows its approval; the button answers it; the command runs
    pending = fe.wait(
        lambda m: busy_ended(m) or _pending_approval(m, turn_id) is not None, 60, "the approval card"
    )
    assert not busy_ended(pending)
    card = _pending_approval(pending, turn_id)
    assert card is not None
    fe.send_custom(turn_id, {"type": "respond", **card, "response": "once"}, subshell)
    ran_it = _shown(fe, turn_id, "Dangerous command ran")
    done = fe.wait(lambda m: ran_it(m) or busy_ended(m), 60, "the turn's end")
    assert not busy_ended(done), "the approval took effect only after the cell"
    assert not workdir.exists()  # "once" let the rm -rf run

    # 4. the user's cell was never interrupted: it ends when told, every tick there, in order, nothing else in
    #    it
    flag.write_text("done")
    fe.idle(busy)
    out = fe.stdout(busy).splitlines()
    assert out[-1].startswith("BUSY DONE")
    count = int(out[-1].split()[2])
    assert out[:-1] == [f"tick {i}" for i in range(count)]
    ended = float(out[-1].split()[3])
    assert max(answer["received"], paused["received"], ran["received"], done["received"]) < ended
    assert not fe.errors(), fe.errors()
    cleanup = fe.client.execute("h.jobs.delete(job.id); chat.close(); jobs.close(); h.close()")
    fe.idle(cleanup)
