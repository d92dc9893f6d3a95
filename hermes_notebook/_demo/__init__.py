"""Offline demo and test support: a scripted stand-in model and a launcher for a local, real Hermes.

Nothing here talks to a real LLM. :mod:`.scripted_model` is a tiny OpenAI-compatible server whose replies
are scripted by keywords in the prompt; :mod:`.local_hermes` starts the real Hermes API Server and
Dashboard on loopback ports, pointed at that scripted model.

The names below are imported lazily, so ``python -m hermes_notebook._demo.scripted_model`` runs cleanly.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["HermesStartError", "LocalHermes", "Reply", "ScriptedModel", "ToolCall"]

_WHERE = {
    "HermesStartError": ".local_hermes",
    "LocalHermes": ".local_hermes",
    "Reply": ".scripted_model",
    "ScriptedModel": ".scripted_model",
    "ToolCall": ".scripted_model",
}


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        return getattr(importlib.import_module(_WHERE[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
