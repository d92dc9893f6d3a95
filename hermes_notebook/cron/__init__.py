"""The rules of Hermes cron jobs, pure (no I/O): schedule checks (``schedules``, with ``wording`` and
``presets``), field checks (``validation``) and how a job shows (``display``). The client validates with them
before it sends anything; the scripting API (``hermes_notebook.jobs``) and the jobs widget build on them.
"""

from __future__ import annotations

from . import schedules

__all__ = ["schedules"]
