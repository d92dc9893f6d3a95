"""The one turn runner: a skeleton every ask goes through, with a driver per server.

The skeleton (:func:`run_turn`) owns what both paths share: the session's turn lock, the stop watcher, answering
interactions as they appear (policy, buttons or text prompt, see :meth:`TurnHandle.obtain`), cancelling cleanly,
and the :class:`Reply` with its notes. A driver owns what differs: :class:`DashboardDriver` submits a prompt on
a Dashboard session (JSON-RPC over WebSocket), :class:`ApiDriver` starts an API Server run and folds its SSE
events through the same :class:`~hermes_notebook.turns.TurnFolder`.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from ..errors import HermesError, HermesNotFoundError, HermesUsageError
from ..turns import ChangeRecord, MessageDict, TurnFolder
from .handle import TurnHandle, TurnOptions
from .results import Reply
from .sessions import SessionBook

if TYPE_CHECKING:
    from ..client.api import ApiClient, RunRef
    from ..client.dashboard import DashboardConnection, SessionRef, Turn

__all__ = [
    "ABANDON_TIMEOUT",
    "ApiDriver",
    "DashboardDriver",
    "TurnDriver",
    "TurnRunner",
    "answer_pending",
    "reply_for",
    "run_turn",
]

Respond = Callable[[dict[str, Any], str], Awaitable[None]]

#: Seconds a cancelled turn may take to end on the server before its session is released anyway.
ABANDON_TIMEOUT = 5.0


class TurnDriver(Protocol):
    """One server's way to run a turn; :func:`run_turn` calls these in order."""

    async def open(self, handle: TurnHandle) -> str:
        """Resolve the session (setting ``handle.session_id``); returns the key of its turn lock."""
        ...

    def changes(self, handle: TurnHandle) -> AsyncIterator[Sequence[ChangeRecord]]:
        """Start the turn (arming ``handle``'s interrupt) and yield its change records in batches until it ends."""
        ...

    async def respond(self, request: dict[str, Any], value: str) -> None:
        """Send the answer to a pending interaction."""
        ...

    def message(self) -> MessageDict:
        """The assistant message once :meth:`changes` is exhausted."""
        ...

    def settle(self, handle: TurnHandle) -> None:
        """After the turn: record which session it ended in."""
        ...

    async def ended(self) -> None:
        """Return once the server has ended the turn (at once if none was started); used after a cancel."""
        ...


def answer_pending(
    handle: TurnHandle, changes: Sequence[ChangeRecord], seen: set[str], respond: Respond,
    tasks: set[asyncio.Task[None]],
) -> None:
    """Start answering every interaction that ``changes`` shows pending for the first time (one task each)."""
    for change in changes:
        inter: Any = None
        if change["op"] == "part":
            inter = change["part"].get("interaction")
        elif change["op"] == "patch":
            inter = change["fields"].get("interaction")
        if not inter or inter.get("status") != "pending" or inter.get("request_id") in seen:
            continue
        seen.add(inter["request_id"])
        request_of_this_change: dict[str, Any] = dict(inter)

        async def answer(request: dict[str, Any] = request_of_this_change) -> None:
            value = await handle.obtain(request)
            if value is None:
                return
            try:
                await respond(request, value)
            except HermesError as exc:
                handle.notes.append(f"could not answer the {request.get('kind')} request: {exc}")

        task = asyncio.ensure_future(answer())
        tasks.add(task)
        task.add_done_callback(tasks.discard)


def reply_for(handle: TurnHandle, message: MessageDict) -> Reply:
    """The :class:`Reply`, with notes for what the transcript does not say by itself."""
    notes = list(handle.notes)
    for part in message.get("parts") or []:
        inter: Mapping[str, Any] = part.get("interaction") or {}
        if inter.get("status") == "expired":
            kind = inter.get("kind")
            what = inter.get("command") or inter.get("question") or kind
            notes.append(
                f"nobody answered the {kind} request ({what}); the server denied it after its "
                "timeout. Pass approve=/clarify= (or --approve in %hermes) for unattended runs."
                if kind == "approval" else
                f"nobody answered the {kind} request ({what}) before the server's timeout."
            )
    if message.get("status") in ("interrupted", "cancelled"):
        notes.append("the turn was interrupted")
    options = handle.options
    return Reply(message, session_id=handle.session_id, prompt=options.prompt, via=options.via, notes=notes,
                 filled=options.filled)


async def run_turn(handle: TurnHandle, driver: TurnDriver, book: SessionBook) -> Reply:
    """Drive one turn to its end on the package loop and return its :class:`Reply`."""
    key = await driver.open(handle)
    tasks: set[asyncio.Task[None]] = set()
    seen: set[str] = set()
    stop_task = asyncio.ensure_future(handle.watch_stop())
    async with book.turn_lock(key):
        try:
            async for changes in driver.changes(handle):
                handle.push(changes)
                answer_pending(handle, changes, seen, driver.respond, tasks)
            message = driver.message()
        except asyncio.CancelledError:
            await _abandon(handle, driver)
            raise
        finally:
            stop_task.cancel()
            for task in list(tasks):
                task.cancel()
    driver.settle(handle)
    return reply_for(handle, message)


