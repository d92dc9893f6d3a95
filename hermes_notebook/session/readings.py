"""What a conversation reads about a session, as plain data every face shows its own way: the models on offer
(:func:`model_rows`) and the usage of a session (:class:`UsageReading`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["UsageReading", "model_rows"]


def model_rows(options: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One row per model of a ``model.options`` answer (Dashboard or API Server), the current one marked."""
    current_model, current_provider = options.get("model") or "", options.get("provider") or ""
    rows: list[dict[str, Any]] = []
    for provider in options.get("providers") or ():
        if not isinstance(provider, Mapping):
            continue
        slug = str(provider.get("slug") or "")
        for model in provider.get("models") or ():
            if isinstance(model, str):
                current = model == current_model and (not current_provider or slug == current_provider)
                rows.append({"model": model, "provider": slug, "current": current})
    if current_model and not any(
        r["current"] for r in rows
    ):  # a switched-to model the provider does not list
        rows.insert(0, {"model": str(current_model), "provider": str(current_provider), "current": True})
    return rows


@dataclass(frozen=True)
class UsageReading:
    """A session's usage as the server reported it: ``usage`` (``session.usage``, or the last reply's), the
    context ``breakdown`` (None when not offered) and notes on what is missing and why."""

    session_id: str
    usage: Mapping[str, Any] | None
    breakdown: Mapping[str, Any] | None = None
    notes: tuple[str, ...] = field(default=())
