"""The facade's model, usage and command methods: ``hermes.models()``, ``set_model``, ``usage``, ``command``.

A mixin of :class:`~hermes_notebook.notebook.facade.Hermes`, so the facade module stays a readable size; it uses
only what the facade owns (its session book, clients and runner). Each server's feature is found by asking it:
a method or route it lacks is a one-line "not offered by this Hermes" (docs/protocol/dashboard-newer.md §10).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .. import runtime
from ..errors import HermesUsageError
from ..runtime import on_package_loop
from ..scrub import scrub
from .handle import TurnOptions
from .results import Reply, Table
from .session_results import CommandResult, SessionUsage, usage_from

if TYPE_CHECKING:
    from ..client.api import ApiClient
    from ..client.dashboard import DashboardConnection, SessionRef
    from ..settings import Settings
    from .runner import TurnRunner
    from .sessions import SessionBook

__all__ = ["MODEL_COLUMNS", "SessionTools", "model_rows"]

MODEL_COLUMNS = ("model", "provider", "current")


def model_rows(options: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One row per model of a ``model.options`` answer (Dashboard or API Server), the current one marked."""
    current_model, current_provider = options.get("model") or "", options.get("provider") or ""
    rows: list[dict[str, Any]] = []
    for provider in options.get("providers") or ():
        if not isinstance(provider, Mapping):
            continue
        slug = str(provider.get("slug") or "")
        for model in provider.get("models") or ():
            if isinstance(model, str):
                current = model == current_model and (not current_provider or slug == current_provider)
                rows.append({"model": model, "provider": slug, "current": current})
    if current_model and not any(r["current"] for r in rows):  # a switched-to model the provider does not list
        rows.insert(0, {"model": str(current_model), "provider": str(current_provider), "current": True})
    return rows


