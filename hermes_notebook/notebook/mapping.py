"""``hermes.map``: many prompts at once, each in a new session of its own, with one progress bar in the cell.

Shape: :func:`plan_map` checks everything before anything is sent (each prompt is text, ``concurrency``,
``resume=``, and the ask options, once, through the facade's own checks), so bad input is one clear error.
:class:`MapRun` runs a plan on the package loop: ``concurrency`` workers take the prompts in input order, each
as a turn with no view (the policies answer its approvals and questions); an API Server at its concurrent-run
cap (HTTP 429) is waited out for its ``Retry-After`` and asked again, never in a tight loop; Stop interrupts
the running turns and starts no more. :func:`map_blocking` and :func:`map_awaited` show the progress bar and
wait; what comes back is a :class:`~.map_results.MapResult` in input order (a DataFrame for a Series).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from .. import runtime
from ..errors import HermesRateLimitError, HermesUsageError
from ..shell import host
from .comm_pump import CommPump
from .context import PromptPreview
from .map_results import FAILED, NOT_RUN, STOPPED, MapFailure, MapResult, finished, is_series, summary
from .results import Reply

if TYPE_CHECKING:
    from ..settings import Settings
    from ..widgets.progress import MapProgress
    from .handle import TurnHandle

__all__ = ["MAP_OPTIONS", "MapPlan", "MapRun", "map_awaited", "map_blocking", "plan_map", "retry_delay"]

#: The ask options ``map`` takes (each prompt gets a new session, so no ``session``/``new``; no views).
MAP_OPTIONS = ("via", "approve", "clarify", "instructions", "model", "timeout", "show")
#: What the items' policy check says is missing.
UNSEEN = "hermes.map shows no card for a prompt's approval or question"
#: Seconds waited after a 429 that names no ``Retry-After``.
DEFAULT_RETRY_AFTER = 1.0
#: Seconds a stopped or timed-out turn may take to end before its worker moves on.
SETTLE_TIMEOUT = 10.0
#: Seconds the blocking wait sleeps between rounds of the comm pump (Stop is handled within about this).
PUMP_INTERVAL = 0.05

#: Makes the turn of one prompt: checked, not started (the facade's ``_turn``).
TurnFactory = Callable[..., "TurnHandle | PromptPreview"]


class MapFace(Protocol):
    """What the plan reads of the facade: its defaults, and where it keeps the last result."""

    settings: Settings
    show: bool
    timeout: float | None
    last_map: Any


@dataclass
class MapPlan:
    """A checked ``map``: the prompts, which of them to run, and how."""

    prompts: list[str]
    #: One turn per prompt (checked, not started): ``turn(text)``.
    turn: Callable[[str], TurnHandle]
    concurrency: int
    #: What a previous result (``resume=``) already holds: a finished Reply where kept, else None.
    kept: list[Reply | MapFailure | None]
    #: Seconds each prompt may take (its turn is then interrupted and it fails).
    timeout: float | None = None
    #: Show the progress bar (a kernel's main thread only).
    show: bool = True
    #: A Series' index: the result is then a DataFrame with that index.
    index: Any = None
    secrets: tuple[object, ...] = ()
    face: MapFace | None = field(default=None, repr=False)

    @property
    def todo(self) -> list[int]:
        """The positions to run, in input order."""
        return [i for i, item in enumerate(self.kept) if item is None]

    def shaped(self, result: MapResult) -> Any:
        """``result`` as the caller gave the prompts: a DataFrame for a Series, else the MapResult; kept on
        the facade as ``last_map``."""
        out = result.to_frame(self.index) if self.index is not None else result
        if self.face is not None:
            self.face.last_map = out
        return out


def plan_map(
    face: MapFace,
    prompts: Any,
    turn: TurnFactory,
    *,
    concurrency: Any = 4,
    resume: Any = None,
    **options: Any,
) -> MapPlan:
    """The checked plan of ``hermes.map``, or one :class:`HermesUsageError` naming what is wrong (before
    anything is sent)."""
    unknown = sorted(set(options) - set(MAP_OPTIONS))
    if unknown:
        raise HermesUsageError(
            f"hermes.map does not take {', '.join(unknown)} (each prompt runs in a new session of its own "
            f"with no view); it takes {', '.join(MAP_OPTIONS)}"
        )
    if isinstance(concurrency, bool) or not isinstance(concurrency, int) or concurrency < 1:
        raise HermesUsageError(
            f"concurrency= is how many prompts run at once: a whole number >= 1, not {concurrency!r}"
        )
    index, texts = _prompts(prompts)
    kept = _kept(resume, texts)
    show = options.pop("show", None)
    timeout = options.pop("timeout", None)

    def one(text: str) -> TurnHandle:
        handle = turn(
            PromptPreview(text), False, new=True, follow=False, show=False, unseen=UNSEEN, **options
        )
        assert not isinstance(handle, PromptPreview)
        return handle

    plan = MapPlan(
        texts,
        one,
        concurrency,
        kept,
        timeout=face.timeout if timeout is None else timeout,
        show=face.show if show is None else bool(show),
        index=index,
        secrets=(face.settings.api_key, face.settings.dashboard_token),
        face=face,
    )
    if plan.todo:
        one(texts[plan.todo[0]])  # the options are the same for every prompt: check them once, now
    return plan


def _prompts(prompts: Any) -> tuple[Any, list[str]]:
    """A Series' index (else None) and the prompts as a list, each checked to be non-empty text."""
    if isinstance(prompts, str | bytes) or prompts is None:
        raise HermesUsageError(
            "hermes.map takes a list (or a pandas Series) of prompts; for one prompt use hermes.ask"
        )
    index = prompts.index if is_series(prompts) else None
    try:
        items = list(prompts)
    except TypeError:
        raise HermesUsageError(
            f"hermes.map takes a list (or a pandas Series) of prompts, not {type(prompts).__name__}"
        ) from None
    labels = list(index) if index is not None else range(len(items))
    for label, item in zip(labels, items, strict=True):
        where = f"prompt {label!r}" if index is not None else f"prompt {label}"
        if not isinstance(item, str):
            raise HermesUsageError(f"{where} is {type(item).__name__}, not text: every prompt must be a str")
        if not item.strip():
            raise HermesUsageError(f"{where} is empty")
    return index, [str(item) for item in items]


