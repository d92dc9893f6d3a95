"""How long an agent's run may take: the default and the maximum, from the environment, and what Hermes is
told so that it never gives up on a call before the kernel does.

Why its own module: a long cell (a training run of 20 minutes and more) must neither be cut by our own limit
nor by Hermes'. Both Hermes versions' MCP clients end a tool call after the server entry's ``timeout``
(``mcp_servers.<name>.timeout``, default 300 s: ``tools/mcp_tool.py``, ``_DEFAULT_TOOL_TIMEOUT``, a
wall-clock bound that progress does not extend), and their streamable-HTTP client drops a response that sends
no byte for 300 s (httpx ``read=300.0``). So the kernel registers its server with a ``timeout`` above the
longest run it allows (:func:`tool_call_timeout`), and answers each call as an SSE stream that sends a ping
every :data:`KEEPALIVE_SECONDS` and a progress notification every :func:`progress_interval` seconds where
the caller asked for progress (:mod:`.server`).

Settings (environment; ``share_kernel(run_limit=...)`` overrides the default for one connection):

- ``HERMES_RUN_LIMIT``: seconds an approved run may take by default (120);
- ``HERMES_RUN_LIMIT_MAX``: the most any connection may allow (4 hours); Hermes' timeout follows it;
- ``HERMES_TOOLS_PROGRESS``: seconds between progress notifications (10).
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from ..errors import HermesUsageError

__all__ = [
    "ENV_PROGRESS",
    "ENV_RUN_LIMIT",
    "ENV_RUN_LIMIT_MAX",
    "KEEPALIVE_SECONDS",
    "default_run_limit",
    "max_run_limit",
    "progress_interval",
    "tool_call_timeout",
]

ENV_RUN_LIMIT = "HERMES_RUN_LIMIT"
ENV_RUN_LIMIT_MAX = "HERMES_RUN_LIMIT_MAX"
ENV_PROGRESS = "HERMES_TOOLS_PROGRESS"
#: Seconds between the SSE pings of a call's response stream (sse-starlette's default; Hermes drops a
#: response silent for 300 s).
KEEPALIVE_SECONDS = 15.0
#: Seconds Hermes is given on top of the longest run: the Run card's wait for a click and the answer itself.
_MARGIN = 180.0


def _seconds(name: str, default: float, env: Mapping[str, str] | None, *, low: float = 1.0) -> float:
    raw = (os.environ if env is None else env).get(name, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not low <= value <= 7 * 86_400:
        raise HermesUsageError(f"{name} must be a number of seconds from {low:g} to 604800, not {raw!r}")
    return value


def max_run_limit(env: Mapping[str, str] | None = None) -> float:
    """The longest run any connection may allow (``HERMES_RUN_LIMIT_MAX``, 4 hours by default)."""
    return _seconds(ENV_RUN_LIMIT_MAX, 4 * 3600.0, env)


def default_run_limit(env: Mapping[str, str] | None = None) -> float:
    """The run limit where ``share_kernel`` names none (``HERMES_RUN_LIMIT``, 120 s), at most the maximum."""
    return min(_seconds(ENV_RUN_LIMIT, 120.0, env), max_run_limit(env))


def progress_interval(env: Mapping[str, str] | None = None) -> float:
    """Seconds between a running call's progress notifications (``HERMES_TOOLS_PROGRESS``, 10 s)."""
    return _seconds(ENV_PROGRESS, 10.0, env, low=0.05)


def tool_call_timeout(env: Mapping[str, str] | None = None) -> int:
    """The ``timeout`` the kernel's server entry gives Hermes: above the longest run, with the card's wait."""
    return int(max_run_limit(env) + _MARGIN)
