"""Read before write: a short version of each notebook cell, and what the agent last saw of each.

Why: an agent's edit is based on the cell it read. If the user typed in that cell since, another change was
kept there, or cells moved so its index now names another cell, replacing the whole source would throw the
user's lines away. So every read of a cell through the cell tools (the outline, a proposal's result, a
refusal) carries the cell's version (:func:`cell_version`, a hash of its source), :class:`SeenCells` remembers
per session what the agent was shown, and an ``edit_cell`` / ``delete_cell`` sends the front end what it
expects to find (:meth:`SeenCells.expectation`): the page refuses a cell that differs before anything is
shown, with the cell as it is now. A cell the agent never saw is proposed against the cell as it is now.

The version is FNV-1a (32 bits) over the source's UTF-16 code units, the twin of ``cellVersion`` in
``js/src/notebook/versions.ts`` (tests/fixtures/cell_versions.json pins both): short enough to read in an
outline, and the page computes it over the whole source, which the outline does not carry.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["SEEN", "Expectation", "SeenCells", "cell_version", "parse_version"]

_FNV_OFFSET = 0x811C9DC5
_FNV_PRIME = 0x01000193
_VERSION = re.compile(r"v?([0-9a-f]{8})")
#: Sessions whose reads are remembered at most (the oldest is forgotten first).
MAX_SESSIONS = 64
#: Cells remembered per session at most.
MAX_CELLS = 2_000


def cell_version(source: str) -> str:
    """The cell's version: 8 hex digits of FNV-1a over its UTF-16 code units (``cellVersion`` in TS)."""
    value = _FNV_OFFSET
    data = source.encode("utf-16-le", "surrogatepass")
    for i in range(0, len(data), 2):
        value ^= data[i] | (data[i + 1] << 8)
        value = (value * _FNV_PRIME) & 0xFFFFFFFF
    return f"{value:08x}"


def parse_version(value: object) -> str | None:
    """A version the agent gave (``1a2b3c4d`` or ``v1a2b3c4d``), normalised; None when it is not one."""
    if not isinstance(value, str):
        return None
    match = _VERSION.fullmatch(value.strip().lower())
    return match.group(1) if match else None


@dataclass(frozen=True)
class Expectation:
    """What an edit or deletion expects at its index: that cell (by id, when known) at one of these versions
    (empty: any version)."""

    cell: str | None = None
    versions: tuple[str, ...] = ()

    def wire(self) -> dict[str, Any] | None:
        """The ``expect`` field of a ``propose`` request (None: the agent never saw the cell)."""
        if self.cell is None and not self.versions:
            return None
        return {"cell": self.cell, "versions": list(self.versions)}


@dataclass
class _Session:
    at_index: dict[int, str] = field(default_factory=dict)  # index -> the cell id the agent saw there
    versions: dict[str, set[str]] = field(default_factory=dict)  # cell id -> versions it saw or wrote


class SeenCells:
    """What each session's agent was shown of the notebook's cells (see the module docstring); thread-safe.
    One per process: :data:`SEEN`."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._sessions: dict[str, _Session] = {}

    def outline(self, session: str, cells: Iterable[Mapping[str, Any]]) -> None:
        """The agent read the whole outline: every index now names the cell listed there."""
        with self._lock:
            record = self._session(session)
            record.at_index.clear()
            for index, cell in enumerate(cells):
                cell_id, version = cell.get("id"), cell.get("version")
                if isinstance(cell_id, str) and isinstance(version, str) and index < MAX_CELLS:
                    record.at_index[index] = cell_id
                    record.versions[cell_id] = {version}

    def saw(self, session: str, index: int, cell_id: str, *versions: str) -> None:
        """The agent was shown cell ``cell_id`` at ``index`` at these versions (a read, or a refusal's current
        source); any of them is what it may edit from."""
        with self._lock:
            record = self._session(session)
            for other, seen in list(record.at_index.items()):
                if seen == cell_id and other != index:
                    del record.at_index[other]
            record.at_index[index] = cell_id
            record.versions[cell_id] = set(versions)

    def wrote(self, session: str, cell_id: str, version: str) -> None:
        """The agent proposed ``version`` of the cell: were it kept, the cell is what the agent wrote."""
        with self._lock:
            self._session(session).versions.setdefault(cell_id, set()).add(version)

    def expectation(self, session: str, index: int, version: str | None = None) -> Expectation:
        """What an edit or deletion of ``index`` expects: the cell the agent saw there at a version it saw
        (``version``, when the agent gave one, instead)."""
        with self._lock:
            record = self._sessions.get(session)
            cell = record.at_index.get(index) if record is not None else None
            seen = record.versions.get(cell, set()) if record is not None and cell is not None else set()
        if version is not None:
            return Expectation(cell, (version,))
        return Expectation(cell, tuple(sorted(seen)))

    def forget(self, session: str) -> None:
        """The session ended: nothing of it is remembered."""
        with self._lock:
            self._sessions.pop(session, None)

    def _session(self, session: str) -> _Session:
        record = self._sessions.pop(session, None) or _Session()
        self._sessions[session] = record  # newest last
        while len(self._sessions) > MAX_SESSIONS:
            self._sessions.pop(next(iter(self._sessions)))
        if len(record.versions) > MAX_CELLS:
            record.versions.clear()
        return record


#: The one record of this process.
SEEN = SeenCells()
