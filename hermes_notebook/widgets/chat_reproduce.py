"""The chat's ``/reproduce``: the reproducibility check (``hermes.reproduce``) of the chat's own notebook,
from the composer, its report shown in the chat as command output (plain text, inert).

Why a chat command of our own rather than Hermes': the check runs here, in a fresh kernel beside this one
(:mod:`hermes_notebook.reproducibility`), on the saved notebook; nothing goes to Hermes. The notebook is the
one this chat's kernel belongs to: the page's (the cell tools' ``DOCUMENT.path``, beside the kernel's working
directory, where Jupyter starts a notebook's kernel) or ``JPY_SESSION_NAME`` (which Jupyter Server sets).
"""

from __future__ import annotations

import os
from pathlib import Path

from ..kernel.chat_resume import ENV_SESSION_NAME
from ..kernel.document import DOCUMENT
from ..reproducibility import reproduce_async
from . import inbound

__all__ = ["ENV_SESSION_NAME", "REPRODUCE", "REPRODUCE_ENTRY", "chat_notebook", "reproduce_output"]

#: The command, as typed in the composer.
REPRODUCE = "/reproduce"
#: Its line in the composer's command list.
REPRODUCE_ENTRY = {
    "name": REPRODUCE,
    "description": "Check that this notebook reproduces: run the saved notebook in a fresh kernel and "
    "compare each cell's outputs (hermes.reproduce)",
    "category": "Notebook",
}


def chat_notebook(env: dict[str, str] | None = None, cwd: Path | None = None) -> Path | None:
    """The saved notebook this kernel belongs to, or None where it cannot be told."""
    env = dict(os.environ) if env is None else env
    cwd = Path.cwd() if cwd is None else cwd
    candidates = []
    if DOCUMENT.attached and DOCUMENT.path:
        candidates.append(cwd / Path(DOCUMENT.path).name)
    if env.get(ENV_SESSION_NAME):
        named = Path(env[ENV_SESSION_NAME])
        candidates += [named, cwd / named.name]
    return next((path for path in candidates if path.suffix == ".ipynb" and path.is_file()), None)


async def reproduce_output(line: str) -> dict[str, str]:
    """``/reproduce`` as the chat's command output: the report's text, or why there is none."""
    if line.split() != [REPRODUCE]:
        raise inbound.Refused("/reproduce takes no arguments: it checks this chat's notebook")
    path = chat_notebook()
    if path is None:
        raise inbound.Refused(
            "this chat cannot tell which notebook it is in; run hermes.reproduce(path) in a cell instead"
        )
    report = await reproduce_async(path)
    return {
        "type": "command_output",
        "command": REPRODUCE,
        "output": str(report) + "\n\n(the saved notebook, run in a fresh kernel; save first to check edits)",
        "warning": "" if report.reproduces else report.summary(),
        "prefill": "",
    }
