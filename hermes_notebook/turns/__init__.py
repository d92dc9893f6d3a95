"""The pure turn model: wire events in, messages made of parts (and change records) out.

Nothing in this package does I/O: no asyncio, httpx, websockets, IPython or ipywidgets (a conventions test
enforces it). Live streams of both dialects and rebuilt history fold through the same ``TurnFolder``.
``events`` (the normalised wire event), ``model`` (Message/Part/Interaction), ``changes`` (the JSON contract:
TypedDicts and change records), ``folder`` + ``dialects`` (the folding), ``history`` (REST rows as events).
"""

from __future__ import annotations

from .changes import (
    AppendChange,
    ChangeRecord,
    FinishChange,
    InteractionDict,
    MessageChange,
    MessageDict,
    PartChange,
    PartDict,
    PartFields,
    PatchChange,
    Role,
    apply_changes,
)
from .events import (
    DASHBOARD_EVENT_TYPES,
    DASHBOARD_TURN_EVENT_TYPES,
    KNOWN_EVENT_TYPES,
    RUN_EVENT_TYPES,
    TERMINAL_EVENT_TYPES,
    Dialect,
    Event,
)
from .folder import TurnFolder
from .history import HistoryTurn, fold_history, history_events
from .model import (
    APPROVAL_CHOICES,
    CODE_CHOICES,
    DEFAULT_APPROVAL_CHOICES,
    MASKED_APPROVAL_CHOICES,
    READS_CHOICE,
    REDACTED,
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
    sent_prompt_message,
    user_message,
)

__all__ = [
    "APPROVAL_CHOICES",
    "CODE_CHOICES",
    "DASHBOARD_EVENT_TYPES",
    "DASHBOARD_TURN_EVENT_TYPES",
    "DEFAULT_APPROVAL_CHOICES",
    "KNOWN_EVENT_TYPES",
    "MASKED_APPROVAL_CHOICES",
    "READS_CHOICE",
    "REDACTED",
    "RUN_EVENT_TYPES",
    "TERMINAL_EVENT_TYPES",
    "AppendChange",
    "ChangeRecord",
    "Dialect",
    "Event",
    "FinishChange",
    "HistoryTurn",
    "Interaction",
    "InteractionDict",
    "InteractionKind",
    "InteractionStatus",
    "Message",
    "MessageChange",
    "MessageDict",
    "MessageStatus",
    "Part",
    "PartChange",
    "PartDict",
    "PartFields",
    "PartKind",
    "PatchChange",
    "Role",
    "Source",
    "ToolStatus",
    "TransformContext",
    "TransformOutput",
    "TurnFolder",
    "apply_changes",
    "fold_history",
    "history_events",
    "sent_prompt_message",
    "user_message",
]
