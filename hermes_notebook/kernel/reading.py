"""What the read tools return: the user's variables, one value's summary, cells and their outputs, all
bounded.

Safe to run beside a running cell, and why: a read runs no user code. The tools answer on the package's own
loop thread (so a read answers while the user's cell is busy, and is bounded so it never holds that loop
long), and the user's objects are not thread-safe or side-effect free (a property, ``__getattr__``,
``__len__``, ``__repr__``, ``items()`` or a figure's ``savefig`` is theirs). So reads never call into them:
values are summarised by :func:`~hermes_notebook.shell.values.summarize` with ``safe=True`` (known types
only, by exact type; everything else is its type name), collections are read at most
:data:`~hermes_notebook.shell.values.MAX_ITEMS` items deep (a two-million-item dict costs what a small one
does), the last error is described without its class's ``__str__``, and the work is bounded by the result's
size, not the value's. A value a cell changes meanwhile may read half-changed (a dict that changes size under
the read): then, as for any failure, the answer is the fixed :data:`READ_FAILED`, never a traceback in the
running cell's stderr. Names come from the model and are data: a name is looked up in the namespace, never
evaluated; a secret-looking name (``db_password``) gets its value withheld.

What a cell printed and displayed comes from :mod:`.outputs` (copied as the kernel published it): a running
cell's output so far, and a finished cell's streams, display texts and plots (PNGs the kernel already
produced, sent as images). None of it waits for the running cell.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ..shell.last_error import last_error
from ..shell.placeholders import PromptContextError
from ..shell.values import FRAME_TYPES, SERIES_TYPES, exact_type, summarize
from .images import ToolAnswer
from .outputs import CellOutput, OutputLog

__all__ = [
    "CELL_CHARS",
    "MAX_CELLS",
    "MAX_VARIABLES",
    "READ_FAILED",
    "RESULT_CHARS",
    "bounded",
    "describe",
    "list_variables",
    "read_cells",
    "read_output",
    "user_variables",
]

#: Characters of one tool result at most (the rest is cut, and the cut says so).
RESULT_CHARS = 8000
#: Variables ``list_variables`` lists at most.
MAX_VARIABLES = 200
#: Cells ``read_cells`` returns at most.
MAX_CELLS = 20
#: Characters of one cell's source at most.
CELL_CHARS = 3000
#: What a read that failed answers (the same text whatever went wrong: nothing of the failure leaks).
READ_FAILED = (
    "The notebook could not be read just now (a value may have changed while it was read); try again."
)

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_RANGE = re.compile(r"\s*(-?\d+)?\s*(?:(:|-|\.\.)\s*(-?\d+)?)?\s*")
# What IPython itself puts in the namespace: never "the user's variables".
_SHELL_NAMES = frozenset({"In", "Out", "get_ipython", "exit", "quit", "open"})


def bounded(text: str, limit: int = RESULT_CHARS) -> str:
    """``text`` cut to ``limit`` characters, saying how much was cut."""
    return text if len(text) <= limit else text[:limit] + f"\n… [cut: {len(text) - limit:,} more characters]"


def user_variables(namespace: Mapping[str, Any], hidden: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The user's own names: no ``_private`` names, modules, IPython's names or names the shell hides."""
    hidden = hidden or {}
    return {
        name: value
        for name, value in list(namespace.items())
        if type(name) is str
        and not name.startswith("_")
        and name not in _SHELL_NAMES
        and name not in hidden
        and exact_type(value)[1] != "module"
    }


_SIZED = frozenset({dict, list, tuple, set, frozenset, str, bytes, bytearray, range})
_SHAPED = frozenset({("numpy", "ndarray"), *FRAME_TYPES, *SERIES_TYPES})


def _shape(value: Any) -> str:
    """``3x4`` for an array or frame, ``len 5`` for a builtin collection; nothing for other types (their
    ``shape`` or ``__len__`` would be their own code)."""
    if exact_type(value) in _SHAPED:
        return "x".join(str(n) for n in value.shape)
    return f"len {len(value)}" if type(value) in _SIZED else ""


def list_variables(
    namespace: Mapping[str, Any], hidden: Mapping[str, Any] | None = None, running: CellOutput | None = None
) -> str:
    """One line per variable: name, type, shape or size; first, the cell running now, if one is."""
    names = user_variables(namespace, hidden)
    lines = [] if running is None else [_running_line(running)]
    if not names:
        return "\n".join([*lines, "No variables defined yet."])
    for name in sorted(names)[:MAX_VARIABLES]:
        value = names[name]
        module, kind = exact_type(value)
        shape = _shape(value)
        lines.append(f"{name}: {module.split('.')[0]}.{kind}" if module != "builtins" else f"{name}: {kind}")
        if shape:
            lines[-1] += f" ({shape})"
    if len(names) > MAX_VARIABLES:
        lines.append(f"… and {len(names) - MAX_VARIABLES} more")
    return bounded("\n".join(lines))


