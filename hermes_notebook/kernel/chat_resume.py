"""After an approved ``restart_and_run_all``, the re-run chat cell comes back on the conversation that asked.

Why a file: the kernel answering the tool is the one being restarted, so nothing in its memory survives. Just
before the restart, :meth:`ChatResumeHints.leave` writes a one-shot hint, "the chat of notebook N (profile P)
was in session S", to a small JSON file in Jupyter's runtime directory (per user, 0600, never in a notebook;
no key or token: a stored session id, a notebook path, a profile name, a time and the writing kernel's pid).
The first chat opened without a session in a *restarted* kernel (another process) of the same notebook and
profile within :data:`HINT_TTL` seconds :meth:`~ChatResumeHints.take`\\ s it and resumes S; every other chat
opens as before. The notebook is named as Jupyter Server names it to the kernels it starts
(``JPY_SESSION_NAME``, the same after a restart), else by the page's path.
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from .document import DOCUMENT, DocumentLink

__all__ = ["ENV_SESSION_NAME", "HINT_FILE", "HINT_TTL", "RESUME_HINTS", "ChatResumeHints", "notebook_of"]

log = logging.getLogger(__name__)

#: The notebook's path, as Jupyter Server tells the kernels it starts (kept across a restart).
ENV_SESSION_NAME = "JPY_SESSION_NAME"
#: The hints' file name in the runtime directory.
HINT_FILE = "hermes-notebook-chat-resume.json"
#: Seconds a hint waits for the restarted kernel's chat; after that the chat opens a new session as before.
HINT_TTL = 600.0


def notebook_of(document: DocumentLink = DOCUMENT, env: Mapping[str, str] | None = None) -> str:
    """The notebook this kernel belongs to ("" where it cannot be told): Jupyter Server's name, else the
    page's path."""
    env = os.environ if env is None else env
    return env.get(ENV_SESSION_NAME) or document.path


def _runtime_dir() -> Path:
    """Jupyter's per-user runtime directory (where its kernels' connection files live)."""
    try:
        from jupyter_core.paths import jupyter_runtime_dir
    except ImportError:  # no Jupyter here: the user's temporary directory
        return Path(tempfile.gettempdir()) / f"hermes-notebook-{os.getuid() if hasattr(os, 'getuid') else 0}"
    return Path(jupyter_runtime_dir())


class ChatResumeHints:
    """The one owner of the resume hints: :meth:`leave` before a restart, :meth:`take` in the chat after it.

    ``directory``: where the file lives (None: Jupyter's runtime directory, looked up on use); ``clock`` and
    ``pid`` stand in for time and the process in tests (a restarted kernel is another process)."""

    def __init__(
        self,
        directory: Path | None = None,
        *,
        clock: Callable[[], float] = time.time,
        pid: Callable[[], int] = os.getpid,
    ) -> None:
        self._directory, self._clock, self._pid = directory, clock, pid
        self._lock = threading.Lock()

    @property
    def path(self) -> Path:
        """The hints' file."""
        return (self._directory or _runtime_dir()) / HINT_FILE

    def leave(self, notebook: str, profile: str | None, session: str) -> bool:
        """Record that ``notebook``'s chat (in ``profile``) was in ``session``, replacing an older hint of
        that notebook and profile. False (nothing written) where the notebook is unknown or the file cannot
        be written: the restart then goes ahead and the chat opens a new session, as before."""
        if not notebook or not session:
            return False
        now = self._clock()
        hint = {"notebook": notebook, "profile": profile, "session": session, "at": now, "pid": self._pid()}
        with self._lock:
            kept = [h for h in self._read() if not self._same(h, notebook, profile) and self._fresh(h, now)]
            return self._write([*kept, hint])

    def take(self, profile: str | None, notebook: str | None = None) -> str | None:
        """The session to resume for a chat opened without one in ``profile`` (``notebook``: this kernel's),
        used up at once; None where no fresh hint left by another process matches."""
        notebook = notebook_of() if notebook is None else notebook
        if not notebook:
            return None
        now, me = self._clock(), self._pid()
        with self._lock:
            hints = self._read()
            found = next((h for h in hints if self._same(h, notebook, profile) and h.get("pid") != me), None)
            if found is None:
                return None
            self._write([h for h in hints if h is not found and self._fresh(h, now)])
        session = found.get("session")
        return session if self._fresh(found, now) and isinstance(session, str) and session else None

    @staticmethod
    def _same(hint: Mapping[str, Any], notebook: str, profile: str | None) -> bool:
        return hint.get("notebook") == notebook and hint.get("profile") == profile

    def _fresh(self, hint: Mapping[str, Any], now: float) -> bool:
        at = hint.get("at")
        return isinstance(at, (int, float)) and 0 <= now - at <= HINT_TTL

    def _read(self) -> list[dict[str, Any]]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return []
        except (OSError, ValueError) as exc:
            log.info("ignoring the chat resume hints in %s: %s", self.path, exc)
            return []
        return [h for h in data if isinstance(h, dict)] if isinstance(data, list) else []

    def _write(self, hints: list[dict[str, Any]]) -> bool:
        path = self.path
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            if not hints:
                path.unlink(missing_ok=True)
                return True
            fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=".hn-resume-")  # 0600
            with os.fdopen(fd, "w", encoding="utf-8") as file:
                json.dump(hints, file)
            os.replace(temporary, path)
        except OSError as exc:
            log.warning("could not write the chat resume hint to %s: %s", path, exc)
            return False
        return True


#: The kernel's hints (the restart tool leaves one; ``Chat`` takes it).
RESUME_HINTS = ChatResumeHints()
