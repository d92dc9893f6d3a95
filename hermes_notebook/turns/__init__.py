"""The pure turn model: wire events in, messages made of parts (and change records) out.

Nothing in this package does I/O: no asyncio, httpx, websockets, IPython or ipywidgets (a conventions test
enforces it). Live streams of both dialects and rebuilt history fold through the same ``TurnFolder``.
"""

from __future__ import annotations

from .events import (
    DASHBOARD_EVENT_TYPES,
    DASHBOARD_TURN_EVENT_TYPES,
    KNOWN_EVENT_TYPES,
    RUN_EVENT_TYPES,
    TERMINAL_EVENT_TYPES,
    Dialect,
    Event,
)
from .model import (
    DEFAULT_APPROVAL_CHOICES,
    REDACTED,
    HistoryTurn,
    Interaction,
    InteractionKind,
    InteractionStatus,
    Message,
    MessageStatus,
    Part,
    PartKind,
    Source,
    ToolStatus,
    TransformContext,
    TransformOutput,
    TurnFolder,
    apply_changes,
    fold_history,
    history_events,
    user_message,
)

__all__ = [
    "DASHBOARD_EVENT_TYPES",
    "DASHBOARD_TURN_EVENT_TYPES",
    "DEFAULT_APPROVAL_CHOICES",
    "KNOWN_EVENT_TYPES",
    "REDACTED",
    "RUN_EVENT_TYPES",
    "TERMINAL_EVENT_TYPES",
    "Dialect",
    "Event",
    "HistoryTurn",
    "Interaction",
    "InteractionKind",
    "InteractionStatus",
    "Message",
    "MessageStatus",
    "Part",
    "PartKind",
    "Source",
    "ToolStatus",
    "TransformContext",
    "TransformOutput",
    "TurnFolder",
    "apply_changes",
    "fold_history",
    "history_events",
    "user_message",
]
