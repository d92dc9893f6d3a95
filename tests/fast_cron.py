"""Hermes' own cron ticker, ticking every second instead of every minute, for the test servers.

Hermes runs due cron jobs from a ticker thread in the gateway that wakes every 60 s
(``InProcessCronScheduler``; the interval is no config key), so each test that triggers a job and waits for
its run waited half a minute on average and a whole one at worst. Hermes loads the scheduler named by
``cron.provider`` in ``config.yaml`` from ``$HERMES_HOME/plugins/<name>/`` (``plugins/cron_providers``, both
servers); the provider written here is that same built-in ticker class with ``interval=1``. Hermes' own tick
still decides what is due and runs it, and schedules keep their meaning (a job due in an hour runs in an
hour): only the wait for the next tick shrinks.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

NAME = "hn_test_fast_ticker"
INTERVAL_S = 1

_PROVIDER = f'''"""Written by the hermes-notebook tests (tests/fast_cron.py): the built-in cron ticker, every
{INTERVAL_S} s."""
from cron.scheduler_provider import InProcessCronScheduler


class FastTicker(InProcessCronScheduler):
    @property
    def name(self):
        return "{NAME}"

    def start(self, stop_event, **kwargs):
        kwargs["interval"] = {INTERVAL_S}
        return super().start(stop_event, **kwargs)
'''


def install(home: Path) -> dict[str, Any]:
    """Write the provider into ``home`` (a ``HERMES_HOME``); returns the ``config.yaml`` overrides that select
    it."""
    plugin = home / "plugins" / NAME
    plugin.mkdir(parents=True, exist_ok=True)
    (plugin / "__init__.py").write_text(_PROVIDER)
    return {"cron": {"provider": NAME}}
