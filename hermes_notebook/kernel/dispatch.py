"""A tool call's way through the kernel: bound to its turn, gated by its row, dispatched, scrubbed, recorded.

The tool server hands every call here (on the package loop, where the conversations' turns live). A call is
answered only for the running tool part of a sharing conversation's turn that asked for exactly it, once
(:mod:`.binding`); anything else is :data:`REFUSED`. Then its row in the tool table gates it and its handler
answers (:mod:`.tools`). Images go to the model as they are (the kernel's own PNGs) and are recorded on the
part; the text is scrubbed of the share's secrets and the tool token. A failure is :data:`FAILED`, never a
traceback in whatever cell is running.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections import deque
from collections.abc import Mapping, Sequence
from typing import Any

from ..scrub import scrub
from ..turns.changes import SentImageDict
from . import tools
from .binding import Bound, Claims, check_completion, find_call
from .call import ToolCall
from .images import SentImage, ToolAnswer
from .outputs import OUTPUTS
from .shared import CallRecord, KernelShare

__all__ = ["FAILED", "MAX_RECORDS", "REFUSED", "ToolCalls"]

log = logging.getLogger(__name__)

#: Answered calls remembered (:meth:`ToolCalls.recent`: how long each took, and whether a cell ran).
MAX_RECORDS = 100

REFUSED = (
    "Refused: no turn started from this notebook is calling this tool with these arguments. The notebook's "
    "kernel tools answer only the notebook's own Hermes turns, once per call."
)
FAILED = "The notebook's kernel could not answer this call."


class ToolCalls:
    """The call path's state: which parts have answered (:class:`~.binding.Claims`), the 0.19.0 completion
    checks still waiting, and a record of recent calls."""

    def __init__(self) -> None:
        self._claims = Claims()
        self._records: deque[CallRecord] = deque(maxlen=MAX_RECORDS)
        self._checks: set[asyncio.Task[None]] = set()  # kept alive here until they end
        self._lock = threading.Lock()

    async def answer(
        self,
        name: str,
        arguments: Mapping[str, Any],
        *,
        server: str,
        shares: Sequence[KernelShare],
        namespace: dict[str, Any],
        shell: Any,
    ) -> ToolAnswer:
        """The answer to a call of tool ``name`` of MCP server ``server`` (see the module docstring)."""
        started = time.perf_counter()
        running = OUTPUTS.running()
        try:
            tool = tools.tool_named(name)
            bound = None if tool is None else await find_call(shares, server, name, arguments, self._claims)
            if tool is None or bound is None:
                return ToolAnswer(REFUSED)
            share, turn = bound.share, bound.turn
            call = ToolCall(
                share, turn, bound.part_id, turn.ref.stored_id, namespace, shell, verified=bound.verified
            )
            answer = await tools.answer(tool, call, arguments)
            if not bound.exact:
                self._check_later(bound, name, arguments)
            if answer.images:
                turn.link_sent_images(bound.part_id, [_image_dict(image) for image in answer.images])
            seconds = time.perf_counter() - started
            with self._lock:
                self._records.append(
                    CallRecord(name, seconds, None if running is None else running.count, len(answer.images))
                )
            return ToolAnswer(scrub(answer.text, share.scrub_secrets), answer.images)
        except Exception:  # never a traceback in the cell that happens to be running
            log.debug("kernel tool %s failed", name, exc_info=True)
            return ToolAnswer(FAILED)

    def recent(self) -> list[CallRecord]:
        """The last answered calls, oldest first."""
        with self._lock:
            return list(self._records)

    def _check_later(self, bound: Bound[KernelShare], name: str, arguments: Mapping[str, Any]) -> None:
        check = asyncio.ensure_future(check_completion(bound, name, dict(arguments)))
        self._checks.add(check)
        check.add_done_callback(self._checks.discard)


def _image_dict(image: SentImage) -> SentImageDict:
    return {
        "mime": image.mime,
        "width": image.width,
        "height": image.height,
        "bytes": image.size,
        "label": image.label,
        "data": image.data,
    }
