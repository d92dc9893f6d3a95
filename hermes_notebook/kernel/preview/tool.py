"""The ``preview`` tool's handler: the agent previews a code cell it proposed, and gets the card's summary.

A preview runs the agent's code for real where it is not a copy (files, network, databases), so it is a run:
approved like one (a Run card saying it runs in a copy, or the session's allow: :func:`..runs.approve`) and
shown with Stop until it ends (:func:`..runs.supervise`). The fork is queued on the main thread like Run; the
wait happens on a thread of its own, never on the package loop.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading

from .. import runs
from ..call import ToolCall
from ..code_tool import waiting
from ..images import ToolAnswer
from . import clicks  # noqa: F401  (the page's Preview button is handled wherever the tools are)
from .limits import PreviewLimits
from .proposed import PROPOSED
from .report import PreviewReport
from .service import PreviewRequest

__all__ = ["ASK_TITLE", "RUNNING", "RUN_TITLE", "TERMS", "WHERE", "preview"]

#: What the Run card says of where a preview runs, and what it touches (``runs.approve`` joins them into one
#: sentence: "It runs in a copy ..., with a copy ..., only if you click Run.").
WHERE = "It runs in a copy of this notebook's kernel"
TERMS = "with a copy of your variables (yours stay untouched) and your real files, network and databases"
#: The cards' titles: a preview's cards must not read as a run in the kernel itself (the Run card's, then the
#: running one's, which the transcript keeps).
ASK_TITLE = "Hermes wants to preview code in a copy of your kernel"
RUN_TITLE = "Hermes' preview in a copy of your kernel"
#: Seconds past the preview's limit before the card calls it timed out (the copy ends itself at the limit).
COPY_GRACE = 5.0
#: What its card says while the copy runs (Stop kills the copy's process group at once).
RUNNING = "Running in a copy of the kernel: your variables are untouched. Stop ends the copy at once."


async def preview(call: ToolCall, change: str) -> ToolAnswer:
    """Preview pending change ``change`` (a code cell this session proposed) in a copy of the kernel."""
    proposal = PROPOSED.proposal(call.session_id, str(change or ""))
    if proposal is None:
        return ToolAnswer(
            f"preview takes the id of a code cell change you proposed in this session (insert_cell or "
            f"edit_cell name it, e.g. c3-ab12); {str(change)[:40]!r} is not one. Nothing ran."
        )
    source = proposal.source
    call.turn.name_call(call.part_id, proposal.words)  # its label names the cell, not the change's id
    refusal = await runs.approve(
        call.turn,
        call.part_id,
        call.share.grants,
        call.session_id,
        source,
        WHERE,
        verified=call.verified,
        terms=TERMS,
        title=ASK_TITLE,
    )
    if refusal is not None:
        return ToolAnswer(refusal)
    limits = PreviewLimits.resolve()
    request = PreviewRequest(call.shell, call.namespace, source, limits)
    finished: concurrent.futures.Future[object] = concurrent.futures.Future()

    def wait() -> None:
        try:
            finished.set_result(request.result())
        except BaseException as exc:  # reported to the agent, never raised on a thread of the kernel
            finished.set_exception(exc)

    threading.Thread(target=wait, name="hermes-preview", daemon=True).start()
    work = runs.Work(asyncio.wrap_future(request.forked), asyncio.wrap_future(finished), request.stop)
    outcome = await runs.supervise(
        call.turn,
        call.part_id,
        source,
        work,
        waiting=lambda: waiting(call),
        allowed=call.share.grants.modes.runs == "allow",
        limit=limits.seconds,  # the limit the user set, as the card shows it; the copy keeps it itself
        grace=COPY_GRACE,
        running=RUNNING,
        title=RUN_TITLE,
    )
    report = finished.result() if finished.done() and finished.exception() is None else None
    if isinstance(report, PreviewReport):
        return report.answer()
    return ToolAnswer(runs.unfinished(outcome, request.forked.done(), limits.seconds))
