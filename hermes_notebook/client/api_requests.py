"""What a request to the API Server must be, checked before it is sent (docs/protocol/api-server.md).

Why here and not in the server's answer: ids go into URL paths, and a malformed input or history makes the
server answer 500 (§3) with nothing the user can act on; each check names what is wrong in one line.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from ..errors import HermesUsageError

__all__ = ["IDEMPOTENCY_KEY", "ID_PATTERN", "check_history", "check_id", "check_run_input", "drop_none"]

# What newer servers accept as an Idempotency-Key (else 400 invalid_idempotency_key).
IDEMPOTENCY_KEY = re.compile(r"[\x21-\x7e]{1,255}")

ID_PATTERN = re.compile(r"^[A-Za-z0-9_.:-]{1,256}$")


def check_id(value: object, what: str) -> str:
    """Ids go into URL paths: refuse anything that could change the path before sending."""
    if not isinstance(value, str) or not ID_PATTERN.fullmatch(value):
        raise HermesUsageError(f"{what} must be a non-empty id of letters, digits and _.:- ; got {value!r}")
    return value


def drop_none(**values: Any) -> dict[str, Any]:
    return {k: v for k, v in values.items() if v is not None}


def check_run_input(value: object) -> None:
    """The server needs a truthy input, and 500s on an array whose last item is a bare string (§3)."""
    if isinstance(value, str):
        if not value:
            raise HermesUsageError("input must not be empty")
        return
    if not isinstance(value, Sequence) or not value:
        raise HermesUsageError(
            "input must be a non-empty string or a non-empty list of {role, content} items"
        )
    if not isinstance(value[-1], Mapping):
        raise HermesUsageError("the last input item must be a {role, content} object, not a bare value")


def check_history(items: object, what: str) -> None:
    """Each item needs ``role`` and ``content`` (§3 conversation_history, §5 messages)."""
    if isinstance(items, (str, bytes)) or not isinstance(items, Sequence):
        raise HermesUsageError(f"{what} must be a list of {{role, content}} objects")
    for i, item in enumerate(items):
        if not isinstance(item, Mapping) or "role" not in item or "content" not in item:
            raise HermesUsageError(f"{what}[{i}] must have 'role' and 'content'")
