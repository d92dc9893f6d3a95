"""The notebook surface: the blocking facade (``connect`` -> ``Hermes``), replies, the live turn view
presenters, the comm pump that keeps buttons working while a cell blocks, and the ``%hermes`` magics.
"""

from __future__ import annotations

from .context import raw
from .facade import Hermes, Reply, TurnHandle, connect

__all__ = ["Hermes", "Reply", "TurnHandle", "connect", "raw"]
