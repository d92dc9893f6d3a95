"""Sharing the kernel with Hermes: who may use the tools, which turn asked, the Run/Deny card, and cleanup.

One :class:`KernelTools` per process (:data:`KERNEL`) owns the tool server (:mod:`.server`) and its registration
(:mod:`.registration`). ``Hermes.share_kernel()`` adds a connection to it with a policy: read tools on or off
(off by default; sessions allowed from a card are :class:`~.grants.ReadGrants`, cleared by every new policy),
``run_code`` asked or refused. A call is answered only for the running tool part of a sharing connection's turn
that asked for exactly that call, once (:mod:`.binding`): a Hermes session started elsewhere (Hermes offers the
tools to every session of the profile), or another kernel, gets a refusal even with the token, and a competing
or mismatched call is shown in the turn as a notice. ``run_code`` refuses code holding a key-shaped literal before
anyone is asked; otherwise it hangs a ``code`` interaction on that tool part, the card the chat widget and the
``%hermes`` view show with the whole code; only an answer of "run" runs it (:mod:`.execute`), on the kernel's
main thread. Reads run no user code (:mod:`.reading`). Everything returned is scrubbed of the connection's
secrets and the tool token; a failure is a fixed message, never a traceback in whatever cell is running.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import logging
import secrets
import sys
import threading
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import runtime
from ..errors import HermesError, HermesRPCError, HermesUsageError
from ..scrub import holds_key, scrub
from ..turns import CODE_CHOICES, READS_CHOICE, Interaction
from . import cells, reading, registration
from .binding import Claims, arguments_fit, part_arguments, tool_names
from .execute import JOBS, run_code
from .grants import ReadGrants
from .server import READ_TOOLS, TOOLS, ToolServer

if TYPE_CHECKING:
    from ..client.dashboard import DashboardConnection, Turn

__all__ = ["ANSWER_TIMEOUT", "KERNEL", "RUN_MODES", "RUN_TIMEOUT", "KernelShare", "KernelTools"]

log = logging.getLogger(__name__)

#: ``run=`` values: ask the user each time, or refuse every ``run_code``.
RUN_MODES = ("ask", "never")
#: Seconds a Run/Deny card waits for a click; then the code is not run.
ANSWER_TIMEOUT = 120.0
#: Seconds approved code may wait for the kernel's main thread (a busy cell) before it is dropped, unrun.
RUN_TIMEOUT = 120.0
#: Seconds a call waits for its tool part to reach this kernel (the event and the call travel separately).
ROUTE_WAIT = 5.0
#: Characters of code a ``run_code`` call may carry.
MAX_CODE_CHARS = 20_000
#: Seconds after an answered call within which its part's ``tool.complete`` arguments are checked (0.19.0).
CHECK_WAIT = 30.0

REFUSED = ("Refused: no turn started from this notebook is calling this tool with these arguments. The notebook's "
           "kernel tools answer only the notebook's own Hermes turns, once per call.")
FAILED = "The notebook's kernel could not answer this call."

Connect = Callable[[], Awaitable["DashboardConnection"]]


@dataclass(eq=False)
class KernelShare:
    """What ``Hermes.share_kernel()`` returns: the tool server, the policy, and how Hermes learnt about it."""

    name: str
    url: str
    read: bool
    run: str
    #: The Dashboard this connection shares with (its registration is undone when the last share there goes).
    dashboard_url: str = ""
    #: True when the Dashboard registered the server; False: add :attr:`snippet` yourself and restart Hermes.
    registered: bool = False
    #: The ``config.yaml`` entry for a Dashboard that cannot register servers (None when registered).
    snippet: str | None = None
    #: The 0600 file holding the bearer token (only written for the snippet; removed when the share ends).
    token_path: Path | None = None
    #: Sessions the user allowed to read from a Run card while reads are off (cleared by a new policy).
    grants: ReadGrants = field(default_factory=ReadGrants)
    #: How to reach the sharing connection's Dashboard (the turns a call may come from).
    connect: Connect | None = field(default=None, repr=False)
    #: What every result is scrubbed of: the connection's key and token, and the tool token.
    scrub_secrets: tuple[object, ...] = field(default=(), repr=False)

    def may_read(self, session_id: str) -> bool:
        """True when the read tools answer for this session."""
        return self.read or self.grants.allows(session_id)

    def instructions(self) -> str:
        """How to add the server by hand (0.19.0): the snippet, where the token is, and the restart."""
        if self.snippet is None:
            return ""
        key = registration.env_key(self.name)
        return (
            "This Hermes Dashboard cannot add MCP servers while it runs. Add this to ~/.hermes/config.yaml:\n\n"
            f"{self.snippet}\n"
            f"and put the token in ~/.hermes/.env, e.g.:\n\n"
            f'  echo "{key}=$(cat {self.token_path})" >> ~/.hermes/.env\n\n'
            f"(the token is in {self.token_path}, readable only by you), then restart Hermes. "
            "The server lives as long as this kernel: a restarted kernel gets a new port and token."
        )

    def __str__(self) -> str:
        granted = self.grants.sessions()
        if self.read:
            reads = "on"
        elif granted:
            reads = f"off, but allowed from a card for session(s) {', '.join(granted)}"
        else:
            reads = "off (run_code cards can allow them per session)"
        head = f"Kernel tools {self.name} at {self.url}: reads {reads}, run_code {self.run}"
        if self.registered:
            return head + "; registered with the Dashboard."
        return head + ".\n" + self.instructions()

    def __repr__(self) -> str:
        return (f"<KernelShare {self.name} read={self.read} run={self.run!r} registered={self.registered} "
                f"granted={len(self.grants)}>")

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(str(self))


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
        self._named = False  # the name is settled at the first share (a registration slot, or this random one)
        self._claims = Claims()
        self._checks: set[asyncio.Task[None]] = set()  # 0.19.0 completion checks still waiting (kept alive here)
        self._asked = 0
        self._namespace: dict[str, Any] = {}
        self._shell: Any = None
        self._lock = threading.Lock()
        self._exit_hook = False

    # --- sharing (a cell) -----------------------------------------------------------------------------

    def share(
        self, key: object, connect: Connect, *, dashboard_url: str, secrets: Sequence[object] = (),
        read: bool = False, run: str = "ask",
    ) -> KernelShare:
        """Serve the tools for ``key``'s turns and make them known to its Dashboard (blocking; a cell calls it).

        A new policy replaces the previous one of ``key`` whole: sessions allowed to read from a card lose it."""
        if run not in RUN_MODES:
            raise HermesUsageError(f"run must be one of {', '.join(RUN_MODES)}, not {run!r}")
        self._bind_namespace()
        JOBS.attach_loop()
        if self.server is None or not self.server.running:
            self.server = ToolServer(self.handle, offered=lambda: (*TOOLS, *cells.offered())).start()
        server = self.server
        cells.follow_front_end(server)  # the cell tools come and go with the notebook's front end
        token = server.token.reveal()
        try:
            registered = runtime.run_sync(self._register(connect, dashboard_url, token), timeout=120)
        except HermesError as exc:
            message = scrub(str(exc), (token, *secrets))
            raise HermesUsageError(f"could not register the kernel tools with the Dashboard: {message}") from None
        self._named = True
        share = KernelShare(self.name, server.url, bool(read), run, dashboard_url, registered, connect=connect,
                            scrub_secrets=(*secrets, server.token))
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
        if not self._exit_hook:
            atexit.register(self.close)
            self._exit_hook = True
        return share

    def unshare(self, key: object, dashboard_url: str) -> None:
        """Stop answering for ``key``; unregister from its Dashboard unless another connection there shares too."""
        with self._lock:
            share = self._shares.pop(id(key), None)
            still_there = any(s.dashboard_url == dashboard_url for s in self._shares.values())
            others = bool(self._shares)
            registered = None if still_there else self._registered.pop(dashboard_url, None)
        if share is None:
            return
        share.grants.revoke()
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

    def _bind_namespace(self) -> None:
        from ..notebook.shell import ipython

        shell = ipython()
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
            if not self._named:  # a dead kernel's name is taken over: its .env line is reused, not joined by another
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

    async def handle(self, tool: str, arguments: dict[str, Any]) -> str:
        """The tool server's handler: answer on the package loop, where the connections live."""
        return await asyncio.wrap_future(runtime.submit(self.call(tool, arguments)))

    async def call(self, tool: str, arguments: dict[str, Any]) -> str:
        """Bind a call to the tool part that asked for it, apply the policy, and return the scrubbed result."""
        try:
            found = await self._find(tool, arguments)
            if found is None:
                return REFUSED
            share, session_id = found.share, found.turn.ref.stored_id
            if tool in cells.CELL_TOOLS:
                caller = cells.Caller(share, found.turn, found.part_id, session_id, ANSWER_TIMEOUT, RUN_TIMEOUT)
                text = await cells.call(tool, arguments, caller)
            elif tool in READ_TOOLS:
                if not share.may_read(session_id):
                    text = ("Reading the notebook is off for this session. The user can turn it on with "
                            "hermes.share_kernel(read=True) or %hermes --kernel read.")
                else:
                    text = await asyncio.to_thread(self._read, tool, arguments)
            else:
                text = await self._run(found, str(arguments.get("code") or ""))
            if not found.exact:
                check = asyncio.ensure_future(self._check_completion(found, tool, arguments))
                self._checks.add(check)
                check.add_done_callback(self._checks.discard)
            return scrub(text, share.scrub_secrets)
        except Exception:  # never a traceback in the cell that happens to be running
            log.debug("kernel tool %s failed", tool, exc_info=True)
            return FAILED

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
                    turn.note(f"A second call of the kernel tool {tool} for a step that was answered already was "
                              "refused (each step is answered once): another Hermes session may be using this "
                              "notebook's tools.")
                for turn in mismatched.values():
                    if turn.id not in competing:
                        turn.note(f"A call of the kernel tool {tool} whose arguments no step of this turn asked "
                                  "for was refused: another Hermes session may be using this notebook's tools.")
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
                    found.turn.note(f"The kernel answered a call of {tool} for a step that, as Hermes reports it "
                                    "now, asked for other arguments: another Hermes session may have used this "
                                    "notebook's tools.")
                return
            await asyncio.sleep(0.2)

    def _read(self, tool: str, arguments: dict[str, Any]) -> str:
        namespace, hidden = self._namespace, getattr(self._shell, "user_ns_hidden", None)
        try:
            if tool == "list_variables":
                return reading.list_variables(namespace, hidden)
            if tool == "describe":
                return reading.describe(namespace, str(arguments.get("name") or ""), hidden)
            if tool == "read_cells":
                return reading.read_cells(namespace, str(arguments.get("cells") or ""))
            try:
                number = int(arguments.get("cell") or 0)
            except (TypeError, ValueError):
                return "read_output takes a cell number."
            return reading.read_output(namespace, number, self._shell)
        except Exception:  # a read never raises into the running cell's stderr (reading.py)
            log.debug("kernel read %s failed", tool, exc_info=True)
            return reading.READ_FAILED

    async def _run(self, found: _Found, code: str) -> str:
        share, session_id = found.share, found.turn.ref.stored_id
        if share.run == "never":
            return "Refused: running code in this notebook is off (share_kernel(run='never'))."
        if not code.strip():
            return "run_code needs the code to run."
        if len(code) > MAX_CODE_CHARS:
            return f"Refused: the code is {len(code):,} characters; at most {MAX_CODE_CHARS:,} can be shown and run."
        if holds_key(code, share.scrub_secrets):  # a card never hides what runs, so such code is never shown
            found.turn.note("Hermes asked to run code holding a key, token or password literal; it was refused "
                            "without asking (nothing ran).")
            return ("Refused before asking the user: the code holds a key, token or password literal (or this "
                    "connection's own key). Nothing ran. Read secrets from the environment (os.environ) or an "
                    "existing variable instead of writing them into code.")
        self._asked += 1
        choices = [*CODE_CHOICES, *([] if share.may_read(session_id) else [READS_CHOICE])]
        interaction = Interaction(
            "code", f"code-{self._asked}", command=code, choices=choices,
            description="It runs in this notebook's kernel, with your variables and files, only if you click Run.",
        )
        answer = await found.turn.ask(found.part_id, interaction, ANSWER_TIMEOUT)
        if answer == READS_CHOICE:
            share.grants.grant(session_id)
            return ("The user did not run the code, but allowed the read tools (list_variables, describe, "
                    "read_cells, read_output) for this session. The kernel is unchanged.")
        if answer != "run":
            why = "denied it" if answer == "deny" else f"did not answer within {ANSWER_TIMEOUT:g} s"
            return (f"The user {why}: the code was NOT run and the kernel is unchanged. "
                    "Do not retry without asking the user.")
        namespace, shell = self._namespace, self._shell
        job = JOBS.submit(lambda: run_code(namespace, code, shell))
        try:
            return str(await asyncio.wait_for(asyncio.wrap_future(job), RUN_TIMEOUT))
        except (TimeoutError, asyncio.TimeoutError):
            return (f"The kernel was busy for {RUN_TIMEOUT:g} s (a cell was running), so the approved code was "
                    "not run." if job.cancelled() else "The code is still running; its result is not available.")


#: The one instance of this process.
KERNEL = KernelTools()
