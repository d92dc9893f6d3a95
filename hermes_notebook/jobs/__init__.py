"""Hermes cron jobs from notebooks: the scripting API (``api``), a job's runs (``runs``) and the job they
return (``Job``), over the HTTP client (``hermes_notebook.client.jobs``). The pure rules they check with
(schedules, fields, display) are ``hermes_notebook.cron``. The jobs widget reaches Hermes through this package
only.
"""

from __future__ import annotations

from ..client.jobs import Job
from ..cron import schedules

__all__ = ["Job", "schedules"]
