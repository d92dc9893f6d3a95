"""An agent's run (``run_code``, ``run_cell``): allowed by a click or by the session's mode, then shown on its
tool part while it waits and runs, with Stop, within a time limit.

Why its own module: both tools run code the user must see and be able to stop, and both may meet a busy
kernel. The flow, on the package loop:

1. :func:`approve`: runs ``never`` refuses; ``ask`` hangs a Run card (a ``code`` interaction with the whole
   code) on the call's tool part and waits for Run; ``allow`` (for this session, :mod:`.grants`) skips the
   card.
2. :func:`supervise`: the run shows as a ``run`` interaction on the same part, the code again with one choice,
   Stop. While a cell is running it says "waiting for the running cell" (the run is queued behind it: it
   starts when the cell ends, never interrupting it), then "running". It ends as ``finished``, ``stopped``
   (Stop: a queued run is dropped, a running one stopped at its next Python line), ``timed out``
   (:data:`RUN_LIMIT` seconds after approval, waiting included) or ``turn ended`` (a Hermes turn that stops
   takes its run with it; it never interrupts the user's cell). The kernel settles the card with that outcome,
   so the transcript keeps what ran and how it ended.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from ..turns import CODE_CHOICES, READS_CHOICE, Interaction
from .execute import Job
from .grants import Grants

__all__ = [
    "ANSWER_TIMEOUT",
    "RUNNING",
    "RUNS_OFF",
    "RUN_LIMIT",
    "STOP",
    "STOP_WAIT",
    "UNVERIFIED",
    "RunTurn",
    "Work",
    "approve",
    "supervise",
    "unfinished",
    "waiting_for",
]

#: What a run hears where runs are ``never`` (the tool table's run gate says it before a handler runs).
RUNS_OFF = "Refused: running code in this notebook is off (share_kernel(run='never'))."
#: Seconds a Run card waits for a click; then the code is not run.
ANSWER_TIMEOUT = 120.0
#: Seconds an approved run may take, waiting for a busy kernel included; then it is stopped.
RUN_LIMIT = 120.0
#: Seconds a stopped run is given to end (code blocked in C stops only when it returns to Python).
STOP_WAIT = 3.0
#: The one choice on a running run's card.
STOP = "stop"
#: Seconds between looks at whether the user stopped the turn (Hermes ends it only after this call returns).
STOPPING_POLL = 0.1

_ids = itertools.count(1)


class RunTurn(Protocol):
    """The turn a run belongs to (:class:`~hermes_notebook.client.dashboard.Turn`)."""

    @property
    def done(self) -> bool: ...

    @property
    def stopping(self) -> bool: ...

    async def ask(self, part_id: str, interaction: Interaction, timeout: float) -> str | None: ...

    def settle(self, request_id: str, response: str) -> bool: ...


@dataclass
class Work:
    """The run itself, however it runs (a main-thread job, or a cell the notebook runs): when it started, its
    end, and how to stop it."""

    started: asyncio.Future[None]
    finished: asyncio.Future[object]
    stop: Callable[[], object]

    @classmethod
    def of_job(cls, job: Job) -> Work:
        """A main-thread job (:class:`~.execute.Job`) as seen from the package loop."""
        return cls(asyncio.wrap_future(job.started), asyncio.wrap_future(job.future), job.stop)


#: What a Run card or a diff says when the caller's session could not be verified (0.19.0: :mod:`.binding`).
UNVERIFIED = (
    "This Hermes does not say which session made this call, so it could not be verified that this notebook's "
    "own conversation asked for it."
)


async def approve(
    turn: RunTurn,
    part_id: str,
    grants: Grants,
    session_id: str,
    code: str,
    what: str,
    timeout: float = ANSWER_TIMEOUT,
    subject: str = "the code",
    *,
    verified: bool = True,
    always_ask: bool = False,
    terms: str = "with your variables and files",
) -> str | None:
    """None when the run may go ahead; else the text the agent gets (refused, denied, reads granted instead).
    ``what`` names the run for the card (``It runs cell 3 of this notebook``), ``subject`` for the agent.
    ``verified`` False: the caller's session could not be verified (0.19.0), so a session's allow does not
    apply and the card says so. ``always_ask``: a card even where runs are allowed (a restart loses the
    kernel's state). ``terms``: what the run gets to touch, as the card says it."""
    runs = grants.modes.runs
    if runs == "never":
        return RUNS_OFF
    if runs == "allow" and verified and not always_ask:
        return None
    choices = [*CODE_CHOICES, *([] if grants.may_read(session_id) else [READS_CHOICE])]
    interaction = Interaction(
        "code",
        f"code-{next(_ids)}",
        command=code,
        choices=choices,
        description=f"{what}, {terms}, only if you click Run." + ("" if verified else f" {UNVERIFIED}"),
    )
    answer = await turn.ask(part_id, interaction, timeout)
    if answer == READS_CHOICE:
        grants.grant(session_id)
        return (
            "The user did not run it, but allowed the read tools (list_variables, describe, read_cells, "
            "read_output, list_cells) for this session. The notebook and the kernel are unchanged."
        )
    if answer != "run":
        why = "denied it" if answer == "deny" else f"did not answer within {timeout:g} s"
        return (
            f"The user {why}: {subject} was NOT run and the kernel is unchanged. "
            "Do not retry without asking the user."
        )
    return None


#: What a run's card says while it runs in the kernel (a preview says it runs in a copy).
RUNNING = "Running in the kernel. Stop ends it at its next Python line."


def _card(code: str, waiting: str, allowed: bool, limit: float, running: str) -> Interaction:
    head = (
        "Runs without a Run card: runs are allowed for this session (revoke it in the chat header or with "
        "%hermes --kernel ask). "
        if allowed
        else ""
    )
    if waiting:
        text = (
            f"{head}Waiting for {waiting} to finish; it runs then (the cell is not interrupted). Stop "
            "cancels "
            f"it. Time limit: {limit:g} s."
        )
    else:
        text = f"{head}{running} Time limit: {limit:g} s."
    return Interaction("run", f"run-{next(_ids)}", command=code, choices=[STOP], description=text)


async def supervise(
    turn: RunTurn,
    part_id: str,
    code: str,
    work: Work,
    *,
    waiting: Callable[[], str],
    allowed: bool,
    limit: float | None = None,
    stop_wait: float = STOP_WAIT,
    running: str = RUNNING,
) -> str:
    """Show the run on its tool part until it ends; returns how it ended: ``finished``, ``stopped``,
    ``timed out``, ``turn ended`` or ``still running`` (stopped, but blocked outside Python).
    ``waiting()`` names what the run waits for ("the running cell In[7]"), "" when the kernel is free;
    ``running`` is what the card says while it runs."""
    limit = RUN_LIMIT if limit is None else limit
    loop = asyncio.get_running_loop()
    deadline = loop.time() + limit
    card = _card(code, "" if work.started.done() else waiting(), allowed, limit, running)
    asking: asyncio.Future[str | None] = asyncio.ensure_future(turn.ask(part_id, card, limit + stop_wait + 5))
    outcome = ""
    try:
        while not outcome:
            watched: set[asyncio.Future[object] | asyncio.Future[str | None] | asyncio.Future[None]] = {
                asking,
                work.finished,
            }
            if not work.started.done():
                watched.add(work.started)
            left = deadline - loop.time()
            done, _ = await asyncio.wait(
                watched, timeout=max(0.0, min(left, STOPPING_POLL)), return_when=asyncio.FIRST_COMPLETED
            )
            if work.finished in done:
                outcome = "finished"
            elif asking in done:
                outcome = "stopped" if asking.result() == STOP else "turn ended"
            elif turn.stopping or turn.done:  # the user stopped the turn: Hermes may still wait for this call
                outcome = "turn ended"
            elif work.started in done and card.description and "Waiting" in card.description:
                turn.settle(card.request_id, "started")  # the waiting card gives way to the running one
                card = _card(code, "", allowed, limit, running)
                asking = asyncio.ensure_future(turn.ask(part_id, card, max(1.0, deadline - loop.time()) + 5))
            elif not done and left <= STOPPING_POLL:
                outcome = "timed out"
        if outcome != "finished":
            work.stop()
            await asyncio.wait({work.finished}, timeout=stop_wait)
            if not work.finished.done():
                outcome = "still running"
    except asyncio.CancelledError:  # the call itself was cancelled (Hermes gave up on it): the run goes too
        work.stop()
        outcome = "turn ended"
        raise
    finally:
        turn.settle(card.request_id, outcome.replace(" ", "_") or "turn_ended")
        if not asking.done():
            asking.cancel()
    return outcome


def unfinished(outcome: str, started: bool, limit: float | None = None) -> str:
    """What the agent hears about a run that did not finish."""
    if outcome == "stopped":
        return "The user stopped it " + (
            "while it ran: it was interrupted at its next Python line; what it changed so far stays."
            if started
            else "before it started: nothing ran."
        )
    if outcome == "timed out":
        seconds = RUN_LIMIT if limit is None else limit
        return f"It hit the time limit of {seconds:g} s " + (
            "while running and was stopped; what it changed so far stays."
            if started
            else "while a cell was running, so it never ran."
        )
    if outcome == "still running":
        return (
            "It was stopped, but it is still running (blocked outside Python); its result is not available."
        )
    return "The turn ended, so the run was " + ("stopped." if started else "dropped before it started.")


def waiting_for(busy: Callable[[], bool], running_cell: Callable[[], int | None]) -> Callable[[], str]:
    """What a queued run waits for, for its card: ``the running cell In[7]``, or "" when the kernel is
    free."""

    def what() -> str:
        if not busy():
            return ""
        count = running_cell()
        return f"the running cell In[{count}]" if count is not None else "the running cell"

    return what