def _running_line(running: CellOutput) -> str:
    import time

    return (
        f"(In[{running.count}] is running, for {time.monotonic() - running.started:.0f} s: values may change "
        f"while it runs; read_output {running.count} shows its output so far)"
    )


def describe(namespace: Mapping[str, Any], name: str, hidden: Mapping[str, Any] | None = None) -> str:
    """The typed, bounded summary of variable ``name`` (a plain name: looked up, never evaluated)."""
    name = name.strip()
    if not _IDENTIFIER.fullmatch(name):
        return f"{name[:80]!r} is not a variable name (describe takes one name, e.g. df)."
    variables = user_variables(namespace, hidden)
    if name not in variables:
        return f"There is no variable {name!r} in the notebook (list_variables shows what there is)."
    summary = summarize(variables[name], name=name, safe=True)
    return bounded(f"{name} ({summary.kind}):\n{summary.text}")


def _cells(namespace: Mapping[str, Any]) -> list[str]:
    cells = namespace.get("In")
    return [c for c in cells if type(c) is str] if type(cells) is list else []


def _span(spec: str, count: int) -> range | None:
    """Cell numbers for ``"5"``, ``"3:6"`` / ``"3-6"`` (inclusive), ``"-3"`` or ``"-3:"`` (the last three)."""
    match = _RANGE.fullmatch(spec or "")
    if match is None or not (match.group(1) or match.group(3)):
        return None
    first, sep, last = match.group(1), match.group(2), match.group(3)
    if first is not None and int(first) < 0:
        start = max(1, count + int(first))
        return range(start, count)
    start = int(first) if first is not None else 1
    end = int(last) if last is not None else (count - 1 if sep else start)
    return range(max(1, start), min(end, count - 1) + 1)


def read_cells(namespace: Mapping[str, Any], spec: str) -> str:
    """The source of the cells ``spec`` names, each as ``In[n]`` (at most :data:`MAX_CELLS`)."""
    cells = _cells(namespace)
    span = _span(spec, len(cells))
    if span is None:
        return f"{spec[:40]!r} is not a cell range (use e.g. 5, 3:6 or -3 for the last three)."
    numbers = list(span)[-MAX_CELLS:]
    if not numbers:
        return f"No cells in {spec[:40]!r}; this notebook has run {max(0, len(cells) - 1)} cells."
    parts = [f"In[{n}]:\n{bounded(cells[n].rstrip(), CELL_CHARS)}" for n in numbers]
    return bounded("\n\n".join(parts))


def read_output(
    namespace: Mapping[str, Any], number: int, shell: Any = None, outputs: OutputLog | None = None
) -> ToolAnswer:
    """Cell ``number``: its source, what it printed and displayed (its plots as images), its result
    (``Out[n]``, summarized) and the error it raised; a running cell's output so far."""
    cells = _cells(namespace)
    record = outputs.cell(number) if outputs is not None else None
    running = record is not None and record.running
    if not 1 <= number < len(cells) + (1 if running else 0):
        return ToolAnswer(f"There is no cell {number}; this notebook has run {max(0, len(cells) - 1)} cells.")
    source = cells[number] if number < len(cells) else ""
    head = f"In[{number}]" + (" (running now: its output so far)" if running else "")
    parts = [f"{head}:\n{bounded(source.rstrip(), CELL_CHARS)}"]
    if record is not None:
        parts.extend(_printed(record))
    results = namespace.get("Out")
    if type(results) is dict and number in results:
        summary = summarize(results[number], safe=True)
        parts.append(f"Out[{number}] ({summary.kind}):\n{summary.text}")
    try:
        err = last_error(shell, safe=True)
    except PromptContextError:
        err = None
    if err is not None and err.cell_label == f"In[{number}]" and not running:
        parts.append(f"Err:\n{err.summary()}")
    if len(parts) == 1:
        parts.append("(nothing printed yet)" if running else "(no output, no result and no error)")
    return ToolAnswer(bounded("\n\n".join(parts)), tuple(record.images) if record is not None else ())


def _printed(record: CellOutput) -> list[str]:
    """A recorded cell's streams (their end), display texts and images, as lines for the agent."""
    parts = []
    if record.text:
        cut = record.chars - len(record.text)
        parts.append(
            "printed"
            + (f" (the last {len(record.text):,} of {record.chars:,} characters)" if cut else "")
            + f":\n{record.text.rstrip()}"
        )
    for text in record.displays:
        parts.append(f"displayed:\n{bounded(text.rstrip(), CELL_CHARS)}")
    if record.images or record.skipped:
        lines = [f"- {image.describe()}: attached" for image in record.images] + [
            f"- {s}" for s in record.skipped
        ]
        parts.append("images:\n" + "\n".join(lines))
    return parts