async def _abandon(handle: TurnHandle, driver: TurnDriver) -> None:
    """The wait was cancelled: interrupt the server's turn and keep the session's lock until it has ended.

    Otherwise the next prompt to the session would be sent while the server still finishes this turn, and
    that turn's end would be taken for the new one's. Bounded by :data:`ABANDON_TIMEOUT`.
    """
    async def interrupt_and_wait() -> None:
        await handle.interrupt_now()
        await driver.ended()

    with contextlib.suppress(Exception, asyncio.TimeoutError):
        await asyncio.wait_for(interrupt_and_wait(), ABANDON_TIMEOUT)


class DashboardDriver:
    """A turn on a Dashboard session: ``prompt.submit``, then the connection's change records one by one."""

    def __init__(self, connect: Callable[[], Awaitable[DashboardConnection]], book: SessionBook,
                 options: TurnOptions) -> None:
        self._connect = connect
        self._book = book
        self._options = options
        self._conn: DashboardConnection | None = None
        self._ref: SessionRef | None = None
        self._turn: Turn | None = None

    async def open(self, handle: TurnHandle) -> str:
        """Connect and resolve the session."""
        from ..client.dashboard.session_info import check_model_name, set_model

        if self._options.model:
            check_model_name(self._options.model)  # before a session is started for it
        self._conn = conn = await self._connect()
        self._ref = ref = await self._book.dashboard_ref(conn, self._options)
        handle.session_id = ref.stored_id
        if self._options.model:  # the session's model, switched before the prompt (it keeps it, like /model)
            switched = await set_model(conn, ref, self._options.model)
            if switched.get("warning"):
                handle.notes.append(f"model {self._options.model}: {switched['warning']}")
        return ref.stored_id

    async def changes(self, handle: TurnHandle) -> AsyncIterator[Sequence[ChangeRecord]]:
        """Submit the prompt and yield each change record; a dropped connection ends the turn with a note."""
        conn, ref = self._conn, self._ref
        assert conn is not None and ref is not None, "open() first"
        self._turn = turn = await conn.submit(ref, self._options.prompt, images=self._options.images or None,
                                              files=self._options.files or None)
        await handle.arm_interrupt(lambda: conn.interrupt(ref))
        try:
            async for change in turn:
                yield [change]
        except HermesError as exc:  # the connection dropped under the turn: keep what we have
            handle.notes.append(f"the connection to the Dashboard dropped: {exc}")

    async def respond(self, request: dict[str, Any], value: str) -> None:
        """``approval.respond`` / ``clarify.respond`` / ... on the session."""
        assert self._conn is not None and self._ref is not None
        await self._conn.respond(self._ref, request["request_id"], value)

    def message(self) -> MessageDict:
        """The turn's assistant message."""
        assert self._turn is not None
        return self._turn.message.to_dict()

    def settle(self, handle: TurnHandle) -> None:
        """Auto-compression may have rotated the stored id during the turn: follow it."""
        assert self._ref is not None
        handle.session_id = self._book.current = self._ref.stored_id

    async def ended(self) -> None:
        """Wait for the submitted turn's end (its ``message.complete``, an error or a drop)."""
        if self._turn is not None:
            with contextlib.suppress(HermesError):  # an error or a drop ends it too
                await self._turn


