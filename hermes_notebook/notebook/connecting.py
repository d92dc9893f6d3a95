"""``hermes_notebook.connect()``: the settings (keyword arguments, ``HERMES_*`` variables, loopback defaults)
resolved to one :class:`~hermes_notebook.notebook.facade.Hermes` connection.
"""

from __future__ import annotations

from typing import Any

from ..settings import Settings
from .facade import Hermes

__all__ = ["connect"]


def connect(settings: Settings | None = None, *, check: bool = False, **kwargs: Any) -> Hermes:
    """A :class:`Hermes` for the servers ``settings``, keyword arguments (``api_url``, ``api_key``,
    ``dashboard_url``, ``dashboard_token``, ``profile``, timeouts), ``HERMES_*`` variables or loopback
    defaults name; contacted on first use unless ``check=True``. A bad key or profile name raises
    :class:`HermesUsageError` naming the setting."""
    settings = (
        Settings.resolve(**kwargs) if settings is None else settings.with_(**kwargs) if kwargs else settings
    )
    hermes = Hermes(settings)
    return hermes.check() if check else hermes
