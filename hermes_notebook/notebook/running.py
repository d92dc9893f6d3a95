"""What waiting and showing need of a running turn: the :class:`RunningTurn` protocol (a ``TurnHandle`` is
one).

Why a protocol: the handle waits through :mod:`.wait`, which shows the turn through :mod:`.presenters`; typing
both against this protocol rather than the handle class keeps them from importing the handle (no import
circle).
"""

from __future__ import annotations

import concurrent.futures
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from .results import Reply

__all__ = ["RunningTurn"]


class RunningTurn(Protocol):
    """A turn on the package loop as the waiting code and the presenters use it."""

    #: The prompt as sent, and how many ``{placeholders}`` were filled into it.
    prompt: str
    filled: int
    #: The connection's key and token, which every view scrubs.
    secrets: tuple[object, ...]
    #: A live view shows buttons for interactions.
    buttons: bool
    #: Interactions may be answered on stdin (terminal IPython, or a kernel whose comm pump cannot run).
    text_prompts: bool
    #: Show the turn at all (False: no view, no printed text).
    show: bool

    @property
    def future(self) -> concurrent.futures.Future[Reply]: ...

    @property
    def reply(self) -> Reply | None: ...

    def start(self) -> Any: ...

    def add_listener(self, listener: Callable[[list[Any]], None]) -> None: ...

    def answer(self, request_id: str, value: str) -> bool: ...

    def stop(self) -> None: ...

    async def image(self, path: str) -> Any: ...

    def interrupt(self, grace: float = ...) -> None: ...

    async def wait_async(self, timeout: float | None = None) -> Reply: ...

    def serve_text_prompts(self) -> None: ...
