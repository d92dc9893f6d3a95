"""What a turn is asked with (:class:`TurnRequest`), where it goes (:class:`TurnSink`), and what comes back
(:class:`TurnOutcome`): the small contract between the one turn runner and every face.

A face (the facade's :class:`~hermes_notebook.notebook.handle.TurnHandle`, the Chat's turn) implements
:class:`TurnSink`; the runner knows nothing else of it. So the runner imports no view, widget or IPython
module.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from ..client.dashboard.attachments import ImageInput
from ..client.dashboard.files import FileInput
from ..errors import HermesError
from ..turns import ChangeRecord, MessageDict

__all__ = ["VIAS", "TurnOutcome", "TurnRequest", "TurnSink", "Via"]

Via = Literal["dashboard", "api"]
VIAS: tuple[str, ...] = ("dashboard", "api")


@dataclass(kw_only=True)
class TurnRequest:
    """One prompt for a session, checked by the face that took it."""

    prompt: str
    #: A session name or stored id of this conversation's, a :func:`~.book.resume`, or None: the current one.
    session: str | None = None
    via: str = "dashboard"
    #: Start a new session (named by ``session`` if given).
    new: bool = False
    #: Extra system instructions for this turn (API Server runs only).
    instructions: str | None = None
    #: Switch the session to this model first (Dashboard), or the run's model (API Server).
    model: str | None = None
    images: Iterable[ImageInput] | None = None
    #: Text files and PDFs to attach (paths or ``(name, bytes)`` pairs; Dashboard only).
    files: Iterable[FileInput] | None = None
    #: The turn's id (``user:<id>``, ``assistant:<id>``), when the face showed the prompt before sending it.
    turn_id: str | None = None
    #: The session becomes the conversation's current one (asks: yes; a Chat's prompts: no).
    follow: bool = True


@dataclass(frozen=True)
class TurnOutcome:
    """How a turn ended: its assistant message and the session it ended in (a compression may rotate the
    id)."""

    message: MessageDict
    session_id: str | None


class TurnSink(Protocol):
    """Where the runner delivers one turn; each face implements it (see the module docstring)."""

    def started(self, session_id: str) -> None:
        """The turn holds its session now (``session_id``, the stored id; earlier turns on it have ended) and
        is about to be sent."""

    def push(self, changes: Sequence[ChangeRecord]) -> None:
        """A batch of the turn's change records (never the user message's record: the face shows the
        prompt)."""

    def note(self, text: str) -> None:
        """Something the transcript does not say by itself (a model warning, an answer that failed to
        send)."""

    def failed(self, error: HermesError) -> None:
        """The turn's stream broke off (the connection dropped): what was pushed is all there is."""

    async def obtain(self, request: dict[str, Any]) -> str | None:
        """The answer to a pending interaction, or None: nobody here answers it (the server's timeout
        will)."""
