"""Which session a turn or an operation goes to: names given by the user, the current session, stored refs.

Consecutive asks continue one session unless ``new=True`` or ``session=`` says otherwise. ``session="NAME"``
only ever means a session this connection started or continued: its stored id, or a name given here, which
starts a new session on first use (titled NAME on the Dashboard) and then refers to it. It is never looked up
among the server's stored sessions: on a shared Hermes that would join someone else's session and hand its
history to the model. Joining a stored session is asked for with :func:`resume`
(``session=hn.resume("id or title")``, ``%hermes --session ID --resume``).
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from typing import TYPE_CHECKING

from ..errors import HermesRPCError, HermesUsageError

if TYPE_CHECKING:
    from ..client.dashboard import DashboardConnection, SessionRef

__all__ = ["Resume", "SessionBook", "resume"]

log = logging.getLogger(__name__)

# JSON-RPC error code of session.resume for an unknown session (docs/protocol/dashboard.md §5).
NO_SUCH_SESSION = 4007


class Resume(str):
    """A stored session to join, by id (or title, on the Dashboard): what :func:`resume` returns.

    A ``str``, so it goes wherever a session name goes; only the :class:`SessionBook` tells it apart.
    """

    __slots__ = ()

    def __repr__(self) -> str:
        return f"resume({str(self)!r})"


def resume(session: str) -> Resume:
    """``session=hn.resume("id or title")``: join a stored session (one listed by ``hermes.sessions()``).

    A plain ``session="NAME"`` never does: it names a session this connection started or continued, and starts
    one on first use. Works wherever ``session=`` does: ``ask``, ``ask_async``, ``start``, ``chat``,
    ``history``, ``export``, ``compress``.
    """
    if not isinstance(session, str) or not session.strip():
        raise HermesUsageError("resume() needs the id or title of a stored session (see hermes.sessions())")
    return Resume(session)


class SessionBook:
    """A conversation's sessions: the current one, the ones it started or continued (name -> id aliases and
    their ids), and their Dashboard refs. One turn at a time per session is the :class:`~.queue.TurnQueue`'s
    job.

    Used on the package loop only (faces read :meth:`key` and :attr:`current` from the main thread).
    """

    def __init__(self) -> None:
        self._current: str | None = None
        self._own: set[str] = set()  # stored ids of the sessions this book started or continued
        self._aliases: dict[str, str] = {}  # names given here -> the sessions started under them
        self._resumed: dict[str, str] = {}  # resume() ids and titles -> the stored sessions they found
        self._refs: dict[str, SessionRef] = {}
        self._resolve_lock: asyncio.Lock | None = None

    @property
    def current(self) -> str | None:
        """The stored id consecutive asks continue (None before the first)."""
        return self._current

    @current.setter
    def current(self, stored_id: str | None) -> None:
        self._current = stored_id
        if stored_id is not None:  # e.g. a stored id rotated by compression: still this book's session
            self._own.add(stored_id)

    def known(self, name: str) -> str | None:
        """The stored id of this book's session called ``name`` (a name given here, or the id itself), else
        None.

        A :class:`Resume` only finds what an earlier resume of it found: a name given here may have been
        refused as a title because a stored session has it, and resuming means that stored one.
        """
        found = (self._resumed if isinstance(name, Resume) else self._aliases).get(str(name))
        return found or (str(name) if name in self._own else None)

    def key(self, name: str | None) -> str | None:
        """The stored id to read (history, export, compress): the current session for None, this book's
        session called ``name``, or the stored session a :class:`Resume` names.

        A plain name this book does not know raises :class:`HermesUsageError`: it is never looked up on the
        server.
        """
        if name is None:
            return self.current
        stored = self.known(name)
        if stored is not None:
            return stored
        if isinstance(name, Resume):
            return str(name)
        raise HermesUsageError(
            f"no session {name!r} was started or continued by this connection; to open a stored session, "
            f"pass hn.resume({name!r}) (%hermes: --resume)"
        )

    def _resolving(self) -> asyncio.Lock:
        if self._resolve_lock is None:
            self._resolve_lock = asyncio.Lock()
        return self._resolve_lock

    def _remember(self, name: str, stored_id: str) -> None:
        (self._resumed if isinstance(name, Resume) else self._aliases)[str(name)] = stored_id

    async def dashboard_ref(
        self, conn: DashboardConnection, name: str | None, *, new: bool = False, follow: bool = True
    ) -> SessionRef:
        """The Dashboard session a turn goes to: created, resumed, or already live; with ``follow`` (an ask,
        not a chat's prompt) it becomes current."""
        async with self._resolving():
            ref = await self._dashboard_session(conn, name, new=new)
            if follow:
                self.current = ref.stored_id
            return ref

    async def chat_ref(self, conn: DashboardConnection, name: str | None) -> SessionRef:
        """The Dashboard session a chat opens: a new one for None, else found or started as for an ask (not
        made current)."""
        async with self._resolving():
            if name is None:
                ref = await conn.create_session()
                self.remember(ref)
                return ref
            return await self._dashboard_session(conn, name, new=False)

    async def _dashboard_session(
        self, conn: DashboardConnection, name: str | None, *, new: bool
    ) -> SessionRef:
        stored = None if new else self.current if name is None else self.known(name)
        joining = stored is not None or (isinstance(name, Resume) and not new)
        if stored is not None:
            ref = self._refs.get(stored) or await conn.resume(stored)
        elif joining:
            assert name is not None
            ref = await _resume_stored(conn, name)
        else:
            ref = await conn.create_session()
            if name is not None:
                await _title(conn, ref, name)
        if name is not None:
            self._remember(name, ref.stored_id)
        self._refs[ref.stored_id] = ref
        self._own.add(ref.stored_id)
        return ref

    async def known_dashboard_ref(self, conn: DashboardConnection, key: str) -> SessionRef:
        """The live ref of a stored session this book already knows, or resumed now (and kept)."""
        async with self._resolving():
            ref = self._refs.get(key)
            if ref is None:
                ref = self._refs[key] = await conn.resume(key)
            return ref

    def remember(self, ref: SessionRef) -> None:
        """A session this connection made or opened some other way (a chat's, a branch): it is this book's
        now."""
        self._refs[ref.stored_id] = ref
        self._own.add(ref.stored_id)

    def adopt(self, ref: SessionRef) -> None:
        """A session this connection made some other way (a branch): it is this book's now, and current."""
        self.remember(ref)
        self.current = ref.stored_id

    async def api_session(self, name: str | None, *, new: bool = False, follow: bool = True) -> str:
        """The session id an API Server run goes to (a new ``nb_<time>_<hex>`` id when starting); with
        ``follow`` (an ask, not a ``map`` item) it becomes current.

        The API Server has no titles: :func:`resume` takes a stored session id there.
        """
        async with self._resolving():
            stored = None if new else self.current if name is None else self.known(name)
            if stored is None and isinstance(name, Resume) and not new:
                stored = str(name)
            session_id = stored or f"nb_{time.strftime('%Y%m%d_%H%M%S')}_{uuid.uuid4().hex[:6]}"
            if name is not None:
                self._remember(name, session_id)
            if follow:
                self.current = session_id
            else:
                self._own.add(session_id)
            return session_id


async def _resume_stored(conn: DashboardConnection, name: str) -> SessionRef:
    """``session.resume`` by stored id or title, for :func:`resume`; an unknown one says so in a sentence."""
    try:
        return await conn.resume(str(name))
    except HermesRPCError as exc:
        if exc.code != NO_SUCH_SESSION:
            raise
        raise HermesRPCError(
            f"there is no stored session {str(name)!r} to resume (hermes.sessions() lists them)",
            code=exc.code,
            method=exc.method,
        ) from None


async def _title(conn: DashboardConnection, ref: SessionRef, name: str) -> None:
    """Title a new session with its name; titles are unique, so one already taken leaves it untitled."""
    try:
        await conn.set_title(ref, name)
    except HermesRPCError as exc:  # e.g. 4022 "Title ... is already in use by session <someone else's id>"
        log.info("the new session keeps no title: %r is taken or refused (code %s)", name, exc.code)