class SessionTools:
    """``models``, ``set_model``, ``usage`` and ``command`` (each with an ``*_async`` twin) for the facade."""

    if TYPE_CHECKING:
        settings: Settings
        _book: SessionBook
        _runner: TurnRunner

        async def _dashboard_conn(self) -> DashboardConnection: ...
        async def _api_client(self) -> ApiClient: ...
        def ask(self, prompt: Any, *args: Any, **kwargs: Any) -> Any: ...
        async def ask_async(self, prompt: Any, *args: Any, **kwargs: Any) -> Any: ...

    # --- models ---

    def models(self) -> Table:
        """The models Hermes offers (``model``, ``provider``, ``current``), for the current session when there is one."""
        return runtime.run_sync(self._models())

    async def models_async(self) -> Table:
        """``await`` twin of :meth:`models`."""
        return await on_package_loop(self._models())

    async def _models(self) -> Table:
        if self.settings.dashboard_token:
            from ..client.dashboard.session_info import model_options

            conn = await self._dashboard_conn()
            key = self._book.current
            ref = await self._book.known_dashboard_ref(conn, key) if key is not None else None
            rows = model_rows(await model_options(conn, ref))
        else:
            api = await self._api_client()
            if await api.run_model_choice():
                rows = model_rows(await api.model_options())
            else:  # 0.19.0: the advertised name and model_routes aliases are all a run can name
                rows = [{"model": m.id, "provider": m.owned_by or "", "current": False} for m in await api.models()]
        current = next((r["model"] for r in rows if r["current"]), None)
        return Table(rows, columns=MODEL_COLUMNS, current=None, empty=f"no models listed (current: {current})")

    def set_model(self, name: str, session: str | None = None, *, confirm: bool = False) -> dict[str, Any]:
        """Switch a Dashboard session's model (the current one by default; started now if there is none yet).

        The session keeps the model for its later turns, as Hermes' ``/model`` does. Returns Hermes' answer
        (``value``, ``warning`` e.g. when the provider does not list the model, ``scope``). A model Hermes wants
        confirmed (an expensive one) is refused with its message unless ``confirm=True``.
        """
        return runtime.run_sync(self._set_model(name, session, confirm))

    async def set_model_async(self, name: str, session: str | None = None, *, confirm: bool = False) -> dict[str, Any]:
        """``await`` twin of :meth:`set_model`."""
        return await on_package_loop(self._set_model(name, session, confirm))

    async def _set_model(self, name: str, session: str | None, confirm: bool) -> dict[str, Any]:
        from ..client.dashboard.session_info import check_model_name, set_model

        check_model_name(name)
        if not self.settings.dashboard_token:
            raise HermesUsageError("set_model() needs the Dashboard (a dashboard token); with via='api' pass "
                                   "ask(..., model=NAME) for each run")
        conn, ref = await self._session_ref(session)
        return await set_model(conn, ref, name, confirm=confirm)

    async def _session_ref(self, session: str | None) -> tuple[DashboardConnection, SessionRef]:
        """The Dashboard session ``session`` names (as for ``ask``), started now if there is none yet."""
        conn = await self._dashboard_conn()
        key = self._book.key(session)
        if key is not None:
            return conn, await self._book.known_dashboard_ref(conn, key)
        options = TurnOptions(prompt="", session=session, via="dashboard", approve=None, clarify=None, new=False,
                              instructions=None, model=None, images=None)
        return conn, await self._book.dashboard_ref(conn, options)

    # --- usage ---

    def usage(self, session: str | None = None) -> SessionUsage:
        """Tokens, prompt cache, cost and the context window of a session (the current one by default)."""
        return runtime.run_sync(self._usage(session))

    async def usage_async(self, session: str | None = None) -> SessionUsage:
        """``await`` twin of :meth:`usage`."""
        return await on_package_loop(self._usage(session))

    async def _usage(self, session: str | None) -> SessionUsage:
        key = self._book.key(session)
        if key is None:
            raise HermesUsageError("there is no session yet: ask something first, or name a session")
        last = self._runner.replies.get(key) or []
        last_usage = last[-1].usage if last else None
        if not self.settings.dashboard_token:
            return usage_from(key, last_usage, notes=(
                "the API Server reports usage per run only: this is the last reply's (no session totals, no "
                "context breakdown)",))
        from ..client.dashboard.session_info import context_breakdown, session_usage

        conn = await self._dashboard_conn()
        ref = await self._book.known_dashboard_ref(conn, key)
        notes: list[str] = []
        try:
            usage: Mapping[str, Any] | None = await session_usage(conn, ref)
        except HermesUsageError as exc:  # not offered: what the last reply reported
            usage = last_usage
            notes.append(f"{exc}; showing the last reply's usage")
        try:
            breakdown: Mapping[str, Any] | None = await context_breakdown(conn, ref)
        except HermesUsageError as exc:
            breakdown = None
            notes.append(str(exc))
        return usage_from(key, usage, breakdown, notes)

    # --- Hermes' own commands ---

    def command(self, line: str, session: str | None = None) -> CommandResult | Reply:
        """Run a Hermes slash command (``"/help"``, ``"/model"``, ``"/usage"`` ...) on a Dashboard session.

        Its output comes back as a :class:`CommandResult` (shown inert). A command that asks for a prompt to be
        sent (a skill, ``/plan``) is sent as the session's next turn, and its :class:`Reply` returned.
        """
        outcome = runtime.run_sync(self._command(line, session))
        if isinstance(outcome, str):
            reply: Reply = self.ask(outcome, session=session)
            return reply
        return outcome

    async def command_async(self, line: str, session: str | None = None) -> CommandResult | Reply:
        """``await`` twin of :meth:`command`."""
        outcome = await on_package_loop(self._command(line, session))
        if isinstance(outcome, str):
            answered: Reply = await self.ask_async(outcome, session=session)
            return answered
        return outcome

    async def _command(self, line: str, session: str | None) -> CommandResult | str:
        """The command's output, or the prompt text it asks to send."""
        from ..client.dashboard.commands import parse_command, run_command

        name, arg = parse_command(line)
        if not self.settings.dashboard_token:
            raise HermesUsageError("Hermes commands need the Dashboard (a dashboard token); the API Server has none")
        conn, ref = await self._session_ref(session)
        secrets = (self.settings.api_key, self.settings.dashboard_token)
        outcome = await run_command(conn, ref, f"{name} {arg}".strip())
        if outcome.kind in ("send", "skill") and outcome.message.strip():
            return outcome.message
        text = outcome.output or outcome.display or outcome.message or "(no output)"
        if outcome.kind == "prefill":
            text = f"Hermes suggests this prompt (send it with hermes.ask):\n{text}"
        return CommandResult(outcome.command, scrub(text, secrets), scrub(outcome.warning, secrets))