class ApiDriver:
    """A turn as an API Server run: ``POST /v1/runs``, then its SSE events folded like Dashboard ones."""

    def __init__(self, connect: Callable[[], Awaitable[ApiClient]], book: SessionBook, options: TurnOptions) -> None:
        self._connect = connect
        self._book = book
        self._options = options
        self._api: ApiClient | None = None
        self._session_id = ""
        self._run: RunRef | None = None
        self._handle: TurnHandle | None = None
        self._folder = TurnFolder(uuid.uuid4().hex[:12])
        #: Approvals the server named (newer servers): each is answered by its id, in any order.
        self._named: set[str] = set()
        #: One answer on the wire at a time, so the order check below sees every earlier answer recorded.
        self._answering = asyncio.Lock()

    async def open(self, handle: TurnHandle) -> str:
        """Create the client and pick the session id; a ``model`` this server's runs would ignore is refused."""
        self._api = api = await self._connect()
        if self._options.model and not await api.run_model_choice():
            aliases = {m.id for m in await api.models()}  # 0.19.0 honours only these (model_routes aliases)
            if self._options.model not in aliases:
                raise HermesUsageError(
                    f"this API Server runs every run on its configured model and would ignore model="
                    f"{self._options.model!r} (it takes only {', '.join(sorted(aliases)) or 'no names'}); "
                    "use the Dashboard (hermes.set_model) to switch models"
                )
        self._session_id = await self._book.api_session(self._options)
        handle.session_id = self._session_id
        return self._session_id

    async def changes(self, handle: TurnHandle) -> AsyncIterator[Sequence[ChangeRecord]]:
        """Start the run with the session's stored history and yield the folded records of its events."""
        api, folder, options = self._api, self._folder, self._options
        assert api is not None, "open() first"
        self._handle = handle
        history = await self._history(api)
        self._run = run = await api.start_run(
            options.prompt, session_id=self._session_id, instructions=options.instructions,
            conversation_history=history or None, model=options.model,
        )

        async def stop_run() -> None:
            with contextlib.suppress(HermesNotFoundError):  # it ended already
                await api.stop_run(run.id)

        await handle.arm_interrupt(stop_run)
        yield folder.begin()
        stream = api.run_events(run.id)
        try:
            async for event in stream:
                if event.type == "stream.lost":
                    handle.notes.append("the event stream was lost; the result came from the run's status")
                    continue
                if event.type == "approval.request" and isinstance(event.payload.get("request_id"), str):
                    self._named.add(event.payload["request_id"])
                yield folder.apply(event.to_event())
        finally:
            await stream.aclose()
        if not folder.done:
            yield folder.finish("error", "the run ended without a result")

    async def respond(self, request: dict[str, Any], value: str) -> None:
        """Answer this approval of the run and record the answer in the turn.

        A newer server names its approvals: the answer carries the request id and reaches exactly that one.
        Hermes 0.19.0 names none and answers the run's oldest pending approval whatever was clicked, so there
        only the oldest may be answered; an answer to a later one is refused (HermesUsageError), as on the
        Dashboard, instead of landing on an approval the user did not answer.
        """
        api, run, handle, folder = self._api, self._run, self._handle, self._folder
        assert api is not None and run is not None and handle is not None
        request_id = str(request.get("request_id"))
        if request.get("kind") != "approval":
            raise HermesUsageError(f"an API Server run cannot answer a {request.get('kind')!r} request")
        async with self._answering:
            pending = [i.request_id for i in folder.pending() if i.kind == "approval"]
            if request_id not in pending:
                raise HermesUsageError(f"approval {request_id} is no longer waiting for an answer")
            if request_id in self._named:
                await api.approve_run(run.id, value, request_id=request_id)
            elif pending[0] != request_id:
                raise HermesUsageError(
                    f"answer {pending[0]} first: this API Server answers the run's oldest pending approval"
                )
            else:
                await api.approve_run(run.id, value)
            handle.push(folder.answer(request_id, value))

    def message(self) -> MessageDict:
        """The folded assistant message."""
        return self._folder.message.to_dict()

    def settle(self, handle: TurnHandle) -> None:
        """The run's session is the current one now."""
        self._book.current = self._session_id

    async def ended(self) -> None:
        """Wait until the run is no longer running (its status, polled)."""
        if self._api is not None and self._run is not None:
            with contextlib.suppress(HermesError):
                await self._api.wait_run(self._run.id)

    async def _history(self, api: ApiClient) -> list[dict[str, str]]:
        # Runs do not load history by session id (docs/protocol/api-server.md §3), so continuity is carried over
        # explicitly from the stored transcript (the same state.db the Dashboard writes).
        try:
            rows = await api.session_messages(self._session_id)
        except HermesNotFoundError:
            return []
        return [
            {"role": row.role, "content": row.content}
            for row in rows
            if row.role in ("user", "assistant") and isinstance(row.content, str) and row.content.strip()
        ]


class TurnRunner:
    """Runs a :class:`TurnHandle` with the driver its ``via`` names (what ``TurnHandle.start`` calls)."""

    def __init__(
        self, book: SessionBook, *, dashboard: Callable[[], Awaitable[DashboardConnection]],
        api: Callable[[], Awaitable[ApiClient]], secrets: Sequence[object] = (),
    ) -> None:
        self.book = book
        self._dashboard = dashboard
        self._api = api
        self._secrets = tuple(secrets)  # the connection's key and token: no reply shows them
        #: Replies seen live, per session id (their approvals and usage are not in the stored history).
        self.replies: dict[str, list[Reply]] = {}

    async def run(self, handle: TurnHandle) -> Reply:
        """Drive ``handle``'s turn to its end (package loop)."""
        options = handle.options
        driver: TurnDriver = (
            DashboardDriver(self._dashboard, self.book, options) if options.via == "dashboard"
            else ApiDriver(self._api, self.book, options)
        )
        reply = (await run_turn(handle, driver, self.book)).hide(*self._secrets)
        self.replies.setdefault(reply.session_id or "", []).append(reply)  # export() keeps what history drops
        return reply
