"""A preview's limits (time and memory, both settings) and its refusals: one line each, checked before
anything forks.

Why refuse rather than try: a forked copy shares the kernel's memory but not its threads, so a runtime that
keeps state in driver threads or a device (CUDA, and the ML runtimes built on it) is broken or hangs in the
copy; ``fork`` itself is POSIX, and copy-on-write previews are measured only on Linux. A cell running now
means the namespace is half-changed: a copy of it would preview the wrong state.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from dataclasses import dataclass

__all__ = [
    "DEFAULT_MEMORY",
    "DEFAULT_SECONDS",
    "FORK_UNSAFE",
    "MEMORY_ENV",
    "SECONDS_ENV",
    "PreviewLimits",
    "fork_unsafe_runtime",
    "refusal",
]

#: Seconds a preview may run (the setting: HERMES_PREVIEW_SECONDS).
DEFAULT_SECONDS = 30.0
#: Bytes a preview may allocate at most (the setting: HERMES_PREVIEW_MEMORY_MB); a quarter of the free memory
#: when that is less.
DEFAULT_MEMORY = 1024**3
SECONDS_ENV = "HERMES_PREVIEW_SECONDS"
MEMORY_ENV = "HERMES_PREVIEW_MEMORY_MB"


def _available_memory() -> int | None:
    try:
        with open("/proc/meminfo", encoding="ascii") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


@dataclass(frozen=True)
class PreviewLimits:
    """How long a preview may run and how much memory it may take beyond what the kernel holds."""

    seconds: float = DEFAULT_SECONDS
    memory: int = DEFAULT_MEMORY

    @classmethod
    def resolve(cls, seconds: float | None = None, memory_mb: float | None = None) -> PreviewLimits:
        """Arguments, then the environment, then the defaults (memory: 1 GB or a quarter of free memory)."""
        if seconds is None:
            seconds = float(os.environ.get(SECONDS_ENV) or DEFAULT_SECONDS)
        if memory_mb is None and os.environ.get(MEMORY_ENV):
            memory_mb = float(os.environ[MEMORY_ENV])
        if memory_mb is not None:
            memory = int(memory_mb * 1024 * 1024)
        else:
            free = _available_memory()
            memory = DEFAULT_MEMORY if free is None else min(DEFAULT_MEMORY, free // 4)
        if not seconds > 0 or memory <= 0:
            raise ValueError(
                f"a preview needs a positive time limit and memory budget, not {seconds} s, {memory}"
            )
        return cls(seconds, memory)

    def describe_memory(self) -> str:
        """``1.0 GB`` / ``256 MB``."""
        return f"{self.memory / 1024**3:.1f} GB" if self.memory >= 1024**3 else f"{self.memory // 1024**2} MB"


def _torch_cuda() -> bool:
    torch = sys.modules.get("torch")
    cuda = getattr(torch, "cuda", None)
    check = getattr(cuda, "is_initialized", None)
    return bool(callable(check) and check())


def _imported(name: str) -> Callable[[], bool]:
    return lambda: name in sys.modules


#: Runtimes a forked copy cannot use safely: (what the refusal names, whether it is initialised here).
FORK_UNSAFE: tuple[tuple[str, Callable[[], bool]], ...] = (
    ("CUDA (torch)", _torch_cuda),
    ("CUDA (cupy)", _imported("cupy.cuda")),
    ("CUDA (pycuda)", _imported("pycuda.autoinit")),
    ("TensorFlow", _imported("tensorflow")),
    ("JAX", _imported("jax")),
)


def fork_unsafe_runtime() -> str | None:
    """The first fork-unsafe runtime initialised in this process, or None."""
    for name, initialised in FORK_UNSAFE:
        try:
            if initialised():
                return name
        except Exception:  # a half-imported runtime: say it is there rather than fork beside it
            return name
    return None


def refusal(cell_running: bool, platform: str | None = None) -> str | None:
    """Why a preview cannot run now, in one line, or None: nothing forks when there is a reason."""
    platform = sys.platform if platform is None else platform
    if not platform.startswith("linux"):
        return f"Preview runs only on Linux (a copy of the kernel is a fork); this kernel runs on {platform}."
    runtime = fork_unsafe_runtime()
    if runtime is not None:
        return f"Preview is off: {runtime} is initialised in this kernel, and a copy of it would not be safe."
    if cell_running:
        return "Preview waits for no cell: a cell is running now; preview again when it has finished."
    return None
