"""A Dashboard session's model and usage: ``model.options``, ``config.set model``, ``session.usage``,
``session.context_breakdown`` (docs/protocol/dashboard-newer.md §10).

Functions of a connection that use only its public methods (like :mod:`.compaction`). Every answer is the
server's JSON, untrusted: callers render it through :mod:`hermes_notebook.inert`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ...errors import HermesProtocolError, HermesUsageError
from .offered import call_offered

if TYPE_CHECKING:
    from .connection import DashboardConnection
    from .session import SessionRef

__all__ = [
    "MODEL_NAME",
    "check_model_name",
    "context_breakdown",
    "model_options",
    "session_usage",
    "set_model",
]

#: A model name as a switch takes it. Hermes parses the value like its ``/model`` command line, where words
#: starting with ``--`` are flags (``--global`` would change the profile's default for every session), so a
#: name is one word of these characters and never starts with ``-``.
MODEL_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:/@+=-]{0,199}")


def check_model_name(name: object) -> str:
    """``name`` if it is one model name, else :class:`HermesUsageError` saying why (before anything is
    sent)."""
    if not isinstance(name, str) or not MODEL_NAME.fullmatch(name):
        shown = repr(name[:60]) if isinstance(name, str) else type(name).__name__
        raise HermesUsageError(
            "model must be one model name (letters, digits and ._:/@+=-, not starting with '-'); got "
            f"{shown}",
            param="model",
        )
    return name


def _mapping(result: Any, method: str) -> dict[str, Any]:
    if not isinstance(result, Mapping):
        raise HermesProtocolError(f"{method} answered {type(result).__name__}, not an object")
    return dict(result)


async def model_options(conn: DashboardConnection, ref: SessionRef | None = None) -> dict[str, Any]:
    """``model.options``: ``{"providers": [{slug, name, models, is_current, ...}], "model", "provider"}``.

    With ``ref`` the answer is layered over that session's live provider and model.
    """
    result = await call_offered(conn, "model.options", {}, what="listing models", ref=ref)
    return _mapping(result, "model.options")


async def set_model(
    conn: DashboardConnection, ref: SessionRef, name: str, *, confirm: bool = False
) -> dict[str, Any]:
    """Switch the session's model (``config.set`` ``key=model``, session scope); the session keeps it.

    Returns ``{key, value, warning, scope, deferred, ...}``: ``warning`` says e.g. that the provider does not
    list the model; ``deferred`` that a running turn finishes on the old one. A switch Hermes wants confirmed
    (an expensive model) writes nothing and raises :class:`HermesUsageError` with Hermes' message, unless
    ``confirm``.
    """
    check_model_name(name)
    params = {"key": "model", "value": name, "confirm_expensive_model": bool(confirm)}
    result = _mapping(
        await call_offered(conn, "config.set", params, what="switching models", ref=ref), "config.set"
    )
    result.pop("info", None)
    if result.get("confirm_required"):
        message = str(
            result.get("confirm_message") or result.get("warning") or "Hermes asks for confirmation"
        )
        raise HermesUsageError(f"{message.strip()} (pass confirm=True to switch anyway)", param="model")
    return result


async def session_usage(conn: DashboardConnection, ref: SessionRef) -> dict[str, Any]:
    """``session.usage``: token, cache, context and cost counters of the session so far."""
    result = await call_offered(conn, "session.usage", {}, what="session usage", ref=ref)
    return _mapping(result, "session.usage")


async def context_breakdown(conn: DashboardConnection, ref: SessionRef) -> dict[str, Any]:
    """``session.context_breakdown``: the context window split by category (empty before the first turn)."""
    result = await call_offered(conn, "session.context_breakdown", {}, what="the context breakdown", ref=ref)
    return _mapping(result, "session.context_breakdown")
