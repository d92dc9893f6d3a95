"""The API Server's small typed answers: health, models, capabilities, runs, approvals, sessions.

Each keeps the server's JSON as ``raw`` (fields this version does not know stay reachable); section numbers
(§N) refer to docs/protocol/api-server.md. :mod:`hermes_notebook.client.api` re-exports every name.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from ._mapping import raw as _raw

__all__ = [
    "TERMINAL_STATUSES",
    "ApprovalResult",
    "Capabilities",
    "Health",
    "ModelInfo",
    "RunRef",
    "RunStatus",
    "SessionInfo",
    "SessionMessage",
]

#: Run statuses after which nothing changes (§3 "Lifecycle and status").
TERMINAL_STATUSES = frozenset(
    {"completed", "failed", "cancelled", "interrupted"}
)  # interrupted: newer servers


# --- simple typed results
# ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Health:
    """``GET /health`` (no auth): ``{"status","platform","version"}`` (§2)."""

    status: str
    platform: str | None = None
    version: str | None = None
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False)

    @property
    def ok(self) -> bool:
        """True when the server says ``status: ok``."""
        return self.status == "ok"


@dataclass(frozen=True)
class ModelInfo:
    """One entry of ``GET /v1/models``: the advertised model name and any ``model_routes`` aliases (§2)."""

    id: str
    owned_by: str | None = None
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False)


@dataclass(frozen=True)
class Capabilities:
    """``GET /v1/capabilities``. Note ``jobs_admin`` is reported false although ``/api/jobs`` works (§2)."""

    platform: str | None
    model: str | None
    features: Mapping[str, Any]
    endpoints: Mapping[str, Any]
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False)

    def supports(self, feature: str) -> bool:
        """True when the feature flag is present and truthy."""
        return bool(self.features.get(feature))


@dataclass(frozen=True)
class RunRef:
    """What ``POST /v1/runs`` answers (202 ``{"run_id","status":"started"}``, §3)."""

    id: str
    status: str
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False)

    @property
    def replayed(self) -> bool:
        """True when a newer server answered an ``Idempotency-Key`` it had seen: no second run was started."""
        return self.raw.get("replayed") is True


@dataclass(frozen=True)
class RunStatus:
    """``GET /v1/runs/{id}``: kept in server memory for 3600 s after the run ends (§3)."""

    run_id: str
    status: str
    output: str | None = None
    usage: Mapping[str, Any] | None = None
    error: str | None = None
    session_id: str | None = None
    model: str | None = None
    last_event: str | None = None
    created_at: float | None = None
    updated_at: float | None = None
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False)

    @property
    def done(self) -> bool:
        """True once the status is ``completed``, ``failed`` or ``cancelled``."""
        return self.status in TERMINAL_STATUSES

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RunStatus:
        """Build from the JSON body; unknown keys stay in ``raw``."""
        return cls(
            run_id=str(data.get("run_id", "")),
            status=str(data.get("status", "")),
            output=data.get("output"),
            usage=data.get("usage"),
            error=data.get("error"),
            session_id=data.get("session_id"),
            model=data.get("model"),
            last_event=data.get("last_event"),
            created_at=data.get("created_at"),
            updated_at=data.get("updated_at"),
            raw=_raw(data),
        )


@dataclass(frozen=True)
class ApprovalResult:
    """``POST /v1/runs/{id}/approval`` answer: how many pending approvals the choice resolved (§3)."""

    run_id: str
    choice: str
    resolved: int
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False)


# --- sessions ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SessionInfo:
    """A state.db session as listed by ``GET /api/sessions`` (§6)."""

    id: str
    source: str | None = None
    title: str | None = None
    model: str | None = None
    started_at: float | None = None
    last_active: float | None = None
    message_count: int | None = None
    preview: str | None = None
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> SessionInfo:
        """Build from one ``data`` item; unknown keys stay in ``raw``."""
        known = {f.name for f in fields(cls)} - {"raw"}
        return cls(**{k: data.get(k) for k in known}, raw=_raw(data))  # type: ignore[arg-type]


@dataclass(frozen=True)
class SessionMessage:
    """One stored message of a session (``GET /api/sessions/{id}/messages``, §6)."""

    id: Any
    role: str
    content: Any
    tool_calls: Any = None
    tool_call_id: str | None = None
    tool_name: str | None = None
    timestamp: float | None = None
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> SessionMessage:
        """Build from one ``data`` item; unknown keys stay in ``raw``."""
        known = {f.name for f in fields(cls)} - {"raw"}
        return cls(**{k: data.get(k) for k in known}, raw=_raw(data))  # type: ignore[arg-type]
