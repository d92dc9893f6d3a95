"""Sharing the kernel with Hermes: one owner of the tool server, its registrations and the shares.

One :class:`KernelTools` per process (:data:`KERNEL`) owns the tool server (:mod:`.server`) and where it is
registered (:mod:`.registration`). ``Hermes.share_kernel()`` adds its conversation to it with a policy, its
permission modes (reads off/on, edits propose/off, runs ask/allow for this session/never:
:class:`~.grants.Grants`, which also holds the sessions allowed reads from a card; every new policy replaces
them whole). Shares are kept under their conversation. Each call the server receives goes through
:mod:`.dispatch`: answered only for the running tool part of a sharing conversation's turn that asked for
exactly that call, once, then gated and answered by its row of the tool table (:mod:`.tools`).

:meth:`KernelTools.attach` runs on the sharing cell's own thread (IPython keeps its display hooks per thread,
and approved code runs on that thread's loop); everything else here is a coroutine on the package loop, and
``close`` (at exit) its derived blocking twin.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import logging
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..errors import HermesError, HermesUsageError
from ..runtime import blocking, on_loop
from ..scrub import scrub
from ..shell import host
from . import cells, registration
from .dispatch import ToolCalls
from .document import DOCUMENT
from .execute import JOBS
from .exposure import Exposure
from .grants import Grants, Modes
from .images import ToolAnswer
from .outputs import OUTPUTS
from .server import ToolServer
from .shared import CallRecord, KernelShare, SharedConversation
from .tools import offered

__all__ = ["KERNEL", "CallRecord", "KernelShare", "KernelTools"]  # the first two live in .shared

log = logging.getLogger(__name__)

#: Seconds the registration with a Dashboard may take (Hermes reloads every session's MCP tools).
REGISTER_TIMEOUT = 120.0
#: Seconds an unregistration may take (closing a connection or the kernel waits for it).
UNREGISTER_TIMEOUT = 15.0

Watcher = Callable[[dict[str, Any] | None], None]


class KernelTools:
    """The process's tool server and the conversations that share the kernel (see the module docstring)."""

    def __init__(self) -> None:
        self.server: ToolServer | None = None
        self._shares: dict[SharedConversation, KernelShare] = {}
        self._registrations = registration.Registrations()
        self._calls = ToolCalls()
        self._watchers: list[tuple[object, Watcher]] = []
        self._namespace: dict[str, Any] = {}
        self._shell: Any = None
        self._lock = threading.Lock()
        self._sharing = asyncio.Lock()  # one share or unshare at a time (the server and registrations)
        self._exit_hook = False
        self._following_document = False

    @property
    def name(self) -> str:
        """The tool server's name on the Dashboards (``notebook_<8 hex>``), as Hermes prefixes its tools."""
        return self._registrations.name

    # --- sharing ---------------------------------------------------------------------------------------

    def attach(self) -> None:
        """Bind the user's namespace and follow the kernel's cells and notebook, from the thread that shares
        the kernel (a cell's: IPython keeps its display hooks per thread, and the jobs queue needs that
        thread's loop). Idempotent."""
        shell = host.ipython()
        if shell is not None:
            self._shell, self._namespace = shell, shell.user_ns
        else:  # plain Python: the script's globals
            self._shell, self._namespace = None, vars(sys.modules["__main__"])
        JOBS.attach_loop()
        OUTPUTS.follow(self._shell)
        if not self._following_document:  # the header shows whether cell tools are on, and on which notebook
            self._following_document = True
            DOCUMENT.on_path(lambda _path: self._tell_all())
        DOCUMENT.open()

    async def share(
        self,
        conversation: SharedConversation,
        modes: Modes,
        *,
        dashboard_url: str,
        secrets: Sequence[object] = (),
    ) -> KernelShare:
        """Serve the tools for ``conversation``'s turns and make them known to its Dashboard.

        A new policy replaces the conversation's previous one whole: sessions allowed to read from a card
        lose it, and runs allowed for the session go back to what ``modes`` says."""
        async with self._sharing:
            return await self._share(conversation, modes, dashboard_url, secrets)

    async def _share(
        self, conversation: SharedConversation, modes: Modes, dashboard_url: str, secrets: Sequence[object]
    ) -> KernelShare:
        server = self.server
        if server is None or not server.running:
            # Where it listens and what Hermes is given: the kernel's environment (kernel/exposure.py).
            exposure = Exposure.from_env()
            server = ToolServer(self.call, offered=lambda: offered(DOCUMENT.attached), exposure=exposure)
            self.server = await asyncio.to_thread(server.start)
        cells.follow_front_end(server)  # the cell tools come and go with the notebook's front end
        token = server.token.reveal()
        try:
            registering = self._registrations.ensure(
                conversation.mcp, dashboard_url, server.url, token, server.exposure, conversation.profile
            )
            registered = await asyncio.wait_for(registering, REGISTER_TIMEOUT)
        except HermesError as exc:
            message = scrub(str(exc), (token, *secrets))
            raise HermesUsageError(
                f"could not register the kernel tools with the Dashboard: {message}"
            ) from None
        share = KernelShare(
            self.name,
            server.url,
            conversation,
            Grants(modes),
            dashboard_url,
            conversation.profile,
            registered,
            scrub_secrets=(*secrets, server.token),
        )
        if not registered:
            share.token_path = registration.token_file(self.name, token)
            share.snippet = registration.config_snippet(self.name, server.url, server.exposure)
        del token
        with self._lock:
            previous, self._shares[conversation] = self._shares.get(conversation), share
        if previous is not None:
            previous.grants.revoke()
            if previous.token_path is not None and previous.token_path != share.token_path:
                registration.remove_token_file(previous.token_path)
        share.grants.on_change(lambda: self._tell(conversation))
        self._tell(conversation)
        if not self._exit_hook:
            atexit.register(self._close_at_exit)
            self._exit_hook = True
        return share

    async def unshare(self, conversation: SharedConversation) -> None:
        """Stop answering for ``conversation``; unregister from its Dashboard unless another share there
        remains, and stop the server when none does."""
        async with self._sharing:
            await self._unshare(conversation)

    async def _unshare(self, conversation: SharedConversation) -> None:
        with self._lock:
            share = self._shares.pop(conversation, None)
            if share is None:
                return
            still_there = any(
                (s.dashboard_url, s.profile) == (share.dashboard_url, share.profile)
                for s in self._shares.values()
            )
            others = bool(self._shares)
        registered = [] if still_there else self._registrations.forget(share.dashboard_url, share.profile)
        share.grants.revoke()
        self._tell(conversation)
        if share.token_path is not None:
            registration.remove_token_file(share.token_path)
        for entry in registered:
            await self._registrations.undo(entry, UNREGISTER_TIMEOUT)
        if not others and self.server is not None:
            server, self.server = self.server, None
            await server.stop_async()

    async def close_async(self) -> None:
        """Unregister everywhere and stop the server (at exit: the kernel shuts down or restarts)."""
        with self._lock:
            shares, self._shares = list(self._shares.values()), {}
        for share in shares:
            share.grants.revoke()
            if share.token_path is not None:
                registration.remove_token_file(share.token_path)
        for entry in self._registrations.forget():
            await self._registrations.undo(entry, 8.0)
        if self.server is not None:
            server, self.server = self.server, None
            await server.stop_async(timeout=2)

    close = blocking(close_async, timeout=30.0)

    def _close_at_exit(self) -> None:
        with contextlib.suppress(Exception):  # a kernel that exits must not hang or fail on the way out
            self.close()

    def shares(self) -> list[KernelShare]:
        """The current shares (one per sharing conversation)."""
        with self._lock:
            return list(self._shares.values())

    def share_of(self, conversation: object) -> KernelShare | None:
        """``conversation``'s share, None when it does not share the kernel."""
        with self._lock:
            return next((s for c, s in self._shares.items() if c is conversation), None)

    def summary(self, conversation: object) -> str | None:
        """``conversation``'s share in one line, for a status (None: not shared)."""
        share = self.share_of(conversation)
        return None if share is None else share.headline

    # --- what the faces show: the modes, Revoke ----------------------------------------------------------

    def modes_of(self, conversation: object) -> dict[str, Any] | None:
        """What a face shows for a conversation: its share's modes (:meth:`.grants.Grants.state`) plus the
        server's name and whether the cell tools are offered; None when it does not share the kernel."""
        share = self.share_of(conversation)
        if share is None:
            return None
        return {
            **share.grants.state(),
            "server": share.name,
            "cells": DOCUMENT.attached,
            "notebook": DOCUMENT.path or None,
        }

    def revoke(self, conversation: object) -> bool:
        """Withdraw what was allowed for this session on ``conversation``'s share (the chat header's
        Revoke)."""
        share = self.share_of(conversation)
        if share is None:
            return False
        share.grants.revoke()
        return True

    def watch(self, conversation: object, callback: Watcher) -> Callable[[], None]:
        """Call ``callback(modes_of(conversation))`` now and whenever it changes (a share, a revoke, the end);
        returns an unsubscribe. The chat header follows its conversation's modes this way."""
        entry = (conversation, callback)
        with self._lock:
            self._watchers.append(entry)
        callback(self.modes_of(conversation))

        def unsubscribe() -> None:
            with self._lock, contextlib.suppress(ValueError):
                self._watchers.remove(entry)

        return unsubscribe

    def _tell_all(self) -> None:
        with self._lock:
            watched = list(dict.fromkeys(id(who) for who, _ in self._watchers))
            conversations = {id(who): who for who, _ in self._watchers}
        for key in watched:
            self._tell(conversations[key])

    def _tell(self, conversation: object) -> None:
        with self._lock:
            callbacks = [callback for who, callback in self._watchers if who is conversation]
        state = self.modes_of(conversation) if callbacks else None
        for callback in callbacks:
            try:
                callback(state)
            except Exception:  # a face's failure must not break a share
                log.exception("kernel modes watcher failed")

    # --- a tool call (the server's thread hands it to the package loop) -----------------------------------

    @on_loop
    async def call(self, tool: str, arguments: Mapping[str, Any]) -> ToolAnswer:
        """The tool server's handler: the answer to one call (:mod:`.dispatch`), on the package loop, where
        the conversations' turns live."""
        return await self._calls.answer(
            tool,
            arguments,
            server=self.name,
            shares=self.shares(),
            namespace=self._namespace,
            shell=self._shell,
        )

    def recent_calls(self) -> list[CallRecord]:
        """The last answered calls, oldest first (the busy-kernel test and benchmark read how long each
        took)."""
        return self._calls.recent()


#: The one instance of this process.
KERNEL = KernelTools()
