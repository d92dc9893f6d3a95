"""What a preview's run changed, name by name: created, changed in place, rebound, deleted, or not checked.

Runs in the copy (its time, never the kernel's): the namespace is fingerprinted before and after the run. An
object that is still the same object is compared by its structure (type, shape, columns: always) and by a
digest of its pickled bytes (numpy and pandas buffers read where they lie, out-of-band, never copied),
within :data:`CHECK_BYTES` per preview, the names the code mentions first. An object over that budget, or one
that does not pickle, is "not checked", never "unchanged": the table says only what was seen.
"""

from __future__ import annotations

import ast
import pickle
import sys
import types
import zlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ..reading import user_variables

__all__ = ["CHANGES", "CHECK_BYTES", "Fingerprint", "VariableChange", "compare", "fingerprint", "names_in"]

#: Bytes digested per preview at most (the rest is "not checked").
CHECK_BYTES = 64 * 1024 * 1024
#: The kinds of change, in the order the table lists them.
CHANGES = ("created", "changed in place", "rebound", "deleted", "not checked")


@dataclass(frozen=True)
class VariableChange:
    """One row of the variables table."""

    name: str
    change: str
    type: str
    shape: str

    def to_dict(self) -> dict[str, str]:
        return {"name": self.name, "change": self.change, "type": self.type, "shape": self.shape}


@dataclass(frozen=True)
class Fingerprint:
    """One name's object as it was (held, so its id stays its own), its structure and its digest (None: not
    checked)."""

    value: Any
    structure: tuple[Any, ...]
    digest: bytes | None
    #: Why there is no digest: "over budget" or "does not pickle" ("" when there is one).
    unchecked: str = ""


def names_in(source: str) -> list[str]:
    """The names ``source`` mentions, in order (empty when it does not parse: the copy reports that)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    seen: dict[str, None] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            seen.setdefault(node.id, None)
    return list(seen)


def type_name(value: Any) -> str:
    """``DataFrame``, ``ndarray``, ``list``."""
    return type(value).__name__


def shape_of(value: Any) -> str:
    """``3x4`` for an array or frame, ``len 5`` for a collection, else nothing (the copy may run its code)."""
    shape = getattr(value, "shape", None)
    if isinstance(shape, tuple) and all(isinstance(n, int) for n in shape):
        return "x".join(str(n) for n in shape)
    if isinstance(value, (list, tuple, dict, set, frozenset, str, bytes, bytearray)):
        return f"len {len(value)}"
    return ""


def _structure(value: Any) -> tuple[Any, ...]:
    columns = getattr(value, "columns", None)
    names: tuple[str, ...] = ()
    if columns is not None and not callable(columns):
        try:
            names = tuple(str(c) for c in list(columns)[:1000])
        except Exception:
            names = ()
    dtypes = getattr(value, "dtype", None)
    return (type(value), shape_of(value), names, str(dtypes) if dtypes is not None else "")


def _size(value: Any) -> int:
    """Bytes a digest would read, estimated without running much of the object's code."""
    usage = getattr(value, "memory_usage", None)
    if callable(usage) and hasattr(value, "columns"):
        try:
            return int(usage(index=True, deep=False).sum())
        except Exception:
            return sys.maxsize
    nbytes = getattr(value, "nbytes", None)
    if isinstance(nbytes, int):
        return nbytes
    if isinstance(value, (list, tuple, dict, set, frozenset)):
        return sys.getsizeof(value) + 64 * len(value)
    return sys.getsizeof(value)


def _digest(value: Any) -> bytes | None:
    """A CRC-32 chained over the pickle stream and its buffers, with their sizes: it tells an accidental
    change from none (a preview is not an adversary of itself) at 3x the speed of a cryptographic hash."""
    state = [0, 0]

    def add(data: Any) -> None:
        state[0] = zlib.crc32(data, state[0])
        state[1] += len(data)

    def buffer(view: pickle.PickleBuffer) -> bool:
        try:
            add(view.raw())
        except BufferError:  # not contiguous: pickled in the stream instead
            return True
        return False

    try:
        add(pickle.dumps(value, protocol=5, buffer_callback=buffer))
    except Exception:  # does not pickle: not checked
        return None
    return f"{state[0]:08x}:{state[1]}".encode()


def _code_only(value: Any) -> bool:
    """Functions and classes: compared by identity only (their pickle is their name)."""
    return isinstance(value, (types.FunctionType, types.BuiltinFunctionType, type, types.MethodType))


def fingerprint(
    namespace: Mapping[str, Any],
    hidden: Mapping[str, Any] | None = None,
    first: Iterable[str] = (),
    budget: int = CHECK_BYTES,
) -> dict[str, Fingerprint]:
    """Every user variable's fingerprint; digests within ``budget`` bytes, the names in ``first`` first."""
    variables = user_variables(namespace, hidden)
    order = [n for n in first if n in variables] + [n for n in variables if n not in set(first)]
    prints: dict[str, Fingerprint] = {}
    for name in order:
        value = variables[name]
        structure = _structure(value)
        digest: bytes | None = b""
        unchecked = ""
        if not _code_only(value):
            size = _size(value)
            digest, unchecked = None, "over budget"
            if size <= budget:
                budget -= size
                digest = _digest(value)
                unchecked = "" if digest is not None else "does not pickle"
        prints[name] = Fingerprint(value, structure, digest, unchecked)
    return prints


def compare(
    before: Mapping[str, Fingerprint], after: Mapping[str, Fingerprint], mentioned: Iterable[str] = ()
) -> list[VariableChange]:
    """The rows of the table: every name whose change was seen, and every name that could not be checked:
    over the budget, or (when the code names it) an object that does not pickle (a thread, a lock, a
    connection: listing every one the code never names would bury the rows that matter)."""
    named = set(mentioned)
    rows = []
    for name in [*before, *(n for n in after if n not in before)]:
        old, new = before.get(name), after.get(name)
        shown = new or old
        assert shown is not None
        if new is None:
            change = "deleted"
        elif old is None:
            change = "created"
        elif new.value is not old.value:
            change = "rebound"
        elif new.structure != old.structure:
            change = "changed in place"
        elif new.digest is None or old.digest is None:
            if "over budget" not in (new.unchecked, old.unchecked) and name not in named:
                continue
            change = "not checked"
        elif new.digest != old.digest:
            change = "changed in place"
        else:
            continue
        rows.append(VariableChange(name, change, type_name(shown.value), shape_of(shown.value)))
    rows.sort(key=lambda row: CHANGES.index(row.change))
    return rows
