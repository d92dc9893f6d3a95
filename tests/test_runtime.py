"""The package loop thread and its blocking bridges (hermes_notebook/runtime.py)."""

from __future__ import annotations

import asyncio
import threading

import pytest

from hermes_notebook import runtime
from hermes_notebook.client.api import ApiClient, Health
from hermes_notebook.settings import Settings


async def _health(settings: Settings) -> tuple[Health, str]:
    async with ApiClient(settings) as api:
        return await api.health(), threading.current_thread().name


async def test_run_sync_works_inside_a_running_event_loop(settings: Settings) -> None:
    """run_sync() called from a coroutine (as in a Jupyter cell) runs the call on the package loop thread."""
    asyncio.get_running_loop()  # we are inside a running loop, like a notebook cell
    health, thread = runtime.run_sync(_health(settings), timeout=30)
    assert health.ok and health.version == "0.19.0"
    assert thread == "hermes-notebook-loop" and thread != threading.current_thread().name


async def test_wrap_future_is_awaitable_from_another_loop(settings: Settings) -> None:
    """A submit() future wrapped with wrap_future() can be awaited from the caller's own loop."""
    health, thread = await runtime.wrap_future(runtime.submit(_health(settings)))
    assert health.status == "ok" and thread == "hermes-notebook-loop"


def test_run_sync_timeout_cancels_the_coroutine() -> None:
    """run_sync(timeout=...) raises TimeoutError and cancels the coroutine on the loop."""
    cancelled = threading.Event()

    async def forever() -> None:
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            cancelled.set()
            raise

    with pytest.raises(TimeoutError, match="0.1 s"):
        runtime.run_sync(forever(), timeout=0.1)
    assert cancelled.wait(5)


def test_run_sync_refuses_to_block_its_own_loop_thread() -> None:
    """run_sync() from the loop thread raises RuntimeError instead of deadlocking."""

    async def nested() -> str:
        assert runtime.in_loop_thread()
        coro = asyncio.sleep(0)
        try:
            runtime.run_sync(coro)
        except RuntimeError as exc:
            return str(exc)
        return "no error"

    assert "loop thread" in runtime.run_sync(nested(), timeout=5)
    assert not runtime.in_loop_thread()


def test_call_soon_runs_on_the_loop_thread() -> None:
    """call_soon() runs a plain callback on the package loop from any thread."""
    ran_on: list[str] = []
    done = threading.Event()

    def callback(tag: str) -> None:
        ran_on.append(f"{tag}:{threading.current_thread().name}")
        done.set()

    runtime.call_soon(callback, "cb")
    assert done.wait(5) and ran_on == ["cb:hermes-notebook-loop"]
    assert runtime.get_loop() is runtime.get_loop()


def test_run_sync_passes_through_a_timeout_raised_by_the_coroutine() -> None:
    """A coroutine's own TimeoutError subclass reaches the caller unchanged, not as run_sync's timeout."""
    from hermes_notebook.errors import HermesTimeoutError

    async def fails() -> None:
        raise HermesTimeoutError("the job did not run before the scheduler's next tick")

    with pytest.raises(HermesTimeoutError, match="scheduler"):
        runtime.run_sync(fails())


def test_caller_first_runs_its_step_on_the_caller_and_the_coroutine_on_the_loop() -> None:
    """``caller_first``: the step runs where the coroutine is made (the blocking twin makes it on the caller's
    thread), the coroutine where it is awaited (``on_loop``: the package loop), and the twin keeps the
    coroutine's signature (what ``share_kernel`` is built from)."""
    import inspect
    import threading

    from hermes_notebook.runtime import blocking, caller_first, in_loop_thread, on_loop

    where: list[tuple[str, bool]] = []

    class Face:
        def _step(self, *, n: int) -> None:
            where.append(("step", threading.current_thread() is threading.main_thread()))

        @caller_first(_step)
        @on_loop
        async def work_async(self, *, n: int) -> int:
            where.append(("coroutine", in_loop_thread()))
            return n * 2

        work = blocking(work_async)

    assert Face().work(n=21) == 42
    assert where == [("step", True), ("coroutine", True)]
    assert inspect.signature(Face.work) == inspect.signature(Face.work_async)
    assert str(inspect.signature(Face.work)) == "(self, *, n: 'int') -> 'int'"
