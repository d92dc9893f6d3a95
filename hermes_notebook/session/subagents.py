"""A conversation's subagents: steering and stopping one delegated child while its turn runs.

``subagent.steer`` is the newer Dashboard's; ``subagent.interrupt`` is on both. Which a Hermes offers is
learned from its answers, never a version: asking about a subagent id no session has is harmless (a steer is
"rejected", a stop finds nothing), and a server without the method says "not offered". The answer is kept for
the conversation's connection, so a view asks once and shows only the buttons that work. Owned by the
:class:`~.conversation.Conversation` (``conversation.subagents``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from ..client.dashboard.steering import SteerOutcome, interrupt_subagent, steer_subagent
from ..errors import HermesNotOfferedError

if TYPE_CHECKING:
    from ..client.dashboard import DashboardConnection, SessionRef

__all__ = ["SubagentControls", "Subagents"]

_PROBE_ID = "sa-hn-probe-00000000"  # no subagent has this id: the probe changes nothing


class SubagentControls(dict[str, bool]):
    """``{"steer": bool, "stop": bool}``: which subagent controls this Hermes offers."""


class Owner(Protocol):
    """What this uses of its :class:`~.conversation.Conversation`: its session resolution."""

    async def target(self, session: str | None, what: str) -> tuple[DashboardConnection, SessionRef, str]: ...


class Subagents:
    """The subagent side of one :class:`~.conversation.Conversation` (see the module docstring)."""

    def __init__(self, conversation: Owner) -> None:
        self._conversation = conversation
        self._offered: SubagentControls | None = None

    async def offered(self, session: str | None) -> SubagentControls:
        """Which controls this Hermes offers (asked once per conversation, by a harmless probe)."""
        if self._offered is None:
            conn, ref, _ = await self._conversation.target(session, "steering a subagent")
            found = SubagentControls()
            for name, probe in (
                ("steer", lambda: steer_subagent(conn, ref, _PROBE_ID, "probe")),
                ("stop", lambda: interrupt_subagent(conn, ref, _PROBE_ID)),
            ):
                try:
                    await probe()
                    found[name] = True
                except HermesNotOfferedError:
                    found[name] = False
            self._offered = found
        return self._offered

    async def steer(self, session: str | None, subagent_id: str, text: str) -> SteerOutcome:
        conn, ref, _ = await self._conversation.target(session, "steering a subagent")
        return await steer_subagent(conn, ref, subagent_id, text)

    async def stop(self, session: str | None, subagent_id: str) -> bool:
        conn, ref, _ = await self._conversation.target(session, "stopping a subagent")
        return await interrupt_subagent(conn, ref, subagent_id)
