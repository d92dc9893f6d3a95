"""A JSON helper shared by the API Server client modules."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def raw(data: object) -> dict[str, Any]:
    """A shallow copy of a decoded JSON object, or ``{}`` for anything else (the ``raw`` field of results)."""
    return dict(data) if isinstance(data, Mapping) else {}
