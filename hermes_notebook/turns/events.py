"""One wire event of either Hermes dialect, normalised (docs/architecture.md, "Event").

Two servers stream turn events and they disagree on framing:

* the Dashboard sends JSON-RPC 2.0 notifications over ``/api/ws``:
  ``{"jsonrpc":"2.0","method":"event","params":{"type":T,"session_id":SID,"payload":{...}}}``
  (docs/protocol/dashboard.md §2 "Events", §4). ``payload`` is omitted when empty (``message.start``) and
  ``gateway.ready`` has no ``session_id``;
* the API Server sends one JSON object per SSE ``data:`` line on ``GET /v1/runs/{id}/events``, with the event
  name in the ``"event"`` key and the fields flat beside it (docs/protocol/api-server.md §3 "Where events come
  from", "Wire format").

:class:`Event` is the one shape the turn model reads. Parsing sits on the hot path (the Dashboard connection
pushes every frame through it), so the constructors below avoid the frozen-dataclass ``__init__`` (see
``_EventBuilder``): same object, a fraction of the cost.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

__all__ = [
    "DASHBOARD_EVENT_TYPES",
    "DASHBOARD_TURN_EVENT_TYPES",
    "KNOWN_EVENT_TYPES",
    "RUN_EVENT_TYPES",
    "TERMINAL_EVENT_TYPES",
    "Dialect",
    "Event",
]

Dialect = Literal["dashboard", "run"]

# Events that belong to a turn and that the turn model reads or deliberately ignores
# (docs/protocol/dashboard.md §4.1 turn events, §4.2 blocking prompts).
DASHBOARD_TURN_EVENT_TYPES: frozenset[str] = frozenset(
    {
        "message.start",
        "message.delta",
        "reasoning.delta",
        "thinking.delta",
        "reasoning.available",
        "message.interim",
        "tool.generating",
        "tool.start",
        "tool.complete",
        "tool.output_risk",
        "message.complete",
        "error",
        "approval.request",
        "clarify.request",
        "sudo.request",
        "sudo.expire",
        "secret.request",
        "secret.expire",
    }
)

# Every event type hermes-agent 0.19.0 emits on /api/ws (docs/protocol/dashboard.md §2, §4.1-§4.3).
DASHBOARD_EVENT_TYPES: frozenset[str] = DASHBOARD_TURN_EVENT_TYPES | frozenset(
    {
        "gateway.ready",
        "session.info",
        "session.title",
        "status.update",
        "terminal.read.request",
        "review.summary",
        "notification.show",
        "notification.clear",
        "reaction",
        "moa.reference",
        "moa.aggregating",
        "subagent.start",
        "subagent.tool",
        "subagent.thinking",
        "subagent.progress",
        "subagent.complete",
        "subagent.spawn_requested",
        "background.complete",
        "agent.terminal.output",
        "terminal.close",
        "browser.progress",
        "preview.restart.progress",
        "preview.restart.complete",
        "billing.step_up.verification",
        "pet.generate.progress",
        "pet.hatch.progress",
        "voice.status",
        "voice.transcript",
        "skin.changed",
        # newer Dashboards (desktop_contract 8): prompt withdrawal, usage ticks, "refetch" broadcasts
        "request.cancel",
        "session.usage",
        "session.reclaimed",
        "sessions.changed",
        "cron.changed",
        "platforms.changed",
        "projects.changed",
        "pairing.changed",
        "approval.cancelled",
    }
)

# Every event GET /v1/runs/{id}/events emits (docs/protocol/api-server.md §3 "Where events come from";
# there is no run.started on /v1/runs).
RUN_EVENT_TYPES: frozenset[str] = frozenset(
    {
        "message.delta",
        "tool.started",
        "tool.completed",
        "reasoning.available",
        "approval.request",
        "approval.responded",
        "run.completed",
        "run.failed",
        "run.cancelled",
        # newer API Servers
        "run.interrupted",
        "run.steered",
        "replay.truncated",
    }
)

KNOWN_EVENT_TYPES: Mapping[str, frozenset[str]] = {"dashboard": DASHBOARD_EVENT_TYPES, "run": RUN_EVENT_TYPES}

# Events after which a turn is over. A Dashboard turn ends at message.complete or error
# (docs/protocol/dashboard.md §4.1); a run ends at one of its run.* events, and a reader must stop there
# rather than wait for EOF (docs/protocol/api-server.md §3 "Late connect, reconnect, several readers").
TERMINAL_EVENT_TYPES: Mapping[str, frozenset[str]] = {
    "dashboard": frozenset({"message.complete", "error"}),
    "run": frozenset({"run.completed", "run.failed", "run.cancelled", "run.interrupted"}),
}

# SSE keys that describe the envelope, not the event (docs/protocol/api-server.md §3: "all also have run_id
# and timestamp").
_RUN_ENVELOPE_KEYS = ("event", "run_id", "timestamp")

_EMPTY: Mapping[str, Any] = {}


@dataclass(frozen=True, slots=True)
class Event:
    """One wire event: the Dashboard's ``params`` or the API Server's run SSE object, normalised.

    ``payload`` is the server's own mapping, not a copy; treat it as read-only.
    """

    type: str
    payload: Mapping[str, Any]
    session_id: str | None = None
    run_id: str | None = None
    dialect: Dialect = "dashboard"

    @property
    def terminal(self) -> bool:
        """True for the event that ends a turn or run (message.complete, error,
        run.completed|failed|cancelled)."""
        return self.type in TERMINAL_EVENT_TYPES[self.dialect]

    @classmethod
    def from_dashboard_frame(cls, obj: Any) -> Event | None:
        """A decoded ``/api/ws`` frame -> Event, or None for replies, requests and malformed frames.

        Shape per docs/protocol/dashboard.md §2: ``params.payload`` is omitted when empty,
        ``params.session_id`` is absent on ``gateway.ready`` and ``""`` on ``skin.changed`` (both become
        None).
        """
        # Hot path: exact type checks and inlined slot stores (see the module docstring).
        if type(obj) is not dict or obj.get("method") != "event":
            return None
        params = obj.get("params")
        if type(params) is not dict:
            return None
        etype = params.get("type")
        if type(etype) is not str:
            return None
        payload = params.get("payload")
        if type(payload) is not dict and not isinstance(payload, Mapping):
            payload = _EMPTY
        ev = _EventBuilder()  # inlined _make()
        ev.type = etype
        ev.payload = payload
        ev.session_id = params.get("session_id") or None
        ev.run_id = None
        ev.dialect = "dashboard"
        ev.__class__ = Event  # type: ignore[assignment]  # the re-class; see _EventBuilder
        return ev  # type: ignore[return-value]  # it is an Event now

    @classmethod
    def from_run_sse(cls, obj: Any) -> Event | None:
        """A decoded run SSE ``data:`` object -> Event (dialect "run"), or None if it has no ``"event"`` name.

        The payload is the object minus ``event``, ``run_id`` and ``timestamp`` (docs/protocol/api-server.md
        §3).
        """
        if type(obj) is not dict:
            return None
        etype = obj.get("event")
        if type(etype) is not str:
            return None
        payload = {k: v for k, v in obj.items() if k not in _RUN_ENVELOPE_KEYS}
        run_id = obj.get("run_id")
        return _make(etype, payload, None, run_id if type(run_id) is str else None, "run")


# Fast constructor for the hot path. A frozen dataclass pays for object.__setattr__ on every field, so events
# are built as an instance of a mutable twin with the very same slots and then re-classed to Event: CPython
# allows __class__ assignment between heap types with identical slot layouts, and the result is an ordinary
# Event (equal to one built by __init__, frozen from then on). About 2.5x cheaper than Event(...).
# The annotations type the slot stores for mypy; they must stay the same as Event's fields.
class _EventBuilder:
    __slots__ = Event.__slots__

    type: str
    payload: Mapping[str, Any]
    session_id: str | None
    run_id: str | None
    dialect: Dialect


def _make(
    etype: str, payload: Mapping[str, Any], session_id: str | None, run_id: str | None, dialect: Dialect
) -> Event:
    ev = _EventBuilder()
    ev.type = etype
    ev.payload = payload
    ev.session_id = session_id
    ev.run_id = run_id
    ev.dialect = dialect
    ev.__class__ = Event  # type: ignore[assignment]  # the re-class; see _EventBuilder
    return ev  # type: ignore[return-value]  # it is an Event now
