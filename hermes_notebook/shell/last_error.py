"""The exception the notebook last showed (``{Err}``, ``%hermes fix``, the ``read_output`` tool), read safely.

Why its own module: both the prompt context (the user typed ``{Err}``) and the kernel's read tools (the model
asked, maybe while a cell runs) read it, and the second must run no code of the exception's class:
``last_error(safe=True)`` builds the message from a builtin exception's arguments only and reads the
traceback's frames as they are.
"""

from __future__ import annotations

import linecache
import sys
import traceback
from collections.abc import Mapping
from dataclasses import dataclass
from types import TracebackType
from typing import Any

from .placeholders import PromptContextError
from .values import VALUE_CHARS, cut, exact_type, safe_repr

__all__ = ["TRACEBACK_LINES", "ErrorInfo", "last_error"]

#: Traceback lines kept for ``{Err}`` and ``%hermes fix`` (the tail is where the error is).
TRACEBACK_LINES = 20


@dataclass(frozen=True)
class ErrorInfo:
    """The last exception the notebook showed: what it was, where, and the cell that raised it."""

    type: str
    message: str
    traceback_tail: str
    cell_source: str | None
    cell_label: str | None

    def summary(self) -> str:
        return f"{self.type}: {self.message}\n{self.traceback_tail}"


def _user_frames(tb: TracebackType | None) -> TracebackType | None:
    """Skip IPython's own frames at the top of a cell's traceback."""
    while tb is not None and "IPython" in tb.tb_frame.f_code.co_filename.replace("\\", "/").split("/"):
        tb = tb.tb_next
    return tb


def _cell_of(tb: TracebackType | None, shell: Any) -> tuple[str | None, str | None]:
    names: Mapping[str, int] = getattr(getattr(shell, "compile", None), "_filename_map", {}) or {}
    while tb is not None:
        filename = tb.tb_frame.f_code.co_filename
        if filename in names or filename.startswith("<ipython-input-"):
            source = "".join(linecache.getlines(filename))
            label = f"In[{names[filename]}]" if filename in names else filename
            return (source or None), label
        tb = tb.tb_next
    return None, None


def _safe_message(value: BaseException) -> str:
    """An exception's message built here: the arguments of a builtin exception, nothing of a user's class."""
    if exact_type(value)[0] != "builtins":  # its __str__ and args are the user's code
        return ""
    args: Any = BaseException.__dict__["args"]  # the builtin slot, not a property a subclass may define
    return ", ".join(safe_repr(a) for a in args.__get__(value)[:3])


def last_error(shell: Any = None, *, safe: bool = False) -> ErrorInfo:
    """The exception the notebook last showed (``sys.last_value``); :class:`PromptContextError` if none.

    ``safe`` (the read tools, which may run beside a cell): no code of the exception's class runs (its message
    is built from a builtin exception's arguments only); the traceback's frames are read as they are."""
    value = getattr(sys, "last_value", None)
    if not issubclass(type(value), BaseException):
        raise PromptContextError("no error yet: {Err} and %hermes fix need a cell that raised an exception")
    assert isinstance(value, BaseException)
    own_tb: Any = BaseException.__dict__[
        "__traceback__"
    ]  # the builtin slot, not a property a subclass may define
    tb = _user_frames(getattr(sys, "last_traceback", None) or own_tb.__get__(value))
    kind = exact_type(value)[1]
    if safe:
        message = _safe_message(value)
        lines = "".join(traceback.format_list(traceback.extract_tb(tb))).rstrip("\n").splitlines()
        lines = ["Traceback (most recent call last):", *lines, f"{kind}: {message}" if message else kind]
    else:
        message = " ".join(str(value).split())
        lines = "".join(traceback.format_exception(type(value), value, tb)).rstrip("\n").splitlines()
    tail = "\n".join(lines[-TRACEBACK_LINES:])
    if len(lines) > TRACEBACK_LINES:
        tail = f"Traceback (… {len(lines) - TRACEBACK_LINES} earlier lines cut):\n{tail}"
    source, label = _cell_of(tb, shell)
    return ErrorInfo(kind, cut(message, 500), cut(tail, VALUE_CHARS), source, label)
