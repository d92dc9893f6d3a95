"""One tool call as a handler sees it: the turn and tool part it answers, the share's policy, and the kernel.

Why a value of its own: every handler of the tool table (:mod:`.tools`) takes one :class:`ToolCall` first and
the tool's arguments after it, so a new tool is a row and a function, and a test builds a call around a
scripted turn, a scripted front end or a namespace of its own. The turn is the conversation's running turn
whose tool part asked for exactly this call (:mod:`.binding`), typed here by what the kernel uses of it
(:class:`CallingTurn`), so the kernel's floor never imports the Dashboard client.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from ..turns import Interaction, Message
from ..turns.changes import CellChangeDict, RunUndoDict, SentImageDict
from .chat_resume import RESUME_HINTS, ChatResumeHints
from .document import DOCUMENT, DocumentLink
from .execute import JOBS, MainThreadJobs
from .grants import Grants
from .outputs import OUTPUTS, OutputLog
from .runs import ANSWER_TIMEOUT
from .versions import SEEN, SeenCells

__all__ = ["CallingTurn", "SessionLike", "SharePolicy", "ToolCall"]


class SessionLike(Protocol):
    """A turn's session as the kernel reads it: its stored id (grants are per session)."""

    @property
    def stored_id(self) -> str: ...


class CallingTurn(Protocol):
    """The running turn a call came from (a client ``Turn`` the conversation runs): it is asked on (Run
    cards), settled, noted in, and its tool part linked to what the call did."""

    @property
    def id(self) -> str: ...

    @property
    def ref(self) -> SessionLike: ...

    @property
    def message(self) -> Message: ...

    @property
    def done(self) -> bool: ...

    @property
    def stopping(self) -> bool: ...

    def note(self, text: str) -> None: ...

    async def ask(self, part_id: str, interaction: Interaction, timeout: float) -> str | None: ...

    def settle(self, request_id: str, response: str) -> bool: ...

    def link_cell_change(self, part_id: str, change: CellChangeDict) -> bool: ...

    def name_call(self, part_id: str, detail: str) -> bool: ...

    def link_sent_images(self, part_id: str, images: list[SentImageDict]) -> bool: ...

    def link_run_undo(self, part_id: str, undo: RunUndoDict) -> bool: ...


class SharePolicy(Protocol):
    """What a handler reads of the share that answers (:class:`~.shared.KernelShare`)."""

    @property
    def grants(self) -> Grants: ...

    @property
    def scrub_secrets(self) -> tuple[object, ...]: ...

    @property
    def profile(self) -> str | None: ...

    def may_read(self, session_id: str) -> bool: ...


@dataclass(frozen=True)
class ToolCall:
    """Who a call belongs to and what it may touch (see the module docstring)."""

    share: SharePolicy
    turn: CallingTurn
    part_id: str
    #: The stored id of the turn's session (reads granted from a card are per session).
    session_id: str
    #: The user's namespace and shell, where approved code runs.
    namespace: dict[str, Any] = field(default_factory=dict)
    shell: Any = None
    #: Seconds a Run card waits for a click.
    answer_timeout: float = ANSWER_TIMEOUT
    #: The notebook's front end, what the cells published, and the main thread's queue.
    document: DocumentLink = DOCUMENT
    outputs: OutputLog = OUTPUTS
    jobs: MainThreadJobs = JOBS
    #: What each session's agent was shown of the notebook's cells (read before write).
    seen: SeenCells = SEEN
    #: Where a restart leaves the hint that brings the re-run chat back on this call's session.
    resume: ChatResumeHints = RESUME_HINTS
    #: False: Hermes (0.19.0) showed nothing to tell this call's session from another's, so the diff or Run
    #: card says the caller could not be verified (:mod:`.binding`).
    verified: bool = True

    @property
    def run_limit(self) -> float:
        """Seconds an approved run may take, waiting for a busy cell included (the share's policy)."""
        return self.share.grants.modes.run_limit