def _kept(resume: Any, texts: list[str]) -> list[Reply | MapFailure | None]:
    """What a previous result keeps (its finished replies), position by position; None: run it."""
    if resume is None:
        return [None] * len(texts)
    items = _previous_items(resume)
    if len(items) != len(texts):
        raise HermesUsageError(
            f"resume= holds {len(items):,} prompts and this map {len(texts):,}: pass the same prompts again"
        )
    for i, (item, text) in enumerate(zip(items, texts, strict=True)):
        if item.prompt != text:
            raise HermesUsageError(f"prompt {i} differs from the one in resume=: pass the same prompts again")
    return [item if finished(item) else None for item in items]


def _previous_items(resume: Any) -> list[Reply | MapFailure]:
    if isinstance(resume, MapResult):
        return list(resume)
    result = getattr(resume, "get", lambda _name: None)("result")  # a DataFrame hermes.map returned
    if result is not None and all(isinstance(r, Reply | MapFailure) for r in result):
        return list(result)
    raise HermesUsageError("resume= takes what an earlier hermes.map returned (its MapResult or DataFrame)")


def retry_delay(retry_after: float | None) -> float:
    """Seconds to wait after a 429: its ``Retry-After`` (1 s when it names none), plus up to 10 % so the
    prompts it turned away do not all come back at once."""
    base = retry_after if retry_after is not None and retry_after > 0 else DEFAULT_RETRY_AFTER
    return base * (1 + random.random() / 10)


class MapRun:
    """One ``map`` on the package loop; ``progress`` (the bar, if any) hears of each change."""

    def __init__(self, plan: MapPlan, progress: MapProgress | None = None) -> None:
        self.plan = plan
        self.progress = progress
        self.items: list[Reply | MapFailure | None] = list(plan.kept)
        self._todo = iter(plan.todo)  # the positions not taken by a worker yet, in input order
        self._left = len(plan.todo)
        self._running: dict[int, TurnHandle] = {}
        self._stopped = threading.Event()
        self._wake: asyncio.Event | None = None
        self._started = time.time()
        self._base = len(plan.kept) - self._left  # ended before this run (kept by resume=)
        self.waits: list[float] = []

    @property
    def stopped(self) -> bool:
        """True once Stop was asked for."""
        return self._stopped.is_set()

    @property
    def elapsed(self) -> float:
        """Seconds since the run was made."""
        return time.time() - self._started

    def stop(self) -> None:
        """Stop: interrupt the running prompts and start no more (any thread; returns at once)."""
        if not self._stopped.is_set():
            self._stopped.set()
            runtime.call_soon(self._stop_now)

    def _stop_now(self) -> None:
        for handle in list(self._running.values()):
            handle.stop()
        if self._wake is not None:
            self._wake.set()

    async def run(self) -> MapResult:
        """Run every prompt to do; the result in input order (those never started: "not run")."""
        self._wake = asyncio.Event()
        if self._stopped.is_set():
            self._wake.set()
        workers = [
            asyncio.ensure_future(self._worker()) for _ in range(min(self.plan.concurrency, self._left))
        ]
        try:
            await asyncio.gather(*workers)
        except asyncio.CancelledError:
            self._stop_now()
            raise
        items = [
            item if item is not None else MapFailure(self.plan.prompts[i], NOT_RUN)
            for i, item in enumerate(self.items)
        ]
        return MapResult(items, secrets=self.plan.secrets, waits=self.waits)

    async def _worker(self) -> None:
        for position in self._todo:  # shared by the workers: each position is taken once
            if self._stopped.is_set():
                return
            self.items[position] = await self._one(position)
            self._report()

    async def _one(self, position: int) -> Reply | MapFailure:
        """One prompt to its end: a finished Reply, or why not (never raises but for cancellation)."""
        text = self.plan.prompts[position]
        while True:
            try:
                handle = self.plan.turn(text)
            except Exception as exc:  # e.g. the connection was closed meanwhile
                return MapFailure(text, FAILED, exc)
            self._running[position] = handle
            self._report()
            try:
                reply = await handle.start().wait_async(self.plan.timeout)
            except HermesRateLimitError as exc:  # the server took nothing: ask again after Retry-After
                if not await self._wait_out(retry_delay(exc.retry_after)):
                    return MapFailure(text, NOT_RUN, exc)
                continue
            except Exception as exc:  # a failure of this prompt never ends the others
                await self._settle(handle)
                return MapFailure(text, FAILED, exc, handle.reply)
            finally:
                self._running.pop(position, None)
            if reply.ok:
                return reply
            error = reply.error or f"the turn ended {reply.status}"
            if self._stopped.is_set() and reply.status in ("interrupted", "cancelled"):
                return MapFailure(text, STOPPED, error, reply)
            return MapFailure(text, FAILED, error, reply)

    async def _wait_out(self, seconds: float) -> bool:
        """Sleep ``seconds`` unless Stop comes first; False when stopped."""
        self.waits.append(seconds)
        assert self._wake is not None
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self._wake.wait(), seconds)
        return not self._stopped.is_set()

    async def _settle(self, handle: TurnHandle) -> None:
        """A timed-out or failed turn: give it a moment to end on the server before the next one starts."""
        with contextlib.suppress(BaseException):
            await asyncio.wait_for(asyncio.shield(runtime.wrap_future(handle.future)), SETTLE_TIMEOUT)

    def counts(self) -> tuple[int, int, int]:
        """Done, failed (any way of not finishing), running now."""
        done = sum(1 for item in self.items if finished(item))
        failed = sum(1 for item in self.items if isinstance(item, MapFailure))
        return done, failed, len(self._running)

    def _report(self) -> None:
        if self.progress is None:
            return
        done, failed, running = self.counts()
        ended = done + failed - self._base
        left = len(self.items) - done - failed
        elapsed = time.time() - self._started
        eta_end = (time.time() + elapsed / ended * left) * 1000 if ended and left else 0.0
        with contextlib.suppress(Exception):  # a bar that went away must not end the map
            self.progress.update(done=done, failed=failed, running=running, eta_end=eta_end)


