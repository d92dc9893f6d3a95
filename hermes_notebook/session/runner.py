"""The one turn runner: a skeleton every turn goes through, whichever face asked, with a driver per server.

The skeleton (:func:`run_turn`) owns what both paths share: the session's place in the turn queue, the stop
watcher, answering interactions as they appear (through the face's :class:`~.turns.TurnSink`), cancelling
cleanly. A driver owns what differs: :class:`DashboardDriver` submits a prompt on a Dashboard session
(JSON-RPC over WebSocket) and is the one loop over a client ``Turn`` in the package; :class:`ApiDriver` starts
an API Server run and folds its SSE events through the same :class:`~hermes_notebook.turns.TurnFolder`. The
runner knows which API Server run each session is running now, so a steer can reach it (``POST
/v1/runs/{id}/steer``).
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from ..client.dashboard.session_info import check_model_name, set_model
from ..client.dashboard.steering import MAX_STEER_CHARS, SteerOutcome
from ..errors import HermesError, HermesNotFoundError, HermesUsageError
from ..turns import ChangeRecord, MessageDict, TurnFolder
from ..turns.steering import steer_marker
from .book import SessionBook
from .control import TurnControl
from .queue import TurnQueue
from .turns import TurnOutcome, TurnRequest, TurnSink

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
    "run_turn",
]

Respond = Callable[[dict[str, Any], str], Awaitable[None]]

#: Seconds a cancelled turn may take to end on the server before its session is released anyway.
ABANDON_TIMEOUT = 5.0


class TurnDriver(Protocol):
    """One server's way to run a turn; :func:`run_turn` calls these in order."""

    async def open(self) -> str:
        """Resolve the session (started now if new); returns its key in the turn queue (its stored id)."""
        ...

    def changes(self, sink: TurnSink, control: TurnControl) -> AsyncIterator[Sequence[ChangeRecord]]:
        """Start the turn (arming ``control``'s interrupt) and yield its change records in batches until it
        ends."""
        ...

    async def respond(self, request: dict[str, Any], value: str) -> None:
        """Send the answer to a pending interaction."""
        ...

    def message(self) -> MessageDict:
        """The assistant message once :meth:`changes` is exhausted."""
        ...

    def settle(self) -> str | None:
        """After the turn: the session it ended in (made current if the request follows it)."""
        ...

    async def ended(self) -> None:
        """Return once the server has ended the turn (at once if none was started); used after a cancel."""
        ...


