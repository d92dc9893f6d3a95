"""What Hermes may do in this kernel for one sharing connection: its permission modes, and what was allowed on
top.

Why one owner: the modes decide every tool call, the chat header and ``%hermes status`` show them, and a new
policy must replace them whole. Before, a session allowed from a Run card ("Don't run; allow reads for this
session") kept reading after ``share_kernel(read=False)`` while the status said reads were off. Every change
goes through :class:`Grants`' methods, which tell their listeners (the chat header), and :meth:`Grants.state`
is what the faces show.

The modes (``share_kernel(read=..., edit=..., run=...)``, ``%hermes --kernel ...``):

- **reads** ``off`` | ``on``: ``list_variables``, ``describe``, ``read_cells``, ``read_output``,
  ``list_cells``. While off, a Run card offers "allow reads for this session": a grant for that Hermes session
  only.
- **edits** ``propose`` | ``off``: ``insert_cell``, ``edit_cell``, ``delete_cell`` propose changes the user
  keeps or discards on the cell; ``off`` refuses them.
- **runs** ``ask`` | ``allow`` | ``never``: ``run_code`` and ``run_cell`` ask on a Run card each time;
  ``allow`` runs them without a card *for this session* (this connection's turns, until it is revoked:
  :meth:`Grants.revoke`, the header's Revoke button, a new policy, ``hermes.close()`` or a kernel restart;
  never the default, never saved); ``never`` refuses them. An allowed run still shows its whole code, with
  Stop, in the turn.
- **run_limit** (seconds, default 120 or ``HERMES_RUN_LIMIT``, at most ``HERMES_RUN_LIMIT_MAX``:
  :mod:`.run_limits`): how long an approved run may take, waiting for a busy cell included; then it is
  stopped and Hermes is told so.

Thread-safe: a grant is made on the package loop, a cell changes the policy on the main thread.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, cast

from ..errors import HermesUsageError
from .run_limits import ENV_RUN_LIMIT_MAX, default_run_limit, max_run_limit

__all__ = ["EDIT_MODES", "READ_MODES", "RUN_MODES", "Grants", "Modes"]

log = logging.getLogger(__name__)

ReadMode = Literal["off", "on"]
EditMode = Literal["propose", "off"]
RunMode = Literal["ask", "allow", "never"]

#: ``read=`` values (``True``/``False`` too).
READ_MODES: tuple[ReadMode, ...] = ("off", "on")
#: ``edit=`` values.
EDIT_MODES: tuple[EditMode, ...] = ("propose", "off")
#: ``run=`` values: a Run card each time, no card for this session, or refused.
RUN_MODES: tuple[RunMode, ...] = ("ask", "allow", "never")


@dataclass(frozen=True)
class Modes:
    """One policy: reads, edits, runs and the run limit (see the module docstring). The defaults are the
    safest."""

    reads: ReadMode = "off"
    edits: EditMode = "propose"
    runs: RunMode = "ask"
    #: Seconds an approved run may take, waiting for a busy kernel included; then it is stopped.
    run_limit: float = 120.0

    @classmethod
    def of(
        cls,
        read: bool | str = False,
        edit: str = "propose",
        run: str = "ask",
        run_limit: float | None = None,
    ) -> Modes:
        """The modes ``share_kernel`` was given, checked (a clear error names a wrong value); ``run_limit``
        None: the default (:mod:`.run_limits`), never over its maximum."""
        most = max_run_limit()
        run_limit = default_run_limit() if run_limit is None else run_limit
        if (
            isinstance(run_limit, bool)
            or not isinstance(run_limit, (int, float))
            or not 0 < run_limit <= most
        ):
            raise HermesUsageError(
                f"run_limit must be a number of seconds from 1 to {most:g} ({ENV_RUN_LIMIT_MAX}), "
                f"not {run_limit!r}"
            )
        reads = ("on" if read else "off") if isinstance(read, bool) else read
        for name, value, allowed in (
            ("read", reads, READ_MODES),
            ("edit", edit, EDIT_MODES),
            ("run", run, RUN_MODES),
        ):
            if value not in allowed:
                extra = "True/False or " if name == "read" else ""
                shown = read if name == "read" else value
                raise HermesUsageError(f"{name} must be {extra}one of {', '.join(allowed)}, not {shown!r}")
        return cls(cast(ReadMode, reads), cast(EditMode, edit), cast(RunMode, run), float(run_limit))

    def describe(self) -> str:
        """``reads on, edits propose, runs ask`` (``runs allowed for this session`` when allowed)."""
        runs = "allowed for this session (no Run card)" if self.runs == "allow" else self.runs
        return f"reads {self.reads}, edits {self.edits}, runs {runs}"


class Grants:
    """A sharing connection's modes and the Hermes sessions allowed to read from a card (see the module)."""

    def __init__(self, modes: Modes | None = None) -> None:
        self._modes = modes or Modes()
        self._sessions: dict[str, None] = {}  # insertion order: the status lists them as granted
        self._listeners: list[Callable[[], None]] = []
        self._lock = threading.Lock()

    # --- reading the policy ---------------------------------------------------------------------------------

    @property
    def modes(self) -> Modes:
        """The current modes."""
        with self._lock:
            return self._modes

    def may_read(self, session_id: str) -> bool:
        """True when the read tools answer for ``session_id`` (reads on, or granted from a card)."""
        with self._lock:
            return self._modes.reads == "on" or session_id in self._sessions

    def allows(self, session_id: str) -> bool:
        """True when ``session_id`` was granted reads from a card."""
        with self._lock:
            return session_id in self._sessions

    def sessions(self) -> list[str]:
        """The session ids granted reads from a card, oldest first."""
        with self._lock:
            return list(self._sessions)

    def state(self, session_id: str | None = None) -> dict[str, Any]:
        """What the faces show: ``{"reads", "edits", "runs", "granted"}``; ``granted`` is whether
        ``session_id`` (or, without one, any session) reads by a card's grant."""
        with self._lock:
            granted = bool(self._sessions) if session_id is None else session_id in self._sessions
            return {
                "reads": self._modes.reads,
                "edits": self._modes.edits,
                "runs": self._modes.runs,
                "granted": granted and self._modes.reads == "off",
            }

    def describe(self) -> str:
        """The modes and the grants in one line (``share_kernel()``'s text and ``%hermes status``)."""
        with self._lock:
            modes, granted = self._modes, list(self._sessions)
        text = modes.describe()
        if granted and modes.reads == "off":
            text = text.replace(
                "reads off", f"reads off, but allowed from a card for session(s) {', '.join(granted)}", 1
            )
        elif modes.reads == "off":
            text = text.replace("reads off", "reads off (Run cards can allow them per session)", 1)
        return text

    # --- changing it ----------------------------------------------------------------------------------------

    def grant(self, session_id: str) -> None:
        """Allow the read tools for ``session_id`` (the user chose "allow reads for this session" on a
        card)."""
        with self._lock:
            self._sessions[session_id] = None
        self._changed()

    def revoke(self, session_id: str | None = None) -> list[str]:
        """Withdraw the read grant of ``session_id``; without one, everything allowed for this session: every
        read grant, and runs ``allow`` back to ``ask``. Returns the session ids whose reads were revoked."""
        with self._lock:
            if session_id is not None:
                revoked = [session_id] if self._sessions.pop(session_id, 0) is None else []
            else:
                revoked, self._sessions = list(self._sessions), {}
                if self._modes.runs == "allow":
                    self._modes = Modes(self._modes.reads, self._modes.edits, "ask", self._modes.run_limit)
        self._changed()
        return revoked

    def on_change(self, callback: Callable[[], None]) -> Callable[[], None]:
        """Call ``callback()`` after every change (on the changing thread); returns an unsubscribe."""
        with self._lock:
            self._listeners.append(callback)

        def unsubscribe() -> None:
            with self._lock, contextlib.suppress(ValueError):
                self._listeners.remove(callback)

        return unsubscribe

    def _changed(self) -> None:
        with self._lock:
            listeners = list(self._listeners)
        for callback in listeners:
            try:
                callback()
            except Exception:  # a face's failure must not undo a revoke
                log.exception("kernel permission listener failed")

    def __len__(self) -> int:
        with self._lock:
            return len(self._sessions)

    def __repr__(self) -> str:
        return f"<Grants {self.modes.describe()}; {len(self)} session(s) granted reads>"
