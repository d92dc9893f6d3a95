"""A reproducibility check's report: one line per code cell, readable in the notebook and exportable.

Everything in it comes from the notebook (sources, outputs, tracebacks) and is untrusted: the HTML form is
escaped text in the inert container (no markup of the notebook's is ever rendered), the text form shows
control characters instead of obeying them, the Markdown form puts notebook text in fences and inline code.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..inert import escape_html, html_block, markdown_code, markdown_fence, terminal_safe
from .compare import STATUSES, CellCheck

__all__ = ["ReproReport"]

#: Cells read top-down and left-aligned, however tall a diff makes a row.
_TOP = 'style="text-align: left; vertical-align: top"'
_MARK = {"same": "✓", "changed": "≠", "error": "✗", "not reached": "·"}


def _first_line(source: str, width: int = 60) -> str:
    line = next((text.strip() for text in source.splitlines() if text.strip()), "")
    return line if len(line) <= width else line[: width - 1] + "…"


@dataclass(frozen=True)
class ReproReport:
    """What ``hermes.reproduce(path)`` found: ``cells`` (a :class:`CellCheck` per code cell, in order),
    the notebook's ``path``, the ``kernel`` it ran in and how long the run took (``seconds``)."""

    path: str
    kernel: str
    seconds: float
    cells: tuple[CellCheck, ...]

    @property
    def reproduces(self) -> bool:
        """Did every code cell give its saved outputs again?"""
        return all(cell.status == "same" for cell in self.cells)

    @property
    def counts(self) -> dict[str, int]:
        """How many cells are same, changed, error, not reached (every status named, zeros included)."""
        counted = Counter(cell.status for cell in self.cells)
        return {status: counted[status] for status in STATUSES}

    def cells_with(self, status: str) -> list[CellCheck]:
        """The cells of one status (``"changed"``, ...)."""
        return [cell for cell in self.cells if cell.status == status]

    def summary(self) -> str:
        """One line: the verdict and the counts."""
        verdict = "reproduces" if self.reproduces else "does not reproduce"
        counts = ", ".join(f"{n} {status}" for status, n in self.counts.items() if n)
        return f"{Path(self.path).name} {verdict}: {counts or 'no code cells'} ({self.seconds:.1f} s)"

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able data: the notebook, the counts and every cell's verdict."""
        return {
            "path": self.path,
            "kernel": self.kernel,
            "seconds": round(self.seconds, 3),
            "reproduces": self.reproduces,
            "counts": self.counts,
            "cells": [cell.to_dict() for cell in self.cells],
        }

    def to_json(self) -> str:
        """:meth:`to_dict` as JSON text."""
        return json.dumps(self.to_dict(), indent=1, ensure_ascii=False)

    def to_markdown(self) -> str:
        """A Markdown report (a saved file, an issue, a message): notebook text fenced, never markup."""
        lines = [f"# Reproducibility: {markdown_code(Path(self.path).name)}", "", self.summary(), ""]
        for cell in self.cells:
            lines.append(f"- cell {cell.number} ({cell.status}): {markdown_code(_first_line(cell.source))}")
        for cell in self.cells:
            details = _details(cell)
            if details:
                lines += ["", f"## Cell {cell.number}: {cell.status}", "", markdown_fence(details)]
        return "\n".join(lines) + "\n"

    def __str__(self) -> str:
        lines = [self.summary()]
        for cell in self.cells:
            lines.append(
                f"  {_MARK[cell.status]} cell {cell.number} {cell.status}: {_first_line(cell.source)}"
            )
            lines += [f"      {line}" for line in _details(cell).splitlines()]
        return terminal_safe("\n".join(lines))

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(str(self))

    def _repr_html_(self) -> str:
        rows = "".join(_row_html(cell) for cell in self.cells)
        return html_block(
            f"<p><b>{escape_html(self.summary())}</b></p>"
            f"<table><thead><tr><th {_TOP}>cell</th><th {_TOP}>status</th><th {_TOP}>source</th></tr></thead>"
            f"<tbody>{rows}</tbody></table>",
            extra_class="hermes-reproduce",
        )


def _details(cell: CellCheck) -> str:
    """What a reader needs beyond the status: the error and its traceback, or the diff."""
    if cell.status == "error":
        return "\n".join(cell.traceback[-12:]) or cell.error
    return cell.diff if cell.status == "changed" else ""


def _row_html(cell: CellCheck) -> str:
    details = _details(cell)
    more = (
        f"<details><summary>{'traceback' if cell.status == 'error' else 'diff'}</summary>"
        f'<pre style="overflow-x: auto; max-width: 100%">{escape_html(details)}</pre></details>'
        if details
        else ""
    )
    error = f"<div>{escape_html(cell.error)}</div>" if cell.error else ""
    return (
        f"<tr><td {_TOP}>{cell.number}</td>"
        f'<td style="text-align: left; vertical-align: top; white-space: nowrap">'
        f"{escape_html(_MARK[cell.status])} {escape_html(cell.status)}</td>"
        f"<td {_TOP}><code>{escape_html(_first_line(cell.source))}</code>{error}{more}</td></tr>"
    )
