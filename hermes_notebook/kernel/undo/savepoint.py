"""Undo of an approved run's variables: saved before the run, offered after it only where it can be honest.

Before the run (on the main thread, as the run itself): every user variable the code names is pickled, within
:data:`UNDO_BYTES` in all, and the whole namespace is fingerprinted (:mod:`..preview.variables`: identity and
structure always, digests within their budget). After it: what changed is compared; Undo is offered only when
every name the run changed, rebound or deleted was saved; a name the code names that could not be saved (an
open file, a connection, anything that does not pickle, or over the budget) withholds it, and the reason says
which and why. Undo itself first checks that the names are still as the run left them (another cell since
would be overwritten: then it is refused), then restores the saved values and deletes the names the run
created. Files, network and databases are not undone, and it says so.
"""

from __future__ import annotations

import pickle
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..preview.variables import Fingerprint, compare, fingerprint, names_in
from ..reading import user_variables

__all__ = ["NOT_UNDONE", "UNDO_BYTES", "Savepoint", "UndoOffer"]

#: Bytes of pickled variables one run's savepoint keeps at most.
UNDO_BYTES = 256 * 1024 * 1024
#: What every undo says.
NOT_UNDONE = "Files, network, databases and other effects of the run were not undone."


def _why_not(value: Any, exc: BaseException) -> str:
    kind = type(value).__name__
    if hasattr(value, "fileno") and hasattr(value, "read"):
        return f"an open file ({kind}) cannot be saved"
    return f"a {kind} does not pickle ({type(exc).__name__})"


@dataclass
class Savepoint:
    """What a run's code may touch, saved before it runs."""

    saved: dict[str, bytes] = field(default_factory=dict)
    refused: dict[str, str] = field(default_factory=dict)
    named: list[str] = field(default_factory=list)
    before: dict[str, Fingerprint] = field(default_factory=dict)
    hidden: Mapping[str, Any] | None = None
    #: The namespace as :meth:`after` last saw it (a run of cells: after its last cell so far).
    last: dict[str, Fingerprint] = field(default_factory=dict)
    #: Names the code does not name that another cell changed between a run's cells: not the run's to undo.
    foreign: set[str] = field(default_factory=set)

    @classmethod
    def take(
        cls,
        namespace: Mapping[str, Any],
        source: str | Sequence[str],
        hidden: Mapping[str, Any] | None = None,
        budget: int = UNDO_BYTES,
    ) -> Savepoint:
        """Save the variables ``source`` names (call it on the main thread, right before the run); several
        sources (the cells of one run) are read one by one, so one that does not parse hides no other's
        names."""
        sources = [source] if isinstance(source, str) else list(source)
        named = dict.fromkeys(name for text in sources for name in names_in(text))
        point = cls(named=list(named), hidden=hidden)
        variables = user_variables(namespace, hidden)
        for name in point.named:
            if name not in variables:
                continue
            value = variables[name]
            try:
                data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
            except Exception as exc:  # the user's object may refuse in any way
                point.refused[name] = _why_not(value, exc)
                continue
            if len(data) > budget:
                point.refused[name] = f"over the undo budget ({len(data) / 1024**2:.0f} MB)"
                continue
            budget -= len(data)
            point.saved[name] = data
        point.before = fingerprint(namespace, hidden, point.named)
        return point

    def after(self, namespace: Mapping[str, Any]) -> UndoOffer:
        """What the run changed, and whether Undo can be offered for it (every changed name saved)."""
        after = self.last = fingerprint(namespace, self.hidden, self.named)
        restore, created, blocked = [], [], []
        for row in compare(self.before, after, self.named):
            if row.name in self.foreign:
                continue
            if row.change == "created":
                created.append(row.name)
            elif row.name in self.saved:  # restoring a saved value is exact, changed or not
                restore.append(row.name)
            elif row.name in self.refused:
                blocked.append(f"{row.name}: {self.refused[row.name]}")
            elif row.change != "not checked":  # changed through another name: it was not saved
                blocked.append(f"{row.name}: it changed but was not saved (the code does not name it)")
        left = {name: after[name] for name in [*restore, *created] if name in after}
        return UndoOffer(self, restore, created, left, blocked)

    def touched_since(self, namespace: Mapping[str, Any]) -> list[str]:
        """The names the code names that changed since :meth:`after` last looked (another cell ran between
        a run's cells), in order; the other names that changed are that cell's, left out of the offer
        (:attr:`foreign`)."""
        now = fingerprint(namespace, self.hidden, self.named)
        named = set(self.named)
        changed = [row.name for row in compare(self.last, now, self.named) if row.change != "not checked"]
        self.foreign.update(name for name in changed if name not in named)
        return [name for name in changed if name in named]


@dataclass
class UndoOffer:
    """Undo of one run: offered when ``reason`` is empty."""

    point: Savepoint
    changed: list[str]
    created: list[str]
    left: dict[str, Fingerprint]
    blocked: list[str]

    @property
    def offered(self) -> bool:
        return not self.blocked

    @property
    def reason(self) -> str:
        """Why Undo is not offered ("" when it is)."""
        if not self.blocked:
            return ""
        return "Undo is not offered: " + "; ".join(self.blocked) + "."

    def undo(self, namespace: dict[str, Any]) -> str:
        """Restore the saved values and delete the created names; refused (nothing changed) when another cell
        changed them since, or when Undo was not offered."""
        if not self.offered:
            return self.reason
        names = [*self.changed, *self.created]
        now = fingerprint({n: namespace[n] for n in names if n in namespace}, None, names)
        for name in names:
            left, there = self.left.get(name), now.get(name)
            if (left is None) != (there is None) or (
                left is not None
                and there is not None
                and (
                    left.value is not there.value
                    or left.structure != there.structure
                    or left.digest != there.digest
                )
            ):
                return (
                    f"Undo refused: {name} changed after the run (another cell ran on it); nothing was "
                    "restored."
                )
        for name in self.changed:
            if name in self.point.saved:
                namespace[name] = pickle.loads(self.point.saved[name])
        for name in self.created:
            namespace.pop(name, None)
        done = [
            f"restored {', '.join(self.changed)}" if self.changed else "",
            f"deleted {', '.join(self.created)}" if self.created else "",
        ]
        said = "; ".join(part for part in done if part) or "nothing to undo"
        return f"Undone: {said}. {NOT_UNDONE}"
