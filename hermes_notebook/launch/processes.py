"""One server process in its own process group, free loopback ports, and the error a start that failed raises.

Shared by the per-user launcher (:mod:`.user_hermes`) and the test and demo harness
(``hermes_notebook._demo``): both start real Hermes servers and must stop exactly what they started, by PID.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, TypeVar

import httpx

__all__ = ["LOOPBACK", "REFUSAL", "HermesStartError", "ServerProcess", "free_port", "retry_on_port_clash"]

T = TypeVar("T")

LOOPBACK = "127.0.0.1"
#: What Hermes logs when it will not start (a key too weak, a port it may not take).
REFUSAL = re.compile(r"Refusing to start[^\n]*")


class HermesStartError(RuntimeError):
    """A Hermes server did not become healthy; the message ends with the tail of its log."""


def free_port(host: str = LOOPBACK) -> int:
    """A port that was free a moment ago (bind to 0 and release it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def retry_on_port_clash(
    start: Callable[[], T], attempts: int = 3, again: Callable[[], None] = lambda: None
) -> T:
    """``start()``, tried again (after ``again()``, which picks fresh ports) when a server exited because its
    port was taken meanwhile: a port found free can be taken by another process before the server binds it."""
    for attempt in range(1, attempts + 1):
        try:
            return start()
        except HermesStartError as exc:
            if attempt == attempts or "address already in use" not in str(exc).lower():
                raise
            again()
    raise AssertionError("unreachable")  # the loop returns or raises


def _die_with_parent() -> None:  # in the child between fork and exec: Linux ends it when its parent dies
    with contextlib.suppress(Exception):
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


class ServerProcess:
    """One server process in its own process group, logging to a file; stopped by PID only.

    ``die_with_parent``: Linux sends it SIGTERM when the process that started it dies (a Jupyter server
    killed with SIGKILL must not leave the user's Hermes running); start it from a thread that lives as long
    as the process (the main thread), as the kernel ties the signal to the starting thread.
    """

    def __init__(
        self,
        name: str,
        argv: list[str],
        *,
        cwd: Path,
        env: dict[str, str],
        log: Path,
        die_with_parent: bool = False,
    ) -> None:
        self.name, self.argv, self.cwd, self.env, self.log = name, argv, cwd, env, log
        self.popen: subprocess.Popen[bytes] | None = None
        self._log_file: IO[bytes] | None = None
        self._log_offset = 0
        self._die_with_parent = die_with_parent and sys.platform == "linux"

    @property
    def running(self) -> bool:
        return self.popen is not None and self.popen.poll() is None

    @property
    def pid(self) -> int | None:
        """The PID (also the process group id); None before :meth:`start` and after :meth:`wait`."""
        return self.popen.pid if self.popen is not None else None

    def start(self) -> None:
        self._log_file = open(self.log, "ab")  # noqa: SIM115 - closed in wait()
        self._log_offset = self._log_file.tell()
        self._log_file.write(f"\n=== {time.strftime('%H:%M:%S')} {' '.join(self.argv)}\n".encode())
        self._log_file.flush()
        self.popen = subprocess.Popen(
            self.argv,
            cwd=self.cwd,
            env=self.env,
            stdin=subprocess.DEVNULL,
            stdout=self._log_file,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=_die_with_parent if self._die_with_parent else None,
        )

    def wait_until(
        self, healthy: Callable[[], bool], timeout: float, refuse: re.Pattern[str] | None = None
    ) -> None:
        """Poll ``healthy()`` (a request that cannot connect yet counts as not yet) until it holds; a
        :class:`HermesStartError` ending with the log's tail at once when the process exits or logs a
        ``refuse`` match, or after ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while True:
            if refuse is not None and (match := refuse.search(self.log_text())):
                raise HermesStartError(f"{self.name} refused to start: {match.group(0)}\n{self.tail()}")
            if not self.running:
                raise HermesStartError(f"{self.name} exited during startup\n{self.tail()}")
            with contextlib.suppress(httpx.TransportError):
                if healthy():
                    return
            if time.monotonic() > deadline:
                raise HermesStartError(f"{self.name} not healthy after {timeout:.0f} s\n{self.tail()}")
            time.sleep(0.05)  # poll interval of a readiness check, not a synchronization sleep

    def tail(self, lines: int = 40) -> str:
        """The last ``lines`` lines this run of the process logged, under the log's path."""
        text = self.log_text().strip().splitlines()[-lines:]
        return f"--- last lines of {self.log} ---\n" + "\n".join(text)

    def log_text(self) -> str:
        """What this run of the process has logged so far."""
        try:
            with open(self.log, "rb") as f:
                f.seek(self._log_offset)
                return f.read().decode(errors="replace")
        except OSError:
            return ""

    @staticmethod
    def _exited_unreaped(pid: int) -> bool:
        try:
            return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
        except ChildProcessError:
            return True

    def signal(self, sig: int) -> None:
        if self.popen is not None and self.popen.poll() is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.popen.pid, sig)  # pgid == pid: start_new_session made it a group leader

    def wait(self, deadline: float) -> None:
        """Wait for exit until ``deadline``, then SIGKILL the group; always reaps and closes the log.

        The leader is left a zombie (``WNOWAIT``) until its group has been killed, so its PID, which is
        also the group id, cannot have been reused by an unrelated process when we signal it.
        """
        if self.popen is not None:
            pid = self.popen.pid
            while time.monotonic() < deadline and not self._exited_unreaped(pid):
                time.sleep(0.02)
            # Whatever is left in the group (the leader after the grace, or a shell the agent started) goes.
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pid, signal.SIGKILL)
            self.popen.wait(timeout=10)
            self.popen = None
        if self._log_file is not None:
            self._log_file.close()
            self._log_file = None
