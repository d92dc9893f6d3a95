"""``hermes.undo()``, ``branch()``, ``regenerate()``, ``edit_last()``: rewinding a Dashboard session from code.

What the server does, and why 0.19.0 is told "not offered": :mod:`hermes_notebook.client.dashboard.rewind`.
Each works on the current session by default, or the one ``session=`` names as for ``ask``; it waits for a
turn of that session running here to end first (one turn at a time per session).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .. import runtime
from ..client.dashboard.rewind import branch_session, check_rewind, last_user_text, turns_after, undo_turn
from ..errors import HermesUsageError
from ..runtime import on_package_loop

if TYPE_CHECKING:
    from ..client.dashboard import DashboardConnection, SessionRef
    from ..settings import Settings
    from .results import Reply
    from .sessions import SessionBook

__all__ = ["Rewinding"]


class Rewinding:
    """The facade's undo / branch / regenerate / edit (mixed into :class:`~hermes_notebook.notebook.Hermes`)."""

    settings: Settings
    _book: SessionBook
    ask: Callable[..., Any]
    ask_async: Callable[..., Any]

    async def _dashboard_conn(self) -> DashboardConnection:  # pragma: no cover - Hermes defines it
        raise NotImplementedError

    async def _rewind_target(self, session: str | None, what: str) -> tuple[DashboardConnection, SessionRef, str]:
        if not self.settings.dashboard_token:
            raise HermesUsageError(f"{what} needs the Dashboard (a dashboard token): API Server sessions cannot rewind")
        key = self._book.key(session)
        if key is None:
            raise HermesUsageError(f"there is no session to {what} yet: ask something first, or name a session")
        conn = await self._dashboard_conn()
        return conn, await self._book.known_dashboard_ref(conn, key), key

    # --- undo ---

    def undo(self, session: str | None = None) -> int:
        """Drop the session's last exchange (your last prompt and Hermes' reply) from the model's context and the
        stored transcript. Returns how many stored rows went (0: nothing to undo)."""
        return runtime.run_sync(self._undo(session))

    async def undo_async(self, session: str | None = None) -> int:
        """``await`` twin of :meth:`undo`."""
        return await on_package_loop(self._undo(session))

    async def _undo(self, session: str | None) -> int:
        conn, ref, key = await self._rewind_target(session, "undo")
        async with self._book.turn_lock(key):
            return await undo_turn(conn, ref)

    # --- branch ---

    def branch(self, session: str | None = None, at: Any = None, name: str | None = None) -> str:
        """Copy the session into a new one and continue there: returns the new session's stored id (now current).

        ``at``: a message (its id, or a message dict from :meth:`history`); the branch keeps the conversation up
        to that message's exchange and leaves out every later one. None: all of it. ``name``: the new title."""
        return runtime.run_sync(self._branch(session, at, name))

    async def branch_async(self, session: str | None = None, at: Any = None, name: str | None = None) -> str:
        """``await`` twin of :meth:`branch`."""
        return await on_package_loop(self._branch(session, at, name))

    async def _branch(self, session: str | None, at: Any, name: str | None) -> str:
        conn, ref, key = await self._rewind_target(session, "branch")
        async with self._book.turn_lock(key):
            drop = 0
            if at is not None:
                at_id = at.get("id") if isinstance(at, dict) else getattr(at, "id", at)
                if not isinstance(at_id, str):
                    raise HermesUsageError(f"at must be a message id or a message, not {type(at).__name__}")
                drop = turns_after(await conn.history(key), at_id)
            child = await branch_session(conn, ref, drop_turns=drop, name=name)
        self._book.adopt(child)
        return child.stored_id

    # --- regenerate / edit ---

    def regenerate(self, session: str | None = None, **ask_options: Any) -> Reply:
        """Undo the last exchange and send its prompt again: a new reply to the same question (``ask`` options)."""
        text = runtime.run_sync(self._rewind_for_resend(session, None))
        return self.ask(text, session=session, via="dashboard", **ask_options)

    async def regenerate_async(self, session: str | None = None, **ask_options: Any) -> Reply:
        """``await`` twin of :meth:`regenerate`."""
        text = await on_package_loop(self._rewind_for_resend(session, None))
        return await self.ask_async(text, session=session, via="dashboard", **ask_options)

    def edit_last(self, text: str, session: str | None = None, **ask_options: Any) -> Reply:
        """Replace your last prompt with ``text``: the last exchange is undone and ``text`` sent in its place."""
        sent = runtime.run_sync(self._rewind_for_resend(session, text))
        return self.ask(sent, session=session, via="dashboard", **ask_options)

    async def edit_last_async(self, text: str, session: str | None = None, **ask_options: Any) -> Reply:
        """``await`` twin of :meth:`edit_last`."""
        sent = await on_package_loop(self._rewind_for_resend(session, text))
        return await self.ask_async(sent, session=session, via="dashboard", **ask_options)

    async def _rewind_for_resend(self, session: str | None, text: str | None) -> str:
        """Undo the last exchange (refused first on a server that cannot); returns the prompt to send next."""
        if text is not None and (not isinstance(text, str) or not text.strip()):
            raise HermesUsageError("the new prompt is empty")
        what = "regenerate" if text is None else "edit"
        conn, ref, key = await self._rewind_target(session, what)
        await check_rewind(conn, what)
        async with self._book.turn_lock(key):
            resend = last_user_text(await conn.history(key)) if text is None else text
            if not await undo_turn(conn, ref, intent="retry" if text is None else "undo", checked=True):
                raise HermesUsageError(f"there is no exchange to {what} in this session")
        return resend