def _progress_for(plan: MapPlan, run_stop: Callable[[], None]) -> MapProgress | None:
    """The bar, where one can show: a kernel's main thread, ``show`` on; else None."""
    if not plan.show or host.environment() != "kernel":
        return None
    if threading.current_thread() is not threading.main_thread():
        return None
    from ..widgets.progress import MapProgress

    return MapProgress(len(plan.prompts), on_stop=run_stop).show()


def _settled_bundle(result: MapResult, elapsed: float, stopped: bool) -> dict[str, str]:
    from ..inert import escape_html, html_block

    line = f"hermes.map: {summary(result.counts(), len(result))} in {elapsed:,.1f} s"
    if stopped:
        line += " (stopped: hermes.map(prompts, resume=hermes.last_map) runs the rest)"
    return {"text/plain": line, "text/html": html_block(f"<p>{escape_html(line)}</p>")}


def map_blocking(plan: MapPlan) -> Any:
    """Run ``plan`` and wait on this thread (the bar's Stop works meanwhile: the comm pump); a kernel
    interrupt stops the run like Stop, then raises."""
    if runtime.in_loop_thread():
        raise HermesUsageError("map() was called on the hermes-notebook loop; use map_async() there")
    run = MapRun(plan)
    run.progress = bar = _progress_for(plan, run.stop)
    pump = CommPump(warn=False) if bar is not None else None
    future = runtime.submit(run.run())
    interrupted = False
    try:
        while not future.done():
            try:
                if pump is not None:
                    pump.poll()
                concurrent.futures.wait([future], timeout=PUMP_INTERVAL)
            except KeyboardInterrupt:  # like Stop: the running prompts end, then the interrupt goes on
                interrupted = True
                run.stop()
    finally:
        if pump is not None:
            pump.close()
    result = future.result()
    if bar is not None:
        bar.settle(_settled_bundle(result, run.elapsed, run.stopped))
    shaped = plan.shaped(result)
    if interrupted:
        raise KeyboardInterrupt(
            f"hermes.map stopped: {summary(result.counts(), len(result))} (hermes.last_map)"
        )
    return shaped


async def map_awaited(plan: MapPlan) -> Any:
    """Run ``plan`` on the package loop and ``await`` it from any loop (cancelling the wait stops it)."""
    run = MapRun(plan)
    run.progress = bar = _progress_for(plan, run.stop)
    future = runtime.submit(run.run())
    if bar is not None:  # settled when the run ends, however this wait ends

        def settle(done: concurrent.futures.Future[MapResult]) -> None:
            if not done.cancelled() and done.exception() is None:
                bar.settle(_settled_bundle(done.result(), run.elapsed, run.stopped))

        future.add_done_callback(settle)
    try:
        result = await runtime.wrap_future(future)
    except BaseException:
        run.stop()
        raise
    return plan.shaped(result)
