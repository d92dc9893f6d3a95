"""A message store for a whole stream: change records applied as they come, appended text joined only when
read (a reply streamed in small batches stays O(n), not O(n^2)).

Why its own module: :mod:`.changes` is the contract (the dicts and :func:`~.changes.apply_changes`); this is
a view's store built on it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

from .changes import apply_changes, find_part

__all__ = ["MessageStore"]

#: A part's unjoined appends are joined into one chunk once this many have piled up (bounds the chunk count).
_TAIL_CHUNKS = 256


class _Pending:
    """Appends to one part not joined into its ``text`` yet: big joined blocks, then a short run of small
    chunks."""

    __slots__ = ("blocks", "tail")

    def __init__(self) -> None:
        self.blocks: list[str] = []
        self.tail: list[str] = []

    def add(self, text: str) -> None:
        self.tail.append(text)
        if len(self.tail) >= _TAIL_CHUNKS:  # joins only these chunks, never the text before them
            self.blocks.append("".join(self.tail))
            self.tail.clear()

    def joined(self) -> str:
        return "".join(self.blocks) + "".join(self.tail)


class MessageStore(Mapping[str, dict[str, Any]]):
    """``{message id: message dict}`` kept up to date by change records, for a store that lives for a whole
    stream.

    Why not :func:`apply_changes` per batch: it joins appended text onto the part's ``text`` at once, and
    joining copies the whole text, so a reply streamed in small batches costs O(n^2) (at 1 MB, ~200 us per
    append on our CI machine, all under a widget's lock). Here an ``append`` costs O(its own text): it is
    queued on the part, and the part's ``text`` is joined only when someone reads the message (``store[id]``,
    ``get``, ``values``) or another record edits it. :meth:`raw` reads a message without joining, for fields
    other than part text.
    """

    def __init__(self, messages: Iterable[dict[str, Any]] = ()) -> None:
        self._messages: dict[str, dict[str, Any]] = {m["id"]: m for m in messages}
        self._pending: dict[str, dict[str, _Pending]] = {}

    def apply(self, changes: Sequence[Mapping[str, Any]]) -> None:
        """Apply records in order, like :func:`apply_changes` (same errors for unknown ids and ops)."""
        for change in changes:
            if change["op"] != "append":
                target = change["message"]["id"] if change["op"] == "message" else change.get("message_id")
                self._join(str(target))
                apply_changes(self._messages, [change])
                continue
            mid, pid = change["message_id"], change["part_id"]
            by_part = self._pending.get(mid)
            pending = by_part.get(pid) if by_part is not None else None
            if pending is None:
                find_part(
                    self._messages[mid], pid
                )  # KeyError for an unknown message or part, as apply_changes
                pending = self._pending.setdefault(mid, {}).setdefault(pid, _Pending())
            pending.add(change["text"])

    def drop_oldest(self, keep: int, droppable: Callable[[dict[str, Any]], bool]) -> list[str]:
        """Forget the oldest messages while more than ``keep`` are held and the oldest is ``droppable``; their
        ids, oldest first."""
        dropped: list[str] = []
        while len(self._messages) > keep:
            oldest = next(iter(self._messages))
            if not droppable(self._messages[oldest]):
                break
            del self._messages[oldest]
            self._pending.pop(oldest, None)
            dropped.append(oldest)
        return dropped

    def raw(self, message_id: str) -> dict[str, Any]:
        """The message without joining pending appends: its parts' ``text`` may lag; every other field is
        current."""
        return self._messages[message_id]

    def _join(self, message_id: str) -> None:
        by_part = self._pending.pop(message_id, None)
        if not by_part:
            return
        message = self._messages[message_id]
        for pid, pending in by_part.items():
            part = find_part(message, pid)
            part["text"] += pending.joined()

    def __getitem__(self, message_id: str) -> dict[str, Any]:
        self._join(message_id)
        return self._messages[message_id]

    def __contains__(self, message_id: object) -> bool:
        return message_id in self._messages

    def __iter__(self) -> Iterator[str]:
        return iter(self._messages)

    def __len__(self) -> int:
        return len(self._messages)
