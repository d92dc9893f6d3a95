"""Starting Hermes for a user: the real servers on loopback with fresh credentials (:mod:`.user_hermes`), and
the Jupyter server extension that does so with each single-user server (:mod:`.extension`,
``jupyter server extension enable hermes_notebook.launch``). Server-side only: nothing in a kernel imports
it (it needs ``jupyter_server``, which JupyterLab brings).
"""

from __future__ import annotations

from typing import Any

from .extension import HermesLauncher

__all__ = ["HermesLauncher", "_jupyter_server_extension_points"]


def _jupyter_server_extension_points() -> list[dict[str, Any]]:
    """Jupyter's hook: the :class:`~.extension.HermesLauncher` app (``hermes_notebook.launch``)."""
    return [{"module": "hermes_notebook.launch", "app": HermesLauncher}]
