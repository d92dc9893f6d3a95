"""Let a comm's messages run on the kernel subshell the front end sent them on, so they work while a cell
runs.

Why: JupyterLab >= 4.4 and Notebook >= 7.4 (setting ``commsOverSubshells``, default ``perCommTarget``) send
each comm target's messages on a kernel subshell of their own when the kernel supports subshells (ipykernel >=
7). ipykernel 7.0-7.3 handles them there, on the subshell's thread, even while the main shell runs a user's
cell. ipykernel 7.4 overrides the front end: its shell-channel thread asks ``comm._reply_subshell_for(data,
default)`` where a ``comm_msg``/``comm_close`` should run, and that answers with the subshell of the comm's
*last kernel-side publish* (the ``subshell_id`` in ``kernel.get_parent()``'s header). Our widgets publish from
the package loop thread, where ``get_parent()`` falls back to the shell context of whatever message the kernel
handled last (usually the cell that created the widget, or the running cell): no subshell, the main shell. So
on 7.4 a click or a prompt waited behind the running cell.

:func:`follow_frontend_subshells` replaces that answer, for one comm, with the front end's own choice
(``default``: the subshell in the incoming message's header, or the main shell when it names none). Everything
else stays as ipykernel does it. Feature-detected, never by version: where the kernel has no subshells
(ipykernel 6, not in a kernel) or no routing hook (7.0-7.3 follow the front end already), it changes nothing.

What the caller takes on: once followed, the comm's message handlers may run on a subshell thread, at the same
time as the user's cell on the main thread and our package loop. They must be thread-safe and short: check the
message, then schedule the work onto the package loop (:mod:`hermes_notebook.runtime`); never print (output of
a comm handler belongs to the comm message, and front ends do not show it in the cell).
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable
from typing import Any, Literal

__all__ = ["Routing", "follow_frontend_subshells", "kernel_has_subshells"]

log = logging.getLogger(__name__)

#: ``"followed"``: our route is installed (the kernel asks each comm where its messages run: ipykernel >=
# 7.4); : ``"kernel"``: the kernel has subshells and follows the front end by itself (ipykernel 7.0-7.3),
# nothing changed; : ``"none"``: no subshells here (ipykernel 6, no kernel, no comm): messages wait while the
# main shell is busy.
Routing = Literal["followed", "kernel", "none"]

#: The name of ipykernel's per-comm routing hook (ipykernel 7.4: ``BaseComm._reply_subshell_for``).
_HOOK = "_reply_subshell_for"
#: Set on a comm whose route is ours, so a second call changes nothing.
_MARK = "_hermes_follows_frontend_subshell"


def kernel_has_subshells(kernel: Any = None) -> bool:
    """True when ``kernel`` (default: the running IPython kernel) says it supports subshells (JEP 91)."""
    kernel = kernel if kernel is not None else _running_kernel()
    if kernel is None:
        return False
    try:
        features = kernel.kernel_info.get("supported_features") or []
    except Exception:  # not an ipykernel Kernel, or one without kernel_info
        return False
    return "kernel subshells" in features


def follow_frontend_subshells(target: Any) -> Routing:
    """Make the messages of ``target`` (a widget or a comm) run on the subshell the front end sent them on.

    Call it once, right after the comm is open (``widget.comm`` exists). Thread-safe handlers required (module
    docstring). Returns what happens now (:data:`Routing`); never raises: a kernel without the feature is left
    exactly as it was.
    """
    comm = getattr(target, "comm", target)
    if comm is None:
        return "none"
    kernel = getattr(comm, "kernel", None) or _running_kernel()
    if not kernel_has_subshells(kernel):
        return "none"
    if getattr(comm, _MARK, False):
        return "followed"
    original = getattr(comm, _HOOK, None)
    if not callable(original) or not _takes_data_and_default(original):
        return "kernel"  # 7.0-7.3 route by the message header already; an unknown hook is not ours to replace
    try:
        setattr(comm, _HOOK, _frontend_route(original))
        setattr(comm, _MARK, True)
    except Exception:  # a comm class that refuses new attributes: leave the kernel's routing alone
        log.debug("could not route %r by the front end's subshell", comm, exc_info=True)
        return "kernel"
    return "followed"


def _frontend_route(original: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    """The hook ipykernel's shell-channel thread calls: the front end's subshell (``default``) wins."""

    def route(data: Any, default: Any) -> Any:
        try:
            original(
                data, default
            )  # ipykernel's bookkeeping (it pops a per-request entry); its answer is ignored
        except Exception:
            log.debug("ipykernel's comm route failed; using the front end's subshell", exc_info=True)
        return default

    return route


def _takes_data_and_default(hook: Callable[..., Any]) -> bool:
    try:
        inspect.signature(hook).bind(None, None)
    except (TypeError, ValueError):
        return False
    return True


def _running_kernel() -> Any | None:
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython is a dependency
        return None
    shell = get_ipython()
    return getattr(shell, "kernel", None) if shell is not None else None
