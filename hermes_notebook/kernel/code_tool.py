"""The ``run_code`` tool's handler: code the agent wrote, run in the kernel only as the user allows.

Refused before anyone is asked when it is empty, too long to show, or holds a key-shaped literal (a card never
hides what runs, so such code would put the key on screen and into the model's next turn). Otherwise it is
approved (a Run card, or runs allowed for the session: :func:`.runs.approve`), queued for the kernel's main
thread (:mod:`.execute`: a ``%hermes`` wait takes it at once, an idle kernel between cells, a busy one after
its cell) and shown on the tool part with Stop until it ends (:func:`.runs.supervise`). It runs between a
savepoint and an Undo offer (:mod:`.undo.last_run`): its answer ends saying whether Undo variables is offered,
or why not.
"""

from __future__ import annotations

from ..scrub import holds_key
from ..turns.changes import RunUndoDict
from . import runs
from .call import ToolCall
from .images import ToolAnswer
from .undo.last_run import LAST_RUN

__all__ = ["MAX_CODE_CHARS", "run_code", "waiting"]

#: Characters of code a ``run_code`` call may carry.
MAX_CODE_CHARS = 20_000


async def run_code(call: ToolCall, code: str) -> ToolAnswer:
    """Run ``code`` in the user's namespace once it is allowed; its report, or how the run ended."""
    code = str(code or "")
    if not code.strip():
        return ToolAnswer("run_code needs the code to run.")
    if len(code) > MAX_CODE_CHARS:
        return ToolAnswer(
            f"Refused: the code is {len(code):,} characters; at most {MAX_CODE_CHARS:,} can be shown and run."
        )
    if holds_key(code, call.share.scrub_secrets):  # a card never hides what runs, so such code is never shown
        call.turn.note(
            "Hermes asked to run code holding a key, token or password literal; it was refused "
            "without asking (nothing ran)."
        )
        return ToolAnswer(
            "Refused before asking the user: the code holds a key, token or password literal (or "
            "this connection's own key). Nothing ran. Read secrets from the environment "
            "(os.environ) or an existing variable instead of writing them into code."
        )
    grants = call.share.grants
    refusal = await runs.approve(
        call.turn,
        call.part_id,
        grants,
        call.session_id,
        code,
        "It runs in this notebook's kernel",
        verified=call.verified,
    )
    if refusal is not None:
        return ToolAnswer(refusal)
    namespace, shell = call.namespace, call.shell
    cards: list[RunUndoDict] = []  # the run's Undo offer, for its tool part
    job = call.jobs.submit(lambda: LAST_RUN.run(namespace, code, shell, cards.append))
    work = runs.Work.of_job(job)
    outcome = await runs.supervise(
        call.turn,
        call.part_id,
        code,
        work,
        waiting=lambda: waiting(call),
        allowed=grants.modes.runs == "allow",
        limit=call.run_limit,
    )
    for card in cards:
        call.turn.link_run_undo(call.part_id, card)
    ended = job.future.done() and not job.future.cancelled() and job.future.exception() is None
    report = ToolAnswer.of(job.future.result()) if ended else None
    if outcome == "finished" and report is not None:
        return report
    said = runs.unfinished(outcome, job.started.done(), call.run_limit)
    return ToolAnswer(f"{said}\n\n{report.text}", report.images) if report is not None else ToolAnswer(said)


def waiting(call: ToolCall) -> str:
    """What an approved run waits for now: ``the running cell In[7]``, or "" when the main thread is free
    (idle, or a ``%hermes`` wait that takes runs)."""
    if not call.outputs.busy or call.jobs.serving:
        return ""
    running = call.outputs.running()
    return f"the running cell In[{running.count}]" if running is not None else "the running cell"
