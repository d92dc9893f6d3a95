"""Sharing the kernel with Hermes: who may use the tools, which turn asked, the Run/Deny card, and cleanup.

One :class:`KernelTools` per process (:data:`KERNEL`) owns the tool server (:mod:`.server`) and its
registration (:mod:`.registration`). ``Hermes.share_kernel()`` adds a connection to it with a policy, its
permission modes (reads off/on, edits propose/off, runs ask/allow for this session/never:
:class:`~.grants.Grants`, which also holds the sessions allowed reads from a card; every new policy replaces
them whole). A call is answered only for the running tool part of a sharing connection's turn
that asked for exactly that call, once (:mod:`.binding`): a Hermes session started elsewhere (Hermes offers
the tools to every session of the profile), or another kernel, gets a refusal even with the token, and a
competing or mismatched call is shown in the turn as a notice. ``run_code`` refuses code holding a key-shaped
literal before anyone is asked; otherwise it is approved, queued and supervised by :mod:`.runs` (a Run card
unless runs are allowed for the session; then a card with Stop while it waits for a running cell and runs, on
the kernel's main
thread: :mod:`.execute`). Reads run no user code and never wait for a cell (:mod:`.reading`, :mod:`.outputs`).
Everything returned is scrubbed of the connection's secrets and the tool token (images, the kernel's own PNGs,
go as they are); a failure is a fixed message, never a traceback in whatever cell is running.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import logging
import secrets
import sys
import threading
import time
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .. import runtime
from ..errors import HermesError, HermesRPCError, HermesUsageError
from ..scrub import holds_key, scrub
from ..shell import host
from ..turns.changes import SentImageDict
from . import cells, reading, registration, runs
from .binding import Claims, arguments_fit, part_arguments, tool_names
from .execute import JOBS, run_code
from .grants import Grants, Modes
from .images import SentImage, ToolAnswer
from .outputs import OUTPUTS
from .server import READ_TOOLS, TOOLS, ToolServer
from .shared import CallRecord, Connect, KernelShare

if TYPE_CHECKING:
    from ..client.dashboard import DashboardConnection, Turn

__all__ = ["KERNEL", "CallRecord", "KernelShare", "KernelTools"]  # the first two live in .shared

log = logging.getLogger(__name__)

#: Seconds a call waits for its tool part to reach this kernel (the event and the call travel separately).
ROUTE_WAIT = 5.0
#: Characters of code a ``run_code`` call may carry.
MAX_CODE_CHARS = 20_000
#: Seconds after an answered call within which its part's ``tool.complete`` arguments are checked (0.19.0).
CHECK_WAIT = 30.0
#: Answered calls remembered (:meth:`KernelTools.recent_calls`: how long each took, and whether a cell ran).
MAX_RECORDS = 100

REFUSED = (
    "Refused: no turn started from this notebook is calling this tool with these arguments. The notebook's "
    "kernel tools answer only the notebook's own Hermes turns, once per call."
)
FAILED = "The notebook's kernel could not answer this call."


@dataclass
class _Found:
    share: KernelShare
    conn: DashboardConnection
    turn: Turn
    part_id: str
    #: The part knew the call's arguments (a newer tool.start); else only its preview matched.
    exact: bool


@dataclass
class _Registration:
    connect: Connect
    #: The server URL Hermes was given (a restarted server has another port and token: registered again).
    server_url: str


class KernelTools:
    """The process's tool server and the connections that share the kernel (see the module docstring)."""

    def __init__(self) -> None:
        self.name = f"{registration.NAME_PREFIX}{secrets.token_hex(4)}"
        self.server: ToolServer | None = None
        self._shares: dict[int, KernelShare] = {}
        self._registered: dict[str, _Registration] = {}  # Dashboard URL -> how to reach it, what it was given
        self._named = (
            False  # the name is settled at the first share (a registration slot, or this random one)
        )
        self._claims = Claims()
        self._records: deque[CallRecord] = deque(maxlen=MAX_RECORDS)
        self._watchers: list[tuple[object, Callable[[dict[str, Any] | None], None]]] = []
        self._checks: set[asyncio.Task[None]] = (
            set()
        )  # 0.19.0 completion checks still waiting (kept alive here)
        self._asked = 0
        self._namespace: dict[str, Any] = {}
        self._shell: Any = None
        self._lock = threading.Lock()
        self._exit_hook = False

    # --- sharing (a cell) -----------------------------------------------------------------------------

    def share(
        self,
        key: object,
        connect: Connect,
        *,
        dashboard_url: str,
        secrets: Sequence[object] = (),
        read: bool | str = False,
        edit: str = "propose",
        run: str = "ask",
        run_limit: float = 120.0,
    ) -> KernelShare:
        """Serve the tools for ``key``'s turns and make them known to its Dashboard (blocking; a cell calls
        it).

        A new policy replaces the previous one of ``key`` whole: sessions allowed to read from a card lose it,
        and runs allowed for the session go back to what this policy says."""
        modes = Modes.of(read, edit, run, run_limit)
        self._bind_namespace()
        JOBS.attach_loop()
        OUTPUTS.follow(self._shell)
        if self.server is None or not self.server.running:
            self.server = ToolServer(self.handle, offered=lambda: (*TOOLS, *cells.offered())).start()
        server = self.server
        cells.follow_front_end(server)  # the cell tools come and go with the notebook's front end
        token = server.token.reveal()
        try:
            registered = runtime.run_sync(self._register(connect, dashboard_url, token), timeout=120)
            connection: object = runtime.run_sync(_awaited(connect()), timeout=30)
        except HermesError as exc:
            message = scrub(str(exc), (token, *secrets))
            raise HermesUsageError(
                f"could not register the kernel tools with the Dashboard: {message}"
            ) from None
        self._named = True
        share = KernelShare(
            self.name,
            server.url,
            Grants(modes),
            dashboard_url,
            registered,
            connect=connect,
            connection=connection,
            scrub_secrets=(*secrets, server.token),
        )
        if not registered:
            share.token_path = registration.token_file(self.name, token)
            share.snippet = registration.config_snippet(self.name, server.url)
        del token
        with self._lock:
            previous = self._shares.get(id(key))
            self._shares[id(key)] = share
        if previous is not None:
            previous.grants.revoke()
            if previous.token_path is not None and previous.token_path != share.token_path:
                registration.remove_token_file(previous.token_path)
        share.grants.on_change(lambda: self._tell(key, connection))
        self._tell(key, connection)
        if not self._exit_hook:
            atexit.register(self.close)
            self._exit_hook = True
        return share

    def unshare(self, key: object, dashboard_url: str) -> None:
        """Stop answering for ``key``; unregister from its Dashboard unless another connection there shares
        too."""
        with self._lock:
            share = self._shares.pop(id(key), None)
            still_there = any(s.dashboard_url == dashboard_url for s in self._shares.values())
            others = bool(self._shares)
            registered = None if still_there else self._registered.pop(dashboard_url, None)
        if share is None:
            return
        share.grants.revoke()
        self._tell(key, share.connection)
        if share.token_path is not None:
            registration.remove_token_file(share.token_path)
        if registered is not None:
            with contextlib.suppress(Exception):
                runtime.run_sync(self._unregister(registered.connect), timeout=15)
        if not others and self.server is not None:
            self.server.stop()
            self.server = None

    def close(self) -> None:
        """Unregister everywhere and stop the server (atexit: the kernel shuts down or restarts)."""
        with self._lock:
            shares, self._shares = list(self._shares.values()), {}
            registered, self._registered = dict(self._registered), {}
        for share in shares:
            share.grants.revoke()
            if share.token_path is not None:
                registration.remove_token_file(share.token_path)
        for entry in registered.values():
            with contextlib.suppress(Exception):
                runtime.run_sync(self._unregister(entry.connect), timeout=8)
        if self.server is not None:
            self.server.stop(timeout=2)
            self.server = None

    def shares(self) -> list[KernelShare]:
        """The current shares (one per sharing connection)."""
        with self._lock:
            return list(self._shares.values())

    def share_of(self, key: object) -> KernelShare | None:
        """``key``'s share (a facade's), None when it does not share the kernel."""
        with self._lock:
            return self._shares.get(id(key))

    def _share_for(self, who: object) -> KernelShare | None:
        """The share of ``who``: a sharing facade (the share's key) or its Dashboard connection."""
        with self._lock:
            return self._shares.get(id(who)) or next(
                (s for s in self._shares.values() if s.connection is who), None
            )

    def summary(self, key: object) -> str | None:
        """``key``'s share in one line, for a status (None: not shared)."""
        share = self.share_of(key)
        return None if share is None else str(share).split("\n", 1)[0]

    def modes_of(self, connection: object) -> dict[str, Any] | None:
        """What a face shows for a facade or a connection: its share's modes (:meth:`.grants.Grants.state`)
        plus the server's name and whether the cell tools are offered; None when it does not share the
        kernel."""
        share = self._share_for(connection)
        if share is None:
            return None
        return {**share.grants.state(), "server": share.name, "cells": cells.offered() != ()}

    def revoke(self, connection: object) -> bool:
        """Withdraw what was allowed for this session on ``connection``'s share (the chat header's Revoke)."""
        share = self._share_for(connection)
        if share is None:
            return False
        share.grants.revoke()
        return True

    def watch(
        self, connection: object, callback: Callable[[dict[str, Any] | None], None]
    ) -> Callable[[], None]:
        """Call ``callback(modes_of(connection))`` now and whenever it changes (a share, a revoke, the end);
        returns an unsubscribe. The chat header follows its connection's modes this way."""
        entry = (connection, callback)
        with self._lock:
            self._watchers.append(entry)
        callback(self.modes_of(connection))

        def unsubscribe() -> None:
            with self._lock, contextlib.suppress(ValueError):
                self._watchers.remove(entry)

        return unsubscribe

    def _tell(self, key: object, connection: object) -> None:
        with self._lock:
            callbacks = [cb for who, cb in self._watchers if who is key or who is connection]
        if callbacks:
            state = self.modes_of(key)
            for callback in callbacks:
                try:
                    callback(state)
                except Exception:  # a face's failure must not break a share
                    log.exception("kernel modes watcher failed")

    def recent_calls(self) -> list[CallRecord]:
        """The last answered calls, oldest first (the busy-kernel test and benchmark read how long each
        took)."""
        with self._lock:
            return list(self._records)

    def _bind_namespace(self) -> None:
        shell = host.ipython()
        if shell is not None:
            self._shell, self._namespace = shell, shell.user_ns
        else:  # plain Python: the script's globals
            self._shell, self._namespace = None, vars(sys.modules["__main__"])

    async def _register(self, connect: Connect, dashboard_url: str, token: str) -> bool:
        conn = await connect()
        if not await registration.supports_registration(conn):
            return False
        assert self.server is not None
        current = self._registered.get(dashboard_url)
        if current is not None and current.server_url == self.server.url:
            return True
        if current is not None:  # the server restarted: Hermes must not keep the old port and token
            await registration.unregister(conn, self.name)
        await registration.remove_stale(conn, keep={self.name}, dashboard_url=dashboard_url)
        for attempt in range(3):
            if (
                not self._named
            ):  # a dead kernel's name is taken over: its .env line is reused, not joined by another
                self.name = await registration.free_name(conn)
            try:
                await registration.register(conn, self.name, self.server.url, token)
                break
            except HermesRPCError as exc:  # another kernel took that name a moment ago: the next free one
                if self._named or exc.code != registration.EXISTS or attempt == 2:
                    raise
        self._registered[dashboard_url] = _Registration(connect, self.server.url)
        return True

    async def _unregister(self, connect: Connect) -> None:
        await registration.unregister(await connect(), self.name)

    # --- a tool call (the server's thread, then the package loop) ----------------------------------------

    async def handle(self, tool: str, arguments: dict[str, Any]) -> ToolAnswer:
        """The tool server's handler: answer on the package loop, where the connections live."""
        return await asyncio.wrap_future(runtime.submit(self.call(tool, arguments)))

    async def call(self, tool: str, arguments: dict[str, Any]) -> ToolAnswer:
        """Bind a call to the tool part that asked for it, apply the policy, and return the scrubbed
        result."""
        started = time.perf_counter()
        running = OUTPUTS.running()
        try:
            found = await self._find(tool, arguments)
            if found is None:
                return ToolAnswer(REFUSED)
            share, session_id = found.share, found.turn.ref.stored_id
            if tool in cells.CELL_TOOLS:
                caller = cells.Caller(
                    share,
                    found.turn,
                    found.part_id,
                    session_id,
                    runs.ANSWER_TIMEOUT,
                    share.grants.modes.run_limit,
                    self._namespace,
                    self._shell,
                )
                answer = ToolAnswer.of(await cells.call(tool, arguments, caller))
            elif tool in READ_TOOLS:
                if not share.may_read(session_id):
                    answer = ToolAnswer(
                        "Reading the notebook is off for this session. The user can turn it on "
                        "with hermes.share_kernel(read=True) or %hermes --kernel read."
                    )
                else:
                    # Inline on the package loop: a read is bounded and runs no user code, and a thread hop
                    # fewer is what keeps it fast beside a busy cell (each hop waits for the GIL).
                    answer = self._read(tool, arguments)
            else:
                answer = await self._run(found, str(arguments.get("code") or ""))
            if not found.exact:
                check = asyncio.ensure_future(self._check_completion(found, tool, arguments))
                self._checks.add(check)
                check.add_done_callback(self._checks.discard)
            if answer.images:
                found.turn.link_sent_images(found.part_id, [_image_dict(image) for image in answer.images])
            with self._lock:
                self._records.append(
                    CallRecord(
                        tool,
                        time.perf_counter() - started,
                        None if running is None else running.count,
                        len(answer.images),
                    )
                )
            return ToolAnswer(scrub(answer.text, share.scrub_secrets), answer.images)
        except Exception:  # never a traceback in the cell that happens to be running
            log.debug("kernel tool %s failed", tool, exc_info=True)
            return ToolAnswer(FAILED)

    async def _find(self, tool: str, arguments: dict[str, Any]) -> _Found | None:
        """The running part that asked for exactly this call, claimed for it (waits :data:`ROUTE_WAIT` for its
        ``tool.start``, which travels apart from the call). A call that finds only a part that answered one
        already, or parts asking for other arguments, is refused with a notice in those turns."""
        names = tool_names(self.name, tool)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + ROUTE_WAIT
        while True:
            running: list[str] = []
            competing: dict[str, Turn] = {}
            mismatched: dict[str, Turn] = {}
            for share in self.shares():
                if share.connect is None:
                    continue
                conn = await share.connect()
                for turn in conn.running_turns():
                    running.append(turn.id)
                    for part in turn.message.parts:
                        if part.kind != "tool" or part.status != "running" or part.name not in names:
                            continue
                        if not arguments_fit(part, arguments):
                            mismatched[turn.id] = turn
                        elif self._claims.claim(turn.id, part.id):
                            return _Found(share, conn, turn, part.id, part_arguments(part) is not None)
                        else:
                            competing[turn.id] = turn
            self._claims.forget_ended(running)
            if loop.time() >= deadline:
                for turn in competing.values():
                    turn.note(
                        f"A second call of the kernel tool {tool} for a step that was answered already was "
                        "refused (each step is answered once): another Hermes session may be using this "
                        "notebook's tools."
                    )
                for turn in mismatched.values():
                    if turn.id not in competing:
                        turn.note(
                            f"A call of the kernel tool {tool} whose arguments no step of this turn asked "
                            "for was refused: another Hermes session may be using this notebook's tools."
                        )
                return None
            await asyncio.sleep(0.05)

    async def _check_completion(self, found: _Found, tool: str, arguments: dict[str, Any]) -> None:
        """0.19.0 binds by preview: once the part completes, its arguments must be the ones answered."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + CHECK_WAIT
        while loop.time() < deadline and not found.turn.done:
            part = next((p for p in found.turn.message.parts if p.id == found.part_id), None)
            known = None if part is None else part_arguments(part)
            if known is not None:
                if known != arguments:
                    found.turn.note(
                        f"The kernel answered a call of {tool} for a step that, as Hermes reports it "
                        "now, asked for other arguments: another Hermes session may have used this "
                        "notebook's tools."
                    )
                return
            await asyncio.sleep(0.2)

    def _read(self, tool: str, arguments: dict[str, Any]) -> ToolAnswer:
        namespace, hidden = self._namespace, getattr(self._shell, "user_ns_hidden", None)
        try:
            if tool == "list_variables":
                return ToolAnswer(reading.list_variables(namespace, hidden, OUTPUTS.running()))
            if tool == "describe":
                return ToolAnswer(reading.describe(namespace, str(arguments.get("name") or ""), hidden))
            if tool == "read_cells":
                return ToolAnswer(reading.read_cells(namespace, str(arguments.get("cells") or "")))
            try:
                number = int(arguments.get("cell") or 0)
            except (TypeError, ValueError):
                return ToolAnswer("read_output takes a cell number.")
            return reading.read_output(namespace, number, self._shell, OUTPUTS)
        except Exception:  # a read never raises into the running cell's stderr (reading.py)
            log.debug("kernel read %s failed", tool, exc_info=True)
            return ToolAnswer(reading.READ_FAILED)

    async def _run(self, found: _Found, code: str) -> ToolAnswer:
        share, session_id = found.share, found.turn.ref.stored_id
        if share.run == "never":
            return ToolAnswer("Refused: running code in this notebook is off (share_kernel(run='never')).")
        if not code.strip():
            return ToolAnswer("run_code needs the code to run.")
        if len(code) > MAX_CODE_CHARS:
            return ToolAnswer(
                f"Refused: the code is {len(code):,} characters; at most {MAX_CODE_CHARS:,} can be "
                "shown and run."
            )
        if holds_key(code, share.scrub_secrets):  # a card never hides what runs, so such code is never shown
            found.turn.note(
                "Hermes asked to run code holding a key, token or password literal; it was refused "
                "without asking (nothing ran)."
            )
            return ToolAnswer(
                "Refused before asking the user: the code holds a key, token or password literal (or "
                "this connection's own key). Nothing ran. Read secrets from the environment "
                "(os.environ) or an existing variable instead of writing them into code."
            )
        refusal = await runs.approve(
            found.turn, found.part_id, share.grants, session_id, code, "It runs in this notebook's kernel"
        )
        if refusal is not None:
            return ToolAnswer(refusal)
        namespace, shell = self._namespace, self._shell
        job = JOBS.submit(lambda: run_code(namespace, code, shell))
        work = runs.Work(asyncio.wrap_future(job.started), asyncio.wrap_future(job.future), job.stop)
        outcome = await runs.supervise(
            found.turn,
            found.part_id,
            code,
            work,
            waiting=self.waiting,
            allowed=share.run == "allow",
            limit=share.grants.modes.run_limit,
        )
        ended = job.future.done() and not job.future.cancelled() and job.future.exception() is None
        report = ToolAnswer.of(job.future.result()) if ended else None
        if outcome == "finished" and report is not None:
            return report
        said = runs.unfinished(outcome, job.started.done(), share.grants.modes.run_limit)
        return (
            ToolAnswer(f"{said}\n\n{report.text}", report.images) if report is not None else ToolAnswer(said)
        )

    def waiting(self) -> str:
        """What an approved run waits for now: ``the running cell In[7]``, or "" when the main thread is free
        (idle, or a ``%hermes`` wait that takes runs)."""
        if not OUTPUTS.busy or JOBS.serving:
            return ""
        running = OUTPUTS.running()
        return f"the running cell In[{running.count}]" if running is not None else "the running cell"


async def _awaited(value: Awaitable[DashboardConnection]) -> DashboardConnection:
    return await value


def _image_dict(image: SentImage) -> SentImageDict:
    return {
        "mime": image.mime,
        "width": image.width,
        "height": image.height,
        "bytes": image.size,
        "label": image.label,
        "data": image.data,
    }


#: The one instance of this process.
KERNEL = KernelTools()
