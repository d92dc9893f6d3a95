"""How a cell waits for a turn: on the calling thread, pumping widget messages and serving text prompts.

In a kernel's main thread the wait pumps widget comm messages (:mod:`.comm_pump`) so the live view's approval,
clarify, sudo/secret and stop buttons work while the cell blocks and Run All still waits for the answer.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import sys
import threading
import time
import warnings
from typing import TYPE_CHECKING

from .. import runtime
from ..errors import HermesTimeoutError, HermesUsageError
from ..kernel.execute import JOBS
from ..shell import host
from .comm_pump import CommPump, CommPumpWarning
from .presenters import Presenter, presenter_for
from .results import Reply

if TYPE_CHECKING:
    from .running import RunningTurn

__all__ = ["PUMP_INTERVAL", "run_awaited", "run_blocking", "run_detached", "wait_blocking"]

#: Seconds the blocking wait sleeps between pump rounds (clicks are handled within about this much).
PUMP_INTERVAL = 0.02


def run_blocking(handle: RunningTurn, *, timeout: float | None = None) -> Reply:
    """Start ``handle`` and wait for its :class:`Reply`, showing it in the cell (``ask``, ``%hermes``).

    Interrupted or timed out, whatever the turn produced stays behind as the static result.
    """
    if runtime.in_loop_thread():
        raise HermesUsageError("ask() was called on the hermes-notebook loop; use ask_async() there")
    presenter = presenter_for(handle, blocking=True)
    pump: CommPump | None = None
    on_main = threading.current_thread() is threading.main_thread()
    if host.environment() == "kernel" and on_main:
        pump = CommPump(warn=False)
        if not pump.available and handle.show:  # show=False: policies answer (turn_options saw to it)
            warn_every_time(
                f"the buttons may not respond while this cell waits ({pump.reason}); "
                "answer in the text prompt instead",
                CommPumpWarning,
                stacklevel=3,
            )
            handle.text_prompts = host.stdin_allowed()
    elif on_main and handle.show:
        handle.text_prompts = host.stdin_allowed()
    handle.buttons = presenter.buttons
    handle.start()
    try:
        reply = wait_blocking(handle, timeout=timeout, presenter=presenter, pump=pump)
    except BaseException:
        partial = handle.reply  # interrupted or timed out: leave what there is as the static result
        with contextlib.suppress(Exception):
            presenter.finish(partial) if partial is not None else presenter.abandon()
        raise
    finally:
        if pump is not None:
            pump.close()
    presenter.finish(reply)
    return reply


async def run_awaited(handle: RunningTurn, *, timeout: float | None = None) -> Reply:
    """Start ``handle`` and ``await`` its :class:`Reply` (``ask_async``): shown like :func:`run_blocking`,
    and settled (static, its view closed) however the wait ends."""
    presenter = presenter_for(handle, blocking=False)
    handle.buttons = presenter.buttons
    handle.start()
    try:
        reply = await handle.wait_async(timeout)
    except BaseException:
        with contextlib.suppress(Exception):
            presenter.abandon()
        raise
    presenter.finish(reply)
    return reply


def run_detached(handle: RunningTurn) -> None:
    """Start ``handle`` with nobody waiting for it (``start``, ``%hermes -b``): its view settles when it
    ends."""
    presenter = presenter_for(handle, blocking=False)
    handle.buttons = presenter.buttons
    handle.start()
    presenter.finish_when_done(handle.future)


def wait_blocking(
    handle: RunningTurn,
    *,
    timeout: float | None = None,
    presenter: Presenter | None = None,
    pump: CommPump | None = None,
) -> Reply:
    """Wait on the calling thread, pumping widget messages and serving text prompts, until the turn ends."""
    future = handle.future
    on_main = threading.current_thread() is threading.main_thread()
    own_pump = pump is None and host.environment() == "kernel" and on_main
    if own_pump:
        pump = CommPump(warn=False)
    deadline = None if not timeout else time.monotonic() + timeout
    serving = JOBS.serve() if on_main else contextlib.nullcontext()
    try:
        with serving:  # approved runs need not wait for this cell: this wait takes them
            while True:
                if pump is not None:
                    pump.poll()
                if on_main:
                    JOBS.run_pending()  # code the user approved on a Run card runs here, on the main thread
                handle.serve_text_prompts()
                if presenter is not None:
                    presenter.drain()
                try:
                    return future.result(timeout=PUMP_INTERVAL)
                except concurrent.futures.TimeoutError:
                    pass
                if deadline is not None and time.monotonic() > deadline:
                    handle.interrupt()
                    raise HermesTimeoutError(
                        f"the turn did not finish within {timeout:g} s; it was interrupted"
                    )
    except KeyboardInterrupt:
        handle.interrupt()
        raise
    finally:
        if own_pump and pump is not None:
            pump.close()
        if presenter is not None:
            presenter.drain()


def warn_every_time(message: str, category: type[Warning], stacklevel: int) -> None:
    """``warnings.warn`` without the once-per-location memory of the default filter.

    Every ``%hermes`` warns from the same line, so ``warnings.warn`` would tell only the first cell why its
    buttons do not respond. Filters still apply (``ignore``, ``once``, ``error``); only the per-location
    registry is fresh.
    """
    frame = sys._getframe(stacklevel)
    warnings.warn_explicit(
        message,
        category,
        frame.f_code.co_filename,
        frame.f_lineno,
        module=frame.f_globals.get("__name__"),
        registry={},
        module_globals=frame.f_globals,
    )
