"""Which session an ask continues: names given by the user, the current session, one turn at a time each.

Consecutive asks continue one session unless ``new=True`` or ``session=`` says otherwise. A name that is not a
stored session id becomes the title of a new session and then refers to it (an alias).
"""

from __future__ import annotations

import asyncio
import time
import uuid
from typing import TYPE_CHECKING

from ..errors import HermesRPCError, HermesUsageError

if TYPE_CHECKING:
    from ..client.dashboard import DashboardConnection, SessionRef
    from .handle import TurnOptions

__all__ = ["SessionBook"]

# JSON-RPC error code of session.resume for an unknown session (docs/protocol/dashboard.md §5).
NO_SUCH_SESSION = 4007


class SessionBook:
    """The facade's sessions: the current one, name -> id aliases, Dashboard refs, per-session turn locks.

    Used on the package loop only.
    """

    def __init__(self) -> None:
        self.current: str | None = None
        self._aliases: dict[str, str] = {}
        self._refs: dict[str, SessionRef] = {}
        self._turn_locks: dict[str, asyncio.Lock] = {}
        self._resolve_lock: asyncio.Lock | None = None

    def key(self, name: str | None) -> str | None:
        """The stored id ``name`` refers to (itself when it is no alias); the current session for None."""
        return self._aliases.get(name, name) if name is not None else self.current

    def turn_lock(self, key: str) -> asyncio.Lock:
        """One turn at a time per session.

        A second prompt to a busy Dashboard session would interrupt the running turn (busy_input_mode
        "interrupt"), so later asks wait for earlier ones instead.
        """
        lock = self._turn_locks.get(key)
        if lock is None:
            lock = self._turn_locks[key] = asyncio.Lock()
        return lock

    def _resolving(self) -> asyncio.Lock:
        if self._resolve_lock is None:
            self._resolve_lock = asyncio.Lock()
        return self._resolve_lock

    async def dashboard_ref(self, conn: DashboardConnection, options: TurnOptions) -> SessionRef:
        """The Dashboard session this ask goes to: created, resumed, or already live; it becomes current."""
        async with self._resolving():
            name = options.session
            params = {"model": options.model} if options.model else {}
            if options.new or (name is None and self.current is None):
                ref = await conn.create_session(**params)
                if name is not None:
                    await conn.set_title(ref, name)
                    self._aliases[name] = ref.stored_id
            else:
                if options.model:
                    raise HermesUsageError(
                        "model= applies when a Dashboard session starts: add new=True (--new), or use via='api'"
                    )
                key = self.key(name)
                assert key is not None
                known = self._refs.get(key)
                if known is not None:
                    ref = known
                else:
                    try:
                        ref = await conn.resume(key)
                    except HermesRPCError as exc:
                        if name is None or exc.code != NO_SUCH_SESSION:
                            raise
                        ref = await conn.create_session()
                        await conn.set_title(ref, name)
                        self._aliases[name] = ref.stored_id
            self._refs[ref.stored_id] = ref
            self.current = ref.stored_id
            return ref

    async def known_dashboard_ref(self, conn: DashboardConnection, key: str) -> SessionRef:
        """The live ref of a stored session this book already knows, or resumed now (and kept)."""
        async with self._resolving():
            ref = self._refs.get(key)
            if ref is None:
                ref = self._refs[key] = await conn.resume(key)
            return ref

    async def api_session(self, options: TurnOptions) -> str:
        """The session id an API Server run goes to (a new ``nb_<time>_<hex>`` id when starting); it becomes current."""
        async with self._resolving():
            name = options.session
            if options.new or (name is None and self.current is None):
                session_id = f"nb_{time.strftime('%Y%m%d_%H%M%S')}_{uuid.uuid4().hex[:6]}"
                if name is not None:
                    self._aliases[name] = session_id
            elif name is not None:
                session_id = self._aliases.get(name, name)
            else:
                assert self.current is not None
                session_id = self.current
            self.current = session_id
            return session_id
