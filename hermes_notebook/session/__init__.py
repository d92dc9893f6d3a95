"""One conversation with Hermes, below every face: the layer the facade, the Chat widget and ``%hermes``
adapt.

``conversation`` (:class:`Conversation`, the one owner of every session operation) over ``runner`` (the one
turn runner, typed against the small :class:`TurnSink` protocol of ``turns``), ``queue`` (one turn at a time
per session, for every face), ``book`` (which session a name means), ``control`` (stopping a turn) and
``readings`` (models and usage as plain data). No IPython, ipywidgets or anywidget here
(tests/test_conventions.py checks).
"""

from __future__ import annotations

from ..client.dashboard.attachments import MAX_IMAGE_BYTES
from ..client.dashboard.commands import CommandOutcome
from ..client.dashboard.files import MAX_FILES
from ..client.dashboard.profiles import Profile
from ..client.dashboard.steering import SteerOutcome
from ..turns.checkpoints import Checkpoint, CheckpointDiff, FileChange
from .book import Resume, SessionBook, resume
from .control import TurnControl
from .conversation import Conversation, OpenedSession
from .files import CheckpointRef, Checkpoints, RestoreResult, TurnChanges, Undone
from .queue import TurnQueue
from .readings import UsageReading, model_rows
from .runner import TurnRunner
from .turns import VIAS, TurnOutcome, TurnRequest, TurnSink, Via

__all__ = [
    "MAX_FILES",
    "MAX_IMAGE_BYTES",
    "VIAS",
    "Checkpoint",
    "CheckpointDiff",
    "CheckpointRef",
    "Checkpoints",
    "CommandOutcome",
    "Conversation",
    "FileChange",
    "OpenedSession",
    "Profile",
    "RestoreResult",
    "Resume",
    "SessionBook",
    "SteerOutcome",
    "TurnChanges",
    "TurnControl",
    "TurnOutcome",
    "TurnQueue",
    "TurnRequest",
    "TurnRunner",
    "TurnSink",
    "Undone",
    "UsageReading",
    "Via",
    "model_rows",
    "resume",
]
