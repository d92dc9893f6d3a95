"""The prompt of a scheduled reproducibility check: a Hermes cron job whose agent runs the check and relays
its output, so a report is delivered only when the verdict moved (``[SILENT]`` otherwise).

Why a prompt: both servers' REST job create takes only a prompt (no ``script``, no ``no_agent``), so the
deterministic part is a command the agent runs with its terminal tool
(:mod:`hermes_notebook.reproducibility.watch`), and the model only relays what it printed. The command names
this kernel's Python and the notebook's absolute path: Hermes must run on the machine that holds the notebook
(the user's own Hermes, as ``hermes_notebook.launch`` starts it).
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

__all__ = ["WATCH_MODULE", "reproduce_command", "reproduce_prompt"]

#: The command-line module that runs the check and decides whether to speak.
WATCH_MODULE = "hermes_notebook.reproducibility.watch"


def reproduce_command(notebook: str | Path, python: str | None = None) -> str:
    """The shell command the job's agent runs: this Python, the watch module, the notebook's absolute path."""
    path = Path(notebook).expanduser().resolve()
    return shlex.join([python or sys.executable, "-m", WATCH_MODULE, str(path)])


def reproduce_prompt(notebook: str | Path, python: str | None = None) -> str:
    """The job's prompt: run the command, then answer with exactly what it printed."""
    return (
        "Scheduled reproducibility check of a Jupyter notebook. Run this command with your terminal tool, "
        "then reply with exactly what it printed and nothing else (if it printed [SILENT], "
        "reply [SILENT]).\n\n" + reproduce_command(notebook, python)
    )
