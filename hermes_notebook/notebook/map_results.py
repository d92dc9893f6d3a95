"""What ``hermes.map`` gives back: each prompt's outcome in input order (:class:`MapResult`), a prompt
without a finished reply kept as a :class:`MapFailure` beside the others; a pandas DataFrame for a Series.

Why a failure is a value and not an exception: the 40th prompt failing must never lose the 39 finished
replies, and ``resume=`` needs to know which prompts to run again (every one that is not a finished reply).
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal

from ..formatting import table_cell
from ..inert import escape_html, html_block, html_table, terminal_safe
from ..scrub import scrub
from .results import Reply

__all__ = ["FAILED", "NOT_RUN", "STOPPED", "MapFailure", "MapResult", "finished", "is_series", "summary"]

FAILED: Final = "failed"
STOPPED: Final = "stopped"
NOT_RUN: Final = "not run"
#: Rows a displayed result shows (the rest is counted): a 10,000-prompt result stays a small output.
SHOWN_ROWS = 20
FRAME_COLUMNS = ("prompt", "text", "status", "error", "session", "result")


@dataclass(eq=False)
class MapFailure:
    """A prompt of ``hermes.map`` with no finished reply: ``status`` says why ("failed": ``error`` holds the
    exception or the turn's error; "stopped": Stop or an interrupt ended it; "not run": it never started),
    ``reply`` is what its turn produced, if it produced anything. False in a boolean test."""

    prompt: str
    status: Literal["failed", "stopped", "not run"]
    error: BaseException | str | None = None
    reply: Reply | None = None

    @property
    def message(self) -> str:
        """One line: what went wrong (the exception's text, the turn's error, or the status)."""
        if isinstance(self.error, BaseException):
            return f"{type(self.error).__name__}: {self.error}"
        return str(self.error or self.status)

    def __bool__(self) -> bool:
        return False

    def __repr__(self) -> str:
        return terminal_safe(f"<MapFailure {self.status}: {self.message[:80]!r}>")


def finished(item: object) -> bool:
    """True for a reply that completed: what ``resume=`` keeps."""
    return isinstance(item, Reply) and item.ok


def is_series(value: object) -> bool:
    """A pandas Series, recognised by its type's module and name (pandas is never imported for it)."""
    kind = type(value)
    return kind.__name__ == "Series" and kind.__module__.partition(".")[0] == "pandas"


class MapResult(list):  # type: ignore[type-arg]
    """Each prompt's outcome, in input order: a :class:`Reply` where it finished, a :class:`MapFailure`
    where it did not. ``replies`` / ``failures`` pick them out; ``hermes.map(prompts, resume=result)`` runs
    only the failures. Shown as a summary and a short table."""

    def __init__(
        self,
        items: Iterable[Reply | MapFailure],
        *,
        secrets: Sequence[object] = (),
        waits: Sequence[float] = (),
    ) -> None:
        super().__init__(items)
        self._secrets = tuple(secrets)
        #: Seconds waited after each "too many runs" (HTTP 429) answer, as its ``Retry-After`` asked.
        self.waits: list[float] = list(waits)

    @property
    def replies(self) -> list[Reply]:
        """The finished replies (in input order)."""
        return [item for item in self if finished(item)]

    @property
    def failures(self) -> list[MapFailure]:
        """The prompts without a finished reply (in input order)."""
        return [item for item in self if not finished(item)]

    @property
    def texts(self) -> list[str | None]:
        """Each prompt's answer text, None where it did not finish."""
        return [item.text if finished(item) else None for item in self]

    @property
    def ok(self) -> bool:
        """True when every prompt finished."""
        return all(finished(item) for item in self)

    def counts(self) -> dict[str, int]:
        """How many prompts ended each way: ``done``, ``failed``, ``stopped``, ``not run``."""
        out = {"done": 0, FAILED: 0, STOPPED: 0, NOT_RUN: 0}
        for item in self:
            out["done" if finished(item) else item.status] += 1
        return out

    def rows(self) -> list[dict[str, Any]]:
        """One dict per prompt: ``prompt``, ``text``, ``status``, ``error``, ``session``, ``result``."""
        return [_row(item) for item in self]

    def to_frame(self, index: Any = None) -> Any:
        """A pandas DataFrame with a row per prompt (:meth:`rows`; ``result`` holds the Reply or failure)."""
        pandas: Any = importlib.import_module("pandas")  # the caller's Series came from it
        return pandas.DataFrame(self.rows(), columns=list(FRAME_COLUMNS), index=index)

    def __repr__(self) -> str:
        return f"<MapResult {summary(self.counts(), len(self))}>"

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(repr(self))

    def _repr_html_(self) -> str:
        shown = [
            {
                "#": str(i),
                "prompt": scrub(_cut(row["prompt"]), self._secrets),
                "status": row["status"],
                "answer or error": scrub(_cut(row["text"] or row["error"] or ""), self._secrets),
            }
            for i, row in enumerate(self.rows()[:SHOWN_ROWS])
        ]
        more = len(self) - len(shown)
        tail = f"<p>… and {more:,} more</p>" if more > 0 else ""
        table = html_table(("#", "prompt", "status", "answer or error"), shown)
        return html_block(f"<p>{escape_html(summary(self.counts(), len(self)))}</p>{table}{tail}")


def _row(item: Reply | MapFailure) -> dict[str, Any]:
    if finished(item):
        assert isinstance(item, Reply)
        return {
            "prompt": item.prompt,
            "text": item.text,
            "status": "done",
            "error": None,
            "session": item.session_id,
            "result": item,
        }
    assert isinstance(item, MapFailure)
    session = item.reply.session_id if item.reply is not None else None
    return {
        "prompt": item.prompt,
        "text": None,
        "status": item.status,
        "error": item.message,
        "session": session,
        "result": item,
    }


def _cut(text: str) -> str:
    return table_cell("", " ".join(str(text).split()))


def summary(counts: dict[str, int], total: int) -> str:
    """``"39 done, 1 failed of 40"`` (stopped and not-run prompts named only when there are some)."""
    parts = [f"{counts.get('done', 0):,} done", f"{counts.get(FAILED, 0):,} failed"]
    parts += [f"{counts[k]:,} {k}" for k in (STOPPED, NOT_RUN) if counts.get(k)]
    return f"{', '.join(parts)} of {total:,}"
