"""What ``Hermes.share_kernel()`` returns (:class:`KernelShare`), and what the kernel remembers of each call.

Why apart from :mod:`.share`: the share is a value the user holds and reads (``str(share)``,
``share.grants``); :class:`~.share.KernelTools` is the owner that makes and ends them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from ..session.mcp_servers import McpServers
from . import registration
from .call import CallingTurn
from .grants import Grants

__all__ = ["CallRecord", "KernelShare", "SharedConversation"]


class SharedConversation(Protocol):
    """What the kernel uses of a conversation that shares it (:class:`~hermes_notebook.session.Conversation`):
    the turns it runs (a call is answered only for one of them) and its profile's MCP servers (where the tool
    server is registered), and which profile that is (every session of it is offered the tools)."""

    @property
    def mcp(self) -> McpServers: ...

    @property
    def profile(self) -> str | None: ...

    def running_turns(self) -> Sequence[CallingTurn]: ...


@dataclass(eq=False)
class KernelShare:
    """What ``Hermes.share_kernel()`` returns: the tool server, the policy, and how Hermes learnt about it."""

    name: str
    url: str
    #: The sharing conversation: its turns are the ones a call may come from, and the share is kept under it
    # (the chat header finds its modes by it).
    conversation: SharedConversation = field(repr=False)
    #: The permission modes and what was allowed on top (the one owner: revoke with
    # ``share.grants.revoke()``).
    grants: Grants = field(default_factory=Grants)
    #: The Dashboard this connection shares with (its registration is undone when the last share there goes).
    dashboard_url: str = ""
    #: The Hermes profile on that Dashboard (registrations are per Dashboard and profile).
    profile: str | None = None
    #: True when the Dashboard registered the server; False: add :attr:`snippet` yourself and restart Hermes.
    registered: bool = False
    #: The ``config.yaml`` entry for a Dashboard that cannot register servers (None when registered).
    snippet: str | None = None
    #: The 0600 file holding the bearer token (only written for the snippet; removed when the share ends).
    token_path: Path | None = None
    #: What every result is scrubbed of: the connection's key and token, and the tool token.
    scrub_secrets: tuple[object, ...] = field(default=(), repr=False)

    @property
    def read(self) -> bool:
        """True when reads are on for every session of this connection."""
        return self.grants.modes.reads == "on"

    @property
    def edit(self) -> str:
        """``propose`` or ``off``."""
        return self.grants.modes.edits

    @property
    def run(self) -> str:
        """``ask``, ``allow`` (for this session) or ``never``."""
        return self.grants.modes.runs

    def may_read(self, session_id: str) -> bool:
        """True when the read tools answer for this session."""
        return self.grants.may_read(session_id)

    def instructions(self) -> str:
        """How to add the server by hand (0.19.0): the snippet, where the token is, and the restart."""
        if self.snippet is None:
            return ""
        key = registration.env_key(self.name)
        return (
            "This Hermes Dashboard cannot add MCP servers while it runs. Add this to "
            "~/.hermes/config.yaml:\n\n"
            f"{self.snippet}\n"
            f"and put the token in ~/.hermes/.env, e.g.:\n\n"
            f'  echo "{key}=$(cat {self.token_path})" >> ~/.hermes/.env\n\n'
            f"(the token is in {self.token_path}, readable only by you), then restart Hermes. "
            "Hermes needs its MCP client for this (pip install 'hermes-agent[mcp]' where Hermes runs): "
            "without it Hermes skips the entry without a word. "
            "The server lives as long as this kernel: a restarted kernel gets a new port and token."
        )

    @property
    def audience(self) -> str:
        """Whose sessions are offered the tools: every session of the connection's Hermes profile (a profile's
        MCP servers are all its sessions'), though a call is answered only for this connection's turns."""
        profile = self.conversation.profile
        return f"profile {profile!r}" if profile else "the Dashboard's default profile"

    @property
    def headline(self) -> str:
        """The share in one line (a status shows this): the server, where it listens, its modes."""
        return f"Kernel tools {self.name} at {self.url}: {self.grants.describe()}"

    def __str__(self) -> str:
        head = f"Kernel tools {self.name} at {self.url}\n  modes: {self.grants.describe()}"
        if self.registered:
            return (
                f"{head}\n  registered with the Dashboard: every session of {self.audience} sees the tools,\n"
                "  and they answer only this connection's turns."
            )
        return head + "\n" + self.instructions()

    def __repr__(self) -> str:
        modes = self.grants.modes
        return (
            f"<KernelShare {self.name} reads={modes.reads} edits={modes.edits} runs={modes.runs} "
            f"registered={self.registered} granted={len(self.grants)}>"
        )

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(str(self))


@dataclass(frozen=True)
class CallRecord:
    """One answered call: which tool, how long the kernel took (binding included), and the cell running
    then."""

    tool: str
    seconds: float
    #: The execution count of the cell that ran meanwhile (None: the kernel was idle).
    running_cell: int | None
    images: int = 0
