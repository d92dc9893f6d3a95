"""The notebook surface: the blocking facade (``connect`` -> ``Hermes``), replies, the live turn view
presenters, the comm pump that keeps buttons working while a cell blocks, and the ``%hermes`` magics.

``facade`` (Hermes, connect) -> ``runner`` (one turn runner: a Dashboard driver and an API driver on one
skeleton) -> ``handle`` (TurnHandle) -> ``results`` (Reply and the listing types); ``sessions`` (which session
an ask continues), ``interactions`` (policies and text prompts), ``presenters`` (how a turn shows in a cell),
``wait`` (the blocking wait and its comm pump), ``shell`` (kernel, terminal or plain Python).
"""

from __future__ import annotations

from .context import fill, raw
from .facade import Hermes, Reply, TurnHandle, connect, resume

__all__ = ["Hermes", "Reply", "TurnHandle", "connect", "fill", "raw", "resume"]
