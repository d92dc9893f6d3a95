"""The per-user launcher: a Jupyter server extension that starts the user's own Hermes with their server.

Enabled in the single-user image (``jupyter server extension enable hermes_notebook.launch``, or
``c.ServerApp.jpserver_extensions = {"hermes_notebook.launch": True}``), it starts
:class:`~.user_hermes.UserHermes` while the server starts, before it serves anything, and puts the
connection settings in the server's own environment, which every kernel it starts inherits:
``hermes_notebook.connect()`` in any notebook of that user reaches that user's Hermes, with a Dashboard
token and API key made for this spawn. It stops Hermes (by PID) when the server stops; a server killed
outright takes Hermes with it (``PR_SET_PDEATHSIG``).

Why a server extension and not a ``jupyter-server-proxy`` entry (such as the ``jupyter-hermes-proxy``
package): a proxy entry starts its process when a browser first opens its URL, on a port it picks and
keeps to itself, so kernels could not count on Hermes running nor learn where it is or its token
(docs/teams.md has the whole comparison). Nothing of Hermes is exposed through the server: only the
user's kernels talk to it, on loopback.

Settings (``jupyter_server_config.py``): ``c.HermesLauncher.hermes_bin``, ``hermes_home``,
``api_server``, ``startup_timeout``, ``pass_hub_token``.
"""

from __future__ import annotations

import os

from jupyter_server.extension.application import ExtensionApp
from traitlets import Bool, Float, Unicode

from .processes import HermesStartError
from .user_hermes import UserHermes

__all__ = ["HermesLauncher"]


class HermesLauncher(ExtensionApp):
    """Starts the user's own Hermes with the single-user server and tells the kernels where it is."""

    name = "hermes_notebook.launch"
    load_other_extensions = True

    hermes_bin = Unicode("", help="The hermes executable (default: $HERMES_BIN, else hermes on PATH).").tag(
        config=True
    )
    hermes_home = Unicode("", help="The user's HERMES_HOME (default: $HERMES_HOME, else ~/.hermes).").tag(
        config=True
    )
    api_server = Bool(True, help="Also run the API Server (runs, cron jobs); the Dashboard always runs.").tag(
        config=True
    )
    startup_timeout = Float(60.0, help="Seconds each Hermes server has to answer.").tag(config=True)
    pass_hub_token = Bool(
        False,
        help="Give Hermes the user's hub token (JUPYTERHUB_API_TOKEN), for kernel tool servers it reaches "
        "through the hub (HERMES_TOOLS_AUTHORIZATION='Bearer ${JUPYTERHUB_API_TOKEN}'). Off: the agent's "
        "shell never holds a credential for the hub.",
    ).tag(config=True)

    hermes: UserHermes | None = None

    def initialize_settings(self) -> None:
        """Start Hermes (blocking: when the server answers, so does Hermes) and export its settings.

        A Hermes that cannot start stops the server (the hub reports a failed spawn, with this log): a server
        left running without it would leave its kernels on the loopback defaults, which may be someone
        else's Hermes on a shared machine."""
        try:
            hermes = UserHermes(
                hermes_bin=self.hermes_bin or None,
                home=self.hermes_home or None,
                api=self.api_server,
                hub_token=self.pass_hub_token,
                startup_timeout=self.startup_timeout,
            )
            self.hermes = hermes.start()
        except HermesStartError as exc:
            self.log.critical("this user's Hermes did not start, so neither does the server: %s", exc)
            raise SystemExit(1) from None
        os.environ.update(hermes.client_env())  # the kernels this server starts inherit them
        self.log.info(
            "Hermes for this user: Dashboard %s, API Server %s (%.1f s to start; PIDs %s)",
            hermes.dashboard_url,
            hermes.api_url if self.api_server else "not started",
            hermes.startup_seconds or 0.0,
            hermes.pids,
        )

    async def stop_extension(self) -> None:
        """Stop Hermes with the server (its processes, by PID)."""
        if self.hermes is not None:
            hermes, self.hermes = self.hermes, None
            self.log.info("stopping this user's Hermes (PIDs %s)", hermes.pids)
            hermes.stop()
