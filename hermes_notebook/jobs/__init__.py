"""Hermes cron jobs from notebooks: schedule checks (``schedules``, with ``wording`` and ``presets``), field checks
(``validation``), how a job shows (``display``), the scripting API (``api``) and a job's runs (``runs``). The HTTP
client itself is ``hermes_notebook.client.jobs``.
"""

from __future__ import annotations

from . import schedules

__all__ = ["schedules"]