def answer_pending(
    sink: TurnSink,
    changes: Sequence[ChangeRecord],
    seen: set[str],
    respond: Respond,
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
            value = await sink.obtain(request)
            if value is None:
                return
            try:
                await respond(request, value)
            except HermesError as exc:
                sink.note(f"could not answer the {request.get('kind')} request: {exc}")

        task = asyncio.ensure_future(answer())
        tasks.add(task)
        task.add_done_callback(tasks.discard)


async def run_turn(driver: TurnDriver, sink: TurnSink, control: TurnControl, queue: TurnQueue) -> TurnOutcome:
    """Drive one turn to its end on the package loop, after the session's earlier turns."""
    key = await driver.open()
    tasks: set[asyncio.Task[None]] = set()
    seen: set[str] = set()
    stop_task = asyncio.ensure_future(control.watch())
    try:
        async with queue.turn(key):
            sink.started(key)
            try:
                async for changes in driver.changes(sink, control):
                    sink.push(changes)
                    answer_pending(sink, changes, seen, driver.respond, tasks)
                message = driver.message()
            except asyncio.CancelledError:
                await _abandon(control, driver)
                raise
            finally:
                for task in list(tasks):
                    task.cancel()
    finally:
        stop_task.cancel()
    return TurnOutcome(message, driver.settle())


async def _abandon(control: TurnControl, driver: TurnDriver) -> None:
    """The wait was cancelled: interrupt the server's turn and keep the session until it has ended.

    Otherwise the next prompt to the session would be sent while the server still finishes this turn, and
    that turn's end would be taken for the new one's. Bounded by :data:`ABANDON_TIMEOUT`.
    """

    async def interrupt_and_wait() -> None:
        await control.interrupt_now()
        await driver.ended()

    with contextlib.suppress(Exception, asyncio.TimeoutError):
        await asyncio.wait_for(interrupt_and_wait(), ABANDON_TIMEOUT)


class DashboardDriver:
    """A turn on a Dashboard session: ``prompt.submit``, then the connection's change records one by one."""

    def __init__(
        self,
        connect: Callable[[], Awaitable[DashboardConnection]],
        book: SessionBook,
        request: TurnRequest,
        running: list[Turn] | None = None,
    ) -> None:
        self._connect = connect
        self._book = book
        self._request = request
        self._running = [] if running is None else running  # the runner's: the client turns it runs now
        self._conn: DashboardConnection | None = None
        self._ref: SessionRef | None = None
        self._turn: Turn | None = None

    async def open(self) -> str:
        """Connect and resolve the session."""
        request = self._request
        if request.model:
            check_model_name(request.model)  # before a session is started for it
        self._conn = conn = await self._connect()
        self._ref = ref = await self._book.dashboard_ref(
            conn, request.session, new=request.new, follow=request.follow
        )
        return ref.stored_id

    async def changes(self, sink: TurnSink, control: TurnControl) -> AsyncIterator[Sequence[ChangeRecord]]:
        """Switch the session's model if asked, submit the prompt (the client waits until Hermes let go of the
        session after its previous turn: client/dashboard/settling.py) and yield each change record; a dropped
        connection ends the turn (``sink.failed``)."""
        conn, ref, request = self._conn, self._ref, self._request
        assert conn is not None and ref is not None, "open() first"
        if request.model:  # the session's model, switched before the prompt (it keeps it, like /model)
            switched = await set_model(conn, ref, request.model)
            if switched.get("warning"):
                sink.note(f"model {request.model}: {switched['warning']}")
        extra: dict[str, Any] = (
            {"files": request.files} if request.files else {}
        )  # only what a prompt carries
        self._turn = turn = await conn.submit(
            ref, request.prompt, images=request.images or None, turn_id=request.turn_id, **extra
        )
        self._running.append(turn)
        try:
            await control.arm(lambda: conn.interrupt(ref))
            async for change in turn:
                if change["op"] == "message" and change["message"]["role"] == "user":
                    continue  # the face showed the prompt already
                yield [change]
        except HermesError as exc:  # the connection dropped under the turn: keep what we have
            sink.failed(exc)
        finally:
            self._running.remove(turn)

    async def respond(self, request: dict[str, Any], value: str) -> None:
        """``approval.respond`` / ``clarify.respond`` / ... on the session."""
        assert self._conn is not None and self._ref is not None
        await self._conn.respond(self._ref, request["request_id"], value)

    def message(self) -> MessageDict:
        """The turn's assistant message."""
        assert self._turn is not None
        return self._turn.message.to_dict()

    def settle(self) -> str | None:
        """Auto-compression may have rotated the stored id during the turn: follow it."""
        assert self._ref is not None
        if self._request.follow:
            self._book.current = self._ref.stored_id
        return self._ref.stored_id

    async def ended(self) -> None:
        """Wait for the submitted turn's end (its ``message.complete``, an error or a drop)."""
        if self._turn is not None:
            with contextlib.suppress(HermesError):  # an error or a drop ends it too
                await self._turn


class ApiDriver:
    """A turn as an API Server run: ``POST /v1/runs``, then its SSE events folded like Dashboard ones."""

    def __init__(
        self,
        connect: Callable[[], Awaitable[ApiClient]],
        book: SessionBook,
        request: TurnRequest,
        running: dict[str, ApiDriver] | None = None,
    ) -> None:
        self._connect = connect
        self._running = {} if running is None else running  # the runner's: session id -> its running run
        self._book = book
        self._request = request
        self._api: ApiClient | None = None
        self._session_id = ""
        self._run: RunRef | None = None
        self._sink: TurnSink | None = None
        self._folder = TurnFolder(uuid.uuid4().hex[:12])
        #: Approvals the server named (newer servers): each is answered by its id, in any order.
        self._named: set[str] = set()
        #: One answer on the wire at a time, so the order check below sees every earlier answer recorded.
        self._answering = asyncio.Lock()

    async def open(self) -> str:
        """Create the client and pick the session id; a ``model`` this server's runs would ignore is
        refused."""
        request = self._request
        self._api = api = await self._connect()
        if request.model and not await api.run_model_choice():
            aliases = {m.id for m in await api.models()}  # 0.19.0 honours only these (model_routes aliases)
            if request.model not in aliases:
                raise HermesUsageError(
                    f"this API Server runs every run on its configured model and would ignore model="
                    f"{request.model!r} (it takes only {', '.join(sorted(aliases)) or 'no names'}); "
                    "use the Dashboard (hermes.set_model) to switch models"
                )
        self._session_id = await self._book.api_session(
            request.session, new=request.new, follow=request.follow
        )
        return self._session_id

    async def changes(self, sink: TurnSink, control: TurnControl) -> AsyncIterator[Sequence[ChangeRecord]]:
        """Start the run with the session's stored history and yield the folded records of its events."""
        api, folder, request = self._api, self._folder, self._request
        assert api is not None, "open() first"
        self._sink = sink
        history = await self._history(api)
        self._run = run = await api.start_run(
            request.prompt,
            session_id=self._session_id,
            instructions=request.instructions,
            conversation_history=history or None,
            model=request.model,
        )

        async def stop_run() -> None:
            with contextlib.suppress(HermesNotFoundError):  # it ended already
                await api.stop_run(run.id)

        await control.arm(stop_run)
        yield folder.begin()
        stream = api.run_events(run.id)
        self._running[self._session_id] = self
        try:
            async for event in stream:
                if event.type == "stream.lost":
                    sink.note("the event stream was lost; the result came from the run's status")
                    continue
                if event.type == "approval.request" and isinstance(event.payload.get("request_id"), str):
                    self._named.add(event.payload["request_id"])
                yield folder.apply(event.to_event())
        finally:
            if self._running.get(self._session_id) is self:
                del self._running[self._session_id]
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
        api, run, sink, folder = self._api, self._run, self._sink, self._folder
        assert api is not None and run is not None and sink is not None
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
            sink.push(folder.answer(request_id, value))

    async def steer(self, text: str) -> SteerOutcome:
        """Send ``text`` into this running run (``POST /v1/runs/{id}/steer``; 0.19.0: not offered) and mark it
        in the turn when the server took it."""
        api, run, sink = self._api, self._run, self._sink
        assert api is not None and run is not None and sink is not None
        if isinstance(text, str) and len(text) > MAX_STEER_CHARS:
            raise HermesUsageError(
                f"a steer is at most {MAX_STEER_CHARS:,} characters (this one has {len(text):,})"
            )
        if not await api.steer_run(run.id, text):
            return SteerOutcome("rejected", text)
        sink.push(self._folder.add_marker(steer_marker(text)))
        return SteerOutcome("queued", text)

    def message(self) -> MessageDict:
        """The folded assistant message."""
        return self._folder.message.to_dict()

    def settle(self) -> str | None:
        """The run's session is the current one now (unless the request does not follow it)."""
        if self._request.follow:
            self._book.current = self._session_id
        return self._session_id

    async def ended(self) -> None:
        """Wait until the run is no longer running (its status, polled)."""
        if self._api is not None and self._run is not None:
            with contextlib.suppress(HermesError):
                await self._api.wait_run(self._run.id)

    async def _history(self, api: ApiClient) -> list[dict[str, str]]:
        # Runs do not load history by session id (docs/protocol/api-server.md §3), so continuity is carried
        # over explicitly from the stored transcript (the same state.db the Dashboard writes).
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
    """Runs a :class:`~.turns.TurnRequest` with the driver its ``via`` names, in the conversation's turn
    queue."""

    def __init__(
        self,
        book: SessionBook,
        queue: TurnQueue,
        *,
        dashboard: Callable[[], Awaitable[DashboardConnection]],
        api: Callable[[], Awaitable[ApiClient]],
    ) -> None:
        self.book = book
        self.queue = queue
        self._dashboard = dashboard
        self._api = api
        self._api_runs: dict[str, ApiDriver] = {}  # stored session id -> the API Server run it runs now
        self._dashboard_turns: list[Turn] = []  # the Dashboard turns it runs now, oldest first

    def api_run(self, session_id: str) -> ApiDriver | None:
        """The API Server run the session ``session_id`` is running now (to steer it), None if none."""
        return self._api_runs.get(session_id)

    def running_turns(self) -> list[Turn]:
        """The Dashboard turns this runner runs now, oldest first (a kernel tool call finds its turn here)."""
        return [turn for turn in self._dashboard_turns if not turn.done]

    async def run(self, request: TurnRequest, sink: TurnSink, control: TurnControl) -> TurnOutcome:
        """Drive the turn to its end (package loop); its records and questions go to ``sink``."""
        driver: TurnDriver = (
            DashboardDriver(self._dashboard, self.book, request, self._dashboard_turns)
            if request.via == "dashboard"
            else ApiDriver(self._api, self.book, request, self._api_runs)
        )
        return await run_turn(driver, sink, control, self.queue)
