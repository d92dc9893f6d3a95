"""The chat's session details: the active model, the context window's breakdown, and Hermes' own commands.

A mixin of :class:`~hermes_notebook.widgets.chat.Chat`. ``model`` and ``context_usage`` are small synced traitlets
(the header's model label and session usage gauge), refreshed when a session opens and after every turn.
The command catalog is never state (a saved notebook would keep it): a view asks (``commands``) when its ``/``
menu opens, and the kernel answers with a ``commands`` message. A ``command`` message runs ``/name args`` on the
session; its output comes back as a ``command_output`` message, which the view shows as text. Everything here is
server text: scrubbed of the connection's key and token before it leaves the kernel.
"""

from __future__ import annotations

import logging
from collections.abc import Coroutine, Mapping
from typing import TYPE_CHECKING, Any

import traitlets

from ..errors import HermesError, HermesUsageError
from ..scrub import scrub, scrub_value

if TYPE_CHECKING:
    from .stream_scrub import StreamScrubber

__all__ = ["ChatSession", "context_state"]

log = logging.getLogger(__name__)

#: Categories kept from a context breakdown (a few are expected: system prompt, tools, conversation ...).
MAX_CATEGORIES = 12


def context_state(usage: Mapping[str, Any] | None, breakdown: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The ``context_usage`` traitlet: ``{"used", "max", "percent", "categories": [{"id", "label", "tokens"}]}`` or None."""
    source = breakdown if breakdown and breakdown.get("context_max") else usage or {}
    used, most = source.get("context_used"), source.get("context_max")
    if not isinstance(used, int) or not isinstance(most, int) or most <= 0:
        return None
    categories = []
    for item in (breakdown or {}).get("categories") or ():
        if isinstance(item, Mapping) and isinstance(item.get("tokens"), int):
            categories.append({"id": str(item.get("id") or "")[:40], "label": str(item.get("label") or "")[:80],
                               "tokens": int(item["tokens"])})
    percent = source.get("context_percent")
    return {"used": used, "max": most, "percent": percent if isinstance(percent, (int, float)) else 100 * used / most,
            "categories": categories[:MAX_CATEGORIES]}


class ChatSession(traitlets.HasTraits):
    """The chat's ``model`` label, ``context`` gauge and slash commands (see the module docstring)."""

    #: The open session's model as Hermes reports it ("" until known).
    model = traitlets.Unicode("").tag(sync=True)
    #: The session's context window: ``{"used", "max", "percent", "categories"}``; None until a turn ran.
    context_usage: traitlets.Dict[str, Any] | None = traitlets.Dict(allow_none=True, default_value=None).tag(sync=True)

    if TYPE_CHECKING:
        _conn: Any
        _ref: Any
        _scrubber: StreamScrubber
        notice: str
        busy: bool

        def on_action(self, name: str, handler: Any) -> None: ...
        def run_in_background(self, coro: Coroutine[Any, Any, None], what: str) -> Any: ...
        def send_prompt(self, text: str, images: Any = ()) -> None: ...
        def _send_custom(self, content: dict[str, Any]) -> None: ...

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.on_action("commands", lambda _c: self.run_in_background(self._send_catalog(), "listing Hermes' commands"))
        self.on_action("command", lambda c: self.run_in_background(self._run_command(c["line"]), "running the command"))

    @traitlets.observe("session")
    def _session_opened(self, change: Any) -> None:
        if (change["old"] or {}).get("id") == (change["new"] or {}).get("id"):
            return  # a new title only
        self.model, self.context_usage = "", None
        if change["new"] is not None:
            self.run_in_background(self._refresh_quietly(), "reading the session's model")

    @traitlets.observe("busy")
    def _turn_ended(self, change: Any) -> None:
        if change["old"] and not change["new"]:
            self.run_in_background(self._refresh_quietly(), "reading the session's usage")

    async def _refresh_quietly(self) -> None:
        """The label and gauge are best effort: a failure to read them is logged, never the chat's notice."""
        try:
            await self.refresh_session_info()
        except Exception as exc:
            log.info("could not read the session's model and usage: %s", exc)

    async def refresh_session_info(self) -> None:
        """Read the open session's model and context window (``model.options``, ``session.context_breakdown``)."""
        from ..client.dashboard.session_info import context_breakdown, model_options

        conn, ref = self._conn, self._ref
        if conn is None or ref is None:
            return
        try:
            options = await model_options(conn, ref)
        except HermesUsageError as exc:  # not offered: the label stays empty
            log.info("no model label: %s", exc)
        else:
            if self._ref is ref:
                self.model = self._scrubbed(str(options.get("model") or ""))[:200]
        try:
            breakdown: Mapping[str, Any] | None = await context_breakdown(conn, ref)
        except HermesUsageError:
            breakdown = None
        if self._ref is ref:
            self.context_usage = scrub_value(context_state(None, breakdown), self._scrubber.secrets)

    def set_model(self, name: str, *, confirm: bool = False) -> Any:
        """Switch the open session's model (``config.set``); the header label follows. Returns a future."""
        return self.run_in_background(self._set_model(name, confirm), "switching the model")

    async def _set_model(self, name: str, confirm: bool) -> None:
        from ..client.dashboard.session_info import set_model

        if self._ref is None:
            raise HermesError("the session is not open")
        answer = await set_model(self._conn, self._ref, name, confirm=confirm)
        self.model = self._scrubbed(str(answer.get("value") or name))[:200]
        if answer.get("warning"):
            self.notice = self._scrubbed(str(answer["warning"]).strip())[:500]

    async def _send_catalog(self) -> None:
        from ..client.dashboard.commands import commands_catalog

        entries = await commands_catalog(self._conn, self._ref)
        self._send_custom({"type": "commands", "commands": scrub_value(entries, self._scrubber.secrets)})

    async def _run_command(self, line: str) -> None:
        from ..client.dashboard.commands import run_command

        if self._ref is None:
            raise HermesError("the session is not open")
        outcome = await run_command(self._conn, self._ref, line)
        if outcome.kind in ("send", "skill") and outcome.message.strip():
            self.send_prompt(outcome.message)
            text = outcome.display or f"{outcome.command} sent a prompt"
        else:
            text = outcome.output or outcome.display or outcome.message or "(no output)"
        self._send_custom({"type": "command_output", "command": self._scrubbed(outcome.command),
                           "output": self._scrubbed(text), "warning": self._scrubbed(outcome.warning),
                           "prefill": self._scrubbed(outcome.message) if outcome.kind == "prefill" else ""})
        if outcome.command.split()[0] in ("/model", "/provider"):  # it may have switched models
            await self.refresh_session_info()

    def _scrubbed(self, text: str) -> str:
        return scrub(text, self._scrubber.secrets)
