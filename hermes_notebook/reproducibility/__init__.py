"""Reproducibility checks: does a saved notebook still give its outputs when run again from scratch?

``masking`` and ``compare`` are pure (the masked outputs and each cell's verdict), ``report`` shows and
exports the verdicts, ``runner`` is the only part with I/O (nbclient runs the notebook in a fresh kernel).
"""

from __future__ import annotations

from .compare import CellCheck
from .report import ReproReport
from .runner import reproduce, reproduce_async

__all__ = ["CellCheck", "ReproReport", "reproduce", "reproduce_async"]
