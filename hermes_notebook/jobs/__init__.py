"""Hermes cron jobs from notebooks: the scripting API (``api``) and a job's runs (``runs``), over the HTTP
client (``hermes_notebook.client.jobs``). The pure rules they check with (schedules, fields, display) are
``hermes_notebook.cron``.
"""

from __future__ import annotations

from ..cron import schedules

__all__ = ["schedules"]
