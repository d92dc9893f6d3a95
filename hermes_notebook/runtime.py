"""One package-owned asyncio loop in a daemon thread, and blocking bridges onto it.

Why a thread: a Jupyter kernel already runs an event loop, so ``asyncio.run`` fails inside a cell and
nest-asyncio would patch asyncio globally. Instead every coroutine of ours runs on our own loop; notebook code
blocks on a ``concurrent.futures.Future`` (or awaits a wrapped one), which works the same in a kernel, in
IPython and in a plain script.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import functools
import threading
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, ParamSpec, TypeVar

__all__ = [
    "blocking",
    "call_soon",
    "caller_first",
    "get_loop",
    "in_loop_thread",
    "on_loop",
    "on_package_loop",
    "run_sync",
    "submit",
    "wrap_future",
]

T = TypeVar("T")
P = ParamSpec("P")

_lock = threading.Lock()
_loop: asyncio.AbstractEventLoop | None = None
_thread: threading.Thread | None = None


def get_loop() -> asyncio.AbstractEventLoop:
    """Return the package's loop, starting its daemon thread on first use."""
    global _loop, _thread
    with _lock:
        if _loop is None or _loop.is_closed() or _thread is None or not _thread.is_alive():
            loop = asyncio.new_event_loop()
            ready = threading.Event()

            def _run() -> None:
                asyncio.set_event_loop(loop)
                loop.call_soon(ready.set)
                loop.run_forever()

            thread = threading.Thread(target=_run, name="hermes-notebook-loop", daemon=True)
            thread.start()
            ready.wait()
            _loop, _thread = loop, thread
        return _loop


def in_loop_thread() -> bool:
    """True when called from the package's loop thread (where blocking on it would deadlock)."""
    return _thread is not None and threading.current_thread() is _thread


def submit(coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
    """Schedule a coroutine on the package loop and return a thread-safe future."""
    return asyncio.run_coroutine_threadsafe(coro, get_loop())


def run_sync(coro: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
    """Run a coroutine on the package loop and block until it finishes.

    Works inside a running event loop (a Jupyter cell) because the coroutine runs on another thread.
    ``KeyboardInterrupt`` while waiting cancels the coroutine before it propagates.
    """
    if in_loop_thread():
        coro.close()
        raise RuntimeError(
            "run_sync() was called from the hermes-notebook loop thread; await the coroutine instead"
        )
    future = submit(coro)
    try:
        return future.result(timeout)
    except KeyboardInterrupt:
        future.cancel()
        raise
    except concurrent.futures.TimeoutError:
        if future.done():  # the coroutine itself raised a TimeoutError (an alias since Python 3.11)
            raise
        future.cancel()
        raise TimeoutError(f"the operation did not finish within {timeout} s") from None


def wrap_future(future: concurrent.futures.Future[T]) -> Awaitable[T]:
    """Make a package-loop future awaitable from any other running loop (e.g. the kernel's)."""
    return asyncio.wrap_future(future)


def call_soon(callback: Callable[..., Any], *args: Any) -> None:
    """Run a plain callback on the package loop, from any thread."""
    get_loop().call_soon_threadsafe(callback, *args)


async def on_package_loop(coro: Coroutine[Any, Any, T]) -> T:
    """Await ``coro`` on the package loop from any loop (the clients' connections live there)."""
    if in_loop_thread():
        return await coro
    return await wrap_future(submit(coro))


def on_loop(func: Callable[P, Coroutine[Any, Any, T]]) -> Callable[P, Coroutine[Any, Any, T]]:
    """Make an async method run on the package loop, whichever loop awaits it (a kernel cell's, or ours)."""

    @functools.wraps(func)
    async def hop(*args: P.args, **kwargs: P.kwargs) -> T:
        return await on_package_loop(func(*args, **kwargs))

    return hop


def blocking(func: Callable[P, Coroutine[Any, Any, T]], *, timeout: float | None = None) -> Callable[P, T]:
    """The blocking twin of an ``*_async`` method: same signature and docstring, runs on the package loop
    (``timeout``: seconds it may wait, then ``TimeoutError``).

    Why: notebook code wants ``hermes.jobs.list()`` without ``await``, and scripts want ``await ..._async()``;
    writing each operation once as a coroutine and deriving the other keeps the two from drifting apart.
    """

    @functools.wraps(func)
    def wait(*args: P.args, **kwargs: P.kwargs) -> T:
        return run_sync(func(*args, **kwargs), timeout)

    name = func.__name__.removesuffix("_async")
    wait.__name__ = name
    wait.__qualname__ = func.__qualname__.removesuffix("_async")
    wait.__doc__ = f"{func.__doc__ or ''}\n\nBlocks until done; ``{name}_async`` is the awaitable twin."
    return wait


def caller_first(
    step: Callable[..., object],
) -> Callable[[Callable[P, Coroutine[Any, Any, T]]], Callable[P, Coroutine[Any, Any, T]]]:
    """Run ``step(*args, **kwargs)`` on the calling thread when the coroutine is made, then the coroutine
    wherever it is awaited (its blocking twin's included: :func:`blocking` makes it on the caller's thread).

    Why: a few operations must touch the caller's thread first (IPython keeps its display hooks per thread; a
    kernel's main loop is only found from its own thread), and still be one coroutine with a derived twin.
    """

    def decorate(func: Callable[P, Coroutine[Any, Any, T]]) -> Callable[P, Coroutine[Any, Any, T]]:
        @functools.wraps(func)
        def made(*args: P.args, **kwargs: P.kwargs) -> Coroutine[Any, Any, T]:
            step(*args, **kwargs)
            return func(*args, **kwargs)

        return made

    return decorate


def _shutdown() -> None:
    loop = _loop
    if loop is not None and not loop.is_closed():
        loop.call_soon_threadsafe(loop.stop)


atexit.register(_shutdown)
