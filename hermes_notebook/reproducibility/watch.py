"""The scheduled check: run the reproducibility check and say something only when its verdict moved since the
last run.

Why a command of its own: a Hermes cron job created through the REST API (``hermes.jobs``) can only hold a
prompt for the agent; neither server's REST create takes a ``script`` or ``no_agent`` (0.19.0 and the newer
``/api/jobs``; the newer Dashboard's ``cron.manage add`` neither). So the job's prompt has the agent run
``python -m hermes_notebook.reproducibility.watch NOTEBOOK`` with its terminal tool and answer with its output
verbatim. Deciding whether anything changed is this command's, not the model's: it prints ``[SILENT]`` when
the verdict is the one it printed last time (or the first run reproduces), which both servers' cron
scheduler takes as "deliver nothing" (``cron/scheduler.py`` ``SILENT_MARKER``); otherwise a Markdown report
that names each cell whose verdict changed. The last verdict is kept per notebook in the user's cache folder
(:func:`state_file`).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from .compare import CellCheck
from .report import ReproReport
from .runner import reproduce

__all__ = ["SILENT", "changes_since_last_run", "main", "state_file", "verdicts"]

#: What both Hermes cron schedulers deliver nothing for.
SILENT = "[SILENT]"


def state_file(notebook: Path, env: dict[str, str] | None = None) -> Path:
    """Where the last verdict of ``notebook`` is kept (``$XDG_CACHE_HOME`` or ``~/.cache``)."""
    env = dict(os.environ) if env is None else env
    root = Path(env.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "hermes-notebook" / "reproduce"
    key = hashlib.sha256(str(notebook.resolve()).encode()).hexdigest()[:16]
    return root / f"{notebook.stem[:40]}-{key}.json"


def verdicts(report: ReproReport) -> dict[str, list[str]]:
    """Each code cell's verdict as compared between runs: its status and what it showed (diff, error)."""
    return {_key(cell): [cell.status, cell.diff, cell.error] for cell in report.cells}


def _key(cell: CellCheck) -> str:
    return cell.cell_id or f"#{cell.number}"


def changes_since_last_run(report: ReproReport, state: Path) -> str:
    """``[SILENT]`` when the verdict is the last run's (or, on the first run, every cell reproduces); else a
    Markdown report naming the cells whose verdict changed. The verdict is kept in ``state`` either way."""
    now = verdicts(report)
    try:
        before = json.loads(state.read_text())
    except (OSError, ValueError):
        before = None
    state.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    state.write_text(json.dumps(now))
    if before == now or (before is None and report.reproduces):
        return SILENT
    moved = [
        cell
        for cell in report.cells
        if not isinstance(before, dict) or before.get(_key(cell)) != now[_key(cell)]
    ]
    names = ", ".join(f"cell {cell.number} ({cell.status})" for cell in moved) or "the set of cells"
    head = f"Changed since the last check: {names}."
    return f"{head}\n\n{report.to_markdown()}"


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m hermes_notebook.reproducibility.watch NOTEBOOK [--state FILE] [--timeout S]``."""
    parser = argparse.ArgumentParser(prog="python -m hermes_notebook.reproducibility.watch")
    parser.add_argument("notebook", type=Path)
    parser.add_argument("--state", type=Path, default=None, help="where the last verdict is kept")
    parser.add_argument("--timeout", type=float, default=None, help="seconds one cell may run")
    args = parser.parse_args(argv)
    report = _quietly(lambda: reproduce(args.notebook, timeout=args.timeout))
    print(changes_since_last_run(report, args.state or state_file(args.notebook)))
    return 0


def _quietly(run: Callable[[], ReproReport]) -> ReproReport:
    """``run()`` with this process's stderr (file descriptor 2, which the fresh kernel inherits) sent to
    /dev/null: the agent relays everything the command printed, and a kernel's startup warnings are no part
    of the report. A failure still raises here, after stderr is back."""
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, "w") as devnull:
            os.dup2(devnull.fileno(), 2)
            return run()
    finally:
        os.dup2(saved, 2)
        os.close(saved)


if __name__ == "__main__":
    sys.exit(main())
