"""Hermes cron jobs from notebooks: schedule checks (``schedules``), the scripting API (``api``) and the
helpers behind it (``helpers``). The HTTP client itself is ``hermes_notebook.client.jobs``.
"""

from __future__ import annotations

from . import schedules

__all__ = ["schedules"]
