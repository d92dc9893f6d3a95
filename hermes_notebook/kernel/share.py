"""Sharing the kernel with Hermes: who may use the tools, which turn asked, the Run/Deny card, and cleanup.

One :class:`KernelTools` per process (:data:`KERNEL`) owns the tool server (:mod:`.server`) and its registration
(:mod:`.registration`). ``Hermes.share_kernel()`` adds a connection to it with a policy: read tools on or off
(off by default), ``run_code`` asked or refused. A call is answered only for a turn running on a connection that
shares: the call's tool part must show up, running, in one of those turns (it names this server and tool), so a
Hermes session started elsewhere, or another kernel, gets a refusal even with the token. ``run_code`` then hangs a
``code`` interaction on that tool part, the card the chat widget and the ``%hermes`` view show with the whole
code; only an answer of "run" runs it (:mod:`.execute`), on the kernel's main thread. Everything returned is
scrubbed of the connection's secrets and the tool token.
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
from ..errors import HermesError, HermesUsageError
from ..scrub import scrub
from ..turns import CODE_CHOICES, READS_CHOICE, Interaction
from . import cells, reading, registration
from .execute import JOBS, run_code
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

Connect = Callable[[], Awaitable["DashboardConnection"]]


@dataclass(eq=False)
class KernelShare:
    """What ``Hermes.share_kernel()`` returns: the tool server, the policy, and how Hermes learnt about it."""

    name: str
    url: str
    read: bool
    run: str
    #: True when the Dashboard registered the server; False: add :attr:`snippet` yourself and restart Hermes.
    registered: bool = False
    #: The ``config.yaml`` entry for a Dashboard that cannot register servers (None when registered).
    snippet: str | None = None
    #: The 0600 file holding the bearer token (only written for the snippet).
    token_path: Path | None = None
    #: Stored session ids whose reads the user allowed from a card.
    read_sessions: set[str] = field(default_factory=set)
    #: How to reach the sharing connection's Dashboard (the turns a call may come from).
    connect: Connect | None = field(default=None, repr=False)
    #: What every result is scrubbed of: the connection's key and token, and the tool token.
    scrub_secrets: tuple[object, ...] = field(default=(), repr=False)

    def may_read(self, session_id: str) -> bool:
        """True when the read tools answer for this session."""
        return self.read or session_id in self.read_sessions

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
        reads = "on" if self.read else "off (run_code cards can allow them per session)"
        head = f"Kernel tools {self.name} at {self.url}: reads {reads}, run_code {self.run}"
        if self.registered:
            return head + "; registered with the Dashboard."
        return head + ".\n" + self.instructions()

    def __repr__(self) -> str:
        return f"<KernelShare {self.name} read={self.read} run={self.run!r} registered={self.registered}>"

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(str(self))


@dataclass
class _Found:
    share: KernelShare
    conn: DashboardConnection
    turn: Turn
    part_id: str


class KernelTools:
    """The process's tool server and the connections that share the kernel (see the module docstring)."""

    def __init__(self) -> None:
        self.name = f"{registration.NAME_PREFIX}{secrets.token_hex(4)}"
        self.server: ToolServer | None = None
        self._shares: dict[int, KernelShare] = {}
        self._registered: dict[str, Connect] = {}  # Dashboard URL -> how to reach it (to unregister)
        self._claimed: set[tuple[str, str]] = set()
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
        """Serve the tools for ``key``'s turns and make them known to its Dashboard (blocking; a cell calls it)."""
        if run not in RUN_MODES:
            raise HermesUsageError(f"run must be one of {', '.join(RUN_MODES)}, not {run!r}")
        self._bind_namespace()
        JOBS.attach_loop()
        if self.server is None or not self.server.running:
            self.server = ToolServer(self.handle, offered=lambda: (*TOOLS, *cells.offered())).start()
        server = self.server
        cells.follow_front_end(server)  # the cell tools come and go with the notebook's front end
        share = KernelShare(self.name, server.url, bool(read), run, connect=connect,
                            scrub_secrets=(*secrets, server.token))
        token = server.token.reveal()
        try:
            registered = runtime.run_sync(self._register(connect, dashboard_url, token), timeout=120)
        except HermesError as exc:
            message = scrub(str(exc), (token, *secrets))
            raise HermesUsageError(f"could not register the kernel tools with the Dashboard: {message}") from None
        share.registered = registered
        if not registered:
            share.token_path = registration.token_file(self.name, token)
            share.snippet = registration.config_snippet(self.name, server.url)
        del token
        with self._lock:
            previous = self._shares.get(id(key))
            if previous is not None:
                share.read_sessions |= previous.read_sessions
            self._shares[id(key)] = share
        if not self._exit_hook:
            atexit.register(self.close)
            self._exit_hook = True
        return share

    def unshare(self, key: object, dashboard_url: str) -> None:
        """Stop answering for ``key``; unregister from its Dashboard unless another connection there shares too."""
        with self._lock:
            share = self._shares.pop(id(key), None)
            still_there = any(s is not share for s in self._shares.values()) and dashboard_url in self._registered
            others = bool(self._shares)
        if share is None:
            return
        if dashboard_url in self._registered and not still_there:
            connect = self._registered.pop(dashboard_url)
            with contextlib.suppress(Exception):
                runtime.run_sync(self._unregister(connect), timeout=15)
        if not others and self.server is not None:
            self.server.stop()
            self.server = None

    def close(self) -> None:
        """Unregister everywhere and stop the server (atexit: the kernel shuts down or restarts)."""
        with self._lock:
            self._shares.clear()
            registered, self._registered = dict(self._registered), {}
        for connect in registered.values():
            with contextlib.suppress(Exception):
                runtime.run_sync(self._unregister(connect), timeout=8)
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
        if dashboard_url in self._registered:
            return True
        await registration.remove_stale(conn, keep={self.name})
        assert self.server is not None
        await registration.register(conn, self.name, self.server.url, token)
        self._registered[dashboard_url] = connect
        return True

    async def _unregister(self, connect: Connect) -> None:
        await registration.unregister(await connect(), self.name)

    # --- a tool call (the server's thread, then the package loop) ----------------------------------------

    async def handle(self, tool: str, arguments: dict[str, Any]) -> str:
        """The tool server's handler: answer on the package loop, where the connections live."""
        return await asyncio.wrap_future(runtime.submit(self.call(tool, arguments)))

    async def call(self, tool: str, arguments: dict[str, Any]) -> str:
        """Route a call to the turn that made it, apply the policy, and return the scrubbed result."""
        found = await self._find(tool)
        if found is None:
            return ("Refused: no turn started from this notebook is calling this tool. The notebook's kernel tools "
                    "answer only the notebook's own Hermes turns.")
        share, session_id = found.share, found.turn.ref.stored_id
        try:
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
        finally:
            self._claimed.discard((found.turn.id, found.part_id))
        return scrub(text, share.scrub_secrets)

    async def _find(self, tool: str) -> _Found | None:
        """The running tool part of this call in a sharing connection's open turn (waits :data:`ROUTE_WAIT`)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + ROUTE_WAIT
        while True:
            for share in self.shares():
                if share.connect is None:
                    continue
                conn = await share.connect()
                for turn in conn.running_turns():
                    for part in turn.message.parts:
                        claim = (turn.id, part.id)
                        if (part.kind == "tool" and part.status == "running" and claim not in self._claimed
                                and self.name in (part.name or "") and (part.name or "").endswith(tool)):
                            self._claimed.add(claim)
                            return _Found(share, conn, turn, part.id)
            if loop.time() >= deadline:
                return None
            await asyncio.sleep(0.05)

    def _read(self, tool: str, arguments: dict[str, Any]) -> str:
        namespace, hidden = self._namespace, getattr(self._shell, "user_ns_hidden", None)
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

    async def _run(self, found: _Found, code: str) -> str:
        share, session_id = found.share, found.turn.ref.stored_id
        if share.run == "never":
            return "Refused: running code in this notebook is off (share_kernel(run='never'))."
        if not code.strip():
            return "run_code needs the code to run."
        if len(code) > MAX_CODE_CHARS:
            return f"Refused: the code is {len(code):,} characters; at most {MAX_CODE_CHARS:,} can be shown and run."
        self._asked += 1
        choices = [*CODE_CHOICES, *([] if share.may_read(session_id) else [READS_CHOICE])]
        interaction = Interaction(
            "code", f"code-{self._asked}", command=code, choices=choices,
            description="It runs in this notebook's kernel, with your variables and files, only if you click Run.",
        )
        answer = await found.turn.ask(found.part_id, interaction, ANSWER_TIMEOUT)
        if answer == READS_CHOICE:
            share.read_sessions.add(session_id)
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
