"""How a value reads in a prompt or to a read tool: a bounded, typed summary, never the whole of a large
value.

Two callers, two rules:

- ``{var}`` placeholders and ``run_code`` results (:func:`summarize`): the user typed the name, or approved
  the code, and the summary is made on the main thread, as printing the value would be. A value of an unknown
  type shows its ``repr`` (cut), a figure is rendered to a PNG.
- the kernel's read tools (:func:`summarize` with ``safe=True``): the model chose the name, and a read may run
  while a cell runs (kernel/reading.py). A safe summary runs no user code at all. Only values of known types
  are looked into: builtins by exact type (dict, list, tuple, set, frozenset, str, bytes, numbers, None,
  range; a few stdlib ones: datetime, Decimal, Path, OrderedDict, defaultdict, Counter, deque,
  ``os.environ``), numpy arrays and scalars and pandas DataFrames and Series and their scalars, each by its
  exact type's module and name (a subclass is unknown); their elements are formatted by this module, not by
  their ``__repr__``. Anything else shows as its type name only: no ``len``, ``repr``, ``str``, attribute or
  property of it is read.

Both withhold a value whose variable name or mapping key looks secret
(:func:`~hermes_notebook.scrub.looks_secret`: ``<withheld: 11 chars>``), and look at no more than
:data:`MAX_ITEMS` items of a collection, however large (no ``list(d.items())`` of a two-million-item dict).
Nothing here imports pandas, numpy or matplotlib.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..scrub import looks_secret

__all__ = [
    "FRAME_TYPES",
    "HEAD_ROWS",
    "MAX_ITEMS",
    "SERIES_TYPES",
    "VALUE_CHARS",
    "Summary",
    "cut",
    "exact_type",
    "safe_repr",
    "summarize",
    "withheld",
]

#: Characters one value may take in a prompt (a cut value says how much was left out).
VALUE_CHARS = 2000
#: Rows of a DataFrame/Series head.
HEAD_ROWS = 5
#: Items of a list/dict/set shown before the rest is cut.
MAX_ITEMS = 20
#: Items of a collection inside another, and how deep collections are opened.
NESTED_ITEMS = 5
MAX_DEPTH = 3
#: Characters of one item (a string inside a list, a table cell).
ITEM_CHARS = 200
CELL_CHARS = 40
#: Columns of a DataFrame listed and shown.
MAX_COLUMNS = 20

_SCALARS = frozenset({type(None), bool, int, float, complex})
_SEQUENCES = frozenset({list, tuple, set, frozenset})
_STDLIB_SCALARS = frozenset(
    {
        ("datetime", "datetime"),
        ("datetime", "date"),
        ("datetime", "time"),
        ("datetime", "timedelta"),
        ("decimal", "Decimal"),
        ("fractions", "Fraction"),
        ("uuid", "UUID"),
        ("pathlib", "PosixPath"),
        ("pathlib", "WindowsPath"),
    }
)
_STDLIB_MAPPINGS = frozenset(
    {
        ("collections", "OrderedDict"),
        ("collections", "defaultdict"),
        ("collections", "Counter"),
        ("os", "_Environ"),
    }
)
_NUMPY_SCALAR = re.compile(
    r"bool_?|u?int\d*|u?intc|u?intp|u?longlong|float\d*|half|single|double|longdouble|complex\d*|c?longdouble|"
    r"cdouble|csingle|str_|bytes_|datetime64|timedelta64"
)
_PANDAS_SCALARS = frozenset({"Timestamp", "Timedelta", "Period", "NaTType", "NAType"})
# Where pandas defines its frames and series (pandas 3 says "pandas"; earlier versions their own modules).
FRAME_TYPES = frozenset({("pandas", "DataFrame"), ("pandas.core.frame", "DataFrame")})
SERIES_TYPES = frozenset({("pandas", "Series"), ("pandas.core.series", "Series")})


@dataclass(frozen=True)
class Summary:
    """One value as it goes into the prompt: text, and images to attach (PNG of a figure)."""

    kind: str
    text: str
    images: tuple[tuple[str, bytes], ...] = ()


def exact_type(value: Any) -> tuple[str, str]:
    """``(module, name)`` of the value's own type (``type()``, never ``__class__``, which a property can
    fake)."""
    cls = type(value)
    return str(type.__dict__["__module__"].__get__(cls) or ""), str(type.__dict__["__name__"].__get__(cls))


def cut(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, saying how many were left out."""
    if len(text) <= limit:
        return text
    return text[:limit] + f"… [cut: {len(text) - limit:,} more characters]"


def withheld(value: Any) -> str:
    """What a secret-named value becomes: its size for text, else its type (``<withheld: 11 chars>``)."""
    if type(value) in (str, bytes, bytearray):
        return f"<withheld: {len(value):,} {'chars' if type(value) is str else 'bytes'}>"
    return f"<withheld: {exact_type(value)[1]}>"


def _known_scalar(value: Any) -> str | None:
    """The repr of a value whose type's repr is library code (not the user's), else None."""
    cls = type(value)
    if cls in _SCALARS:
        if cls is int and value.bit_length() > 4000:  # repr would be slow (or refused): say its size
            return f"<int of {value.bit_length():,} bits>"
        return repr(value)
    module, name = exact_type(value)
    if (
        (module, name) in _STDLIB_SCALARS
        or (module == "numpy" and _NUMPY_SCALAR.fullmatch(name))
        or (module.split(".", 1)[0] == "pandas" and name in _PANDAS_SCALARS)
    ):
        return repr(value)
    return None


def safe_repr(value: Any, *, safe: bool = True, depth: int = 0, items: int = NESTED_ITEMS) -> str:
    """A short repr of ``value`` built here, bounded in size and work. Unknown types: their name in angle
    brackets when ``safe`` (no user code runs), else their own ``repr`` (cut; a failing one is named)."""
    cls = type(value)
    if cls is str:
        text = repr(value[:ITEM_CHARS])
        return text if len(value) <= ITEM_CHARS else text + f"… [+{len(value) - ITEM_CHARS:,} chars]"
    if cls in (bytes, bytearray):
        text = repr(bytes(value[:ITEM_CHARS]))
        return text if len(value) <= ITEM_CHARS else text + f"… [+{len(value) - ITEM_CHARS:,} bytes]"
    if cls is range:
        return repr(value)
    scalar = _known_scalar(value)
    if scalar is not None:
        return cut(scalar, ITEM_CHARS)
    mapping = _mapping(value, safe)
    if (
        mapping is not None
        or cls in _SEQUENCES
        or (not safe and isinstance(value, (list, tuple, set, frozenset)))
    ):
        if depth >= MAX_DEPTH:
            return f"<{exact_type(value)[1]} of {len(value):,} items>"
        body = _items(value, mapping, safe=safe, depth=depth + 1, limit=items)
        open_, close = (
            ("{", "}")
            if mapping is not None or isinstance(value, (set, frozenset))
            else ("(", ")")
            if isinstance(value, tuple)
            else ("[", "]")
        )
        return f"{open_}{body}{close}"
    if safe:
        return f"<{exact_type(value)[1]}>"
    return _own_repr(value, ITEM_CHARS)


def _own_repr(value: Any, limit: int) -> str:
    """The value's own ``repr`` (user code: never in a safe summary), cut; a failing one is named."""
    try:
        text = repr(value)
    except Exception as exc:  # a broken __repr__ must not stop the prompt
        text = f"<{exact_type(value)[1]} (repr failed: {type(exc).__name__})>"
    return cut(text, limit)


def _mapping(value: Any, safe: bool) -> Mapping[Any, Any] | None:
    """``value`` when it is a mapping this module may iterate (safe: only known types), else None."""
    if type(value) is dict or exact_type(value) in _STDLIB_MAPPINGS:
        return value
    if not safe and isinstance(value, Mapping):
        return value
    return None


def _items(value: Any, mapping: Mapping[Any, Any] | None, *, safe: bool, depth: int, limit: int) -> str:
    """Up to ``limit`` items of a collection (never more are read), with a note of how many were left out."""
    shown = []
    if mapping is not None:
        for key, item in itertools.islice(iter(mapping.items()), limit):
            text = withheld(item) if looks_secret(key) else safe_repr(item, safe=safe, depth=depth)
            shown.append(f"{safe_repr(key, safe=safe, depth=MAX_DEPTH)}: {text}")
    else:
        shown = [safe_repr(item, safe=safe, depth=depth) for item in itertools.islice(iter(value), limit)]
    total = len(value)
    if total > limit:
        shown.append(f"… [{total - limit:,} more items]")
    return ", ".join(shown)


def summarize(
    value: Any, limit: int = VALUE_CHARS, *, name: str | None = None, safe: bool = False
) -> Summary:
    """A bounded, typed summary of a value (never the whole of a large value). ``name``: the variable or key
    it was read by (a secret-looking one withholds the value); ``safe``: run no user code (the module
    docstring)."""
    module, kind = exact_type(value)
    if name is not None and looks_secret(name):
        return Summary(kind, withheld(value))
    top = module.split(".", 1)[0]
    if type(value) is str or (not safe and isinstance(value, str)):
        return Summary("str", cut(str.__str__(value), limit))
    if (scalar := _known_scalar(value)) is not None:
        return Summary(kind, cut(scalar, limit))
    if type(value) in (bytes, bytearray, range):
        return Summary(kind, safe_repr(value))
    if issubclass(type(value), BaseException):
        return _exception_summary(value, limit, safe)
    if top == "pandas" and kind == "DataFrame" and (not safe or (module, kind) in FRAME_TYPES):
        return _safe_frame(value, limit) if safe else _frame_summary(value, limit)
    if top == "pandas" and kind == "Series" and (not safe or (module, kind) in SERIES_TYPES):
        return _safe_series(value, limit) if safe else _series_summary(value, limit)
    if top == "numpy" and kind == "ndarray" and (not safe or module == "numpy"):
        return _array_summary(value, limit, safe)
    if top == "matplotlib" and kind == "Figure":
        if safe:  # drawing runs the figure's artists (user code): read tools describe it only
            return Summary("figure", "[a matplotlib figure: not rendered by the read tools]")
        if hasattr(value, "savefig"):
            return _figure_summary(value)
    mapping = _mapping(value, safe)
    if (
        mapping is not None
        or type(value) in _SEQUENCES
        or (not safe and isinstance(value, (list, tuple, set, frozenset)))
    ):
        body = _items(value, mapping, safe=safe, depth=1, limit=MAX_ITEMS)
        return Summary(kind, cut(f"{kind} of {len(value):,} items: {body}", limit))
    if safe:
        return Summary(kind, f"{kind}: a {module}.{kind} object (the read tools show only its type)")
    return Summary(kind, cut(f"{kind}: {_own_repr(value, limit)}", limit))


def _exception_summary(value: BaseException, limit: int, safe: bool) -> Summary:
    module, kind = exact_type(value)
    if not safe:
        return Summary("exception", cut(f"{kind}: {value}", limit))
    if module != "builtins":  # its __str__ and args may be the user's
        return Summary("exception", kind)
    args = BaseException.__dict__["args"].__get__(value)
    return Summary("exception", cut(f"{kind}: {', '.join(safe_repr(a) for a in args[:3])}", limit))


def _frame_summary(value: Any, limit: int) -> Summary:
    rows, cols = value.shape
    dtypes = ", ".join(f"{name}: {dtype}" for name, dtype in list(value.dtypes.items())[:40])
    if len(value.columns) > 40:
        dtypes += f", … [{len(value.columns) - 40} more columns]"
    head = value.head(HEAD_ROWS).to_string(max_cols=20, max_colwidth=40)
    text = f"DataFrame: {rows:,} rows × {cols:,} columns\ndtypes: {dtypes}\nhead({HEAD_ROWS}):\n{head}"
    return Summary("DataFrame", cut(text, limit))


def _series_summary(value: Any, limit: int) -> Summary:
    head = value.head(HEAD_ROWS).to_string(max_rows=HEAD_ROWS)
    text = f"Series {value.name!r}: {len(value):,} values, dtype {value.dtype}\nhead({HEAD_ROWS}):\n{head}"
    return Summary("Series", cut(text, limit))


def _library_dtype(dtype: Any) -> bool:
    """A numpy or pandas dtype (an extension dtype of another package runs its own code when read)."""
    return exact_type(dtype)[0].split(".", 1)[0] in ("numpy", "pandas")


def _cell(value: Any) -> str:
    """A table cell: text as it is, a known scalar as its library prints it, anything else as
    :func:`safe_repr`."""
    if type(value) is str:
        return cut(value, CELL_CHARS)
    return cut(
        str(value) if _known_scalar(value) is not None else safe_repr(value, depth=MAX_DEPTH), CELL_CHARS
    )


def _table(header: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    return "\n".join(
        "  ".join(cell.rjust(width) for cell, width in zip(row, widths, strict=True))
        for row in [header, *rows]
    )


def _safe_frame(value: Any, limit: int) -> Summary:
    """A DataFrame read with pandas' own indexing only: labels and cells formatted here, never by their
    repr."""
    rows, cols = value.shape
    dtypes = list(value.dtypes)[: MAX_COLUMNS * 2]
    labels = list(value.columns[: MAX_COLUMNS * 2])
    listed = ", ".join(
        f"{_cell(label)}: {dtype if _library_dtype(dtype) else '<' + exact_type(dtype)[1] + '>'}"
        for label, dtype in zip(labels, dtypes, strict=False)
    )
    if cols > len(labels):
        listed += f", … [{cols - len(labels)} more columns]"
    shown = [j for j in range(min(cols, MAX_COLUMNS)) if _library_dtype(dtypes[j])]
    head_rows = min(rows, HEAD_ROWS)
    index = (
        [_cell(i) for i in value.index[:HEAD_ROWS].tolist()]
        if _library_dtype(value.index.dtype)
        else [""] * head_rows
    )
    columns = [[_cell(c) for c in value.iloc[:HEAD_ROWS, j].tolist()] for j in shown]
    table = _table(
        ["", *(_cell(labels[j]) for j in shown)],
        [[index[r], *(column[r] for column in columns)] for r in range(len(index))],
    )
    text = f"DataFrame: {rows:,} rows × {cols:,} columns\ndtypes: {listed}\nhead({HEAD_ROWS}):\n{table}"
    return Summary("DataFrame", cut(text, limit))


def _safe_series(value: Any, limit: int) -> Summary:
    dtype = value.dtype
    shown = str(dtype) if _library_dtype(dtype) else f"<{exact_type(dtype)[1]}>"
    head = ""
    if _library_dtype(dtype) and _library_dtype(value.index.dtype):
        cells = [
            [_cell(i), _cell(v)]
            for i, v in zip(value.index[:HEAD_ROWS].tolist(), value.iloc[:HEAD_ROWS].tolist(), strict=False)
        ]
        head = f"\nhead({HEAD_ROWS}):\n" + _table(["", ""], cells).split("\n", 1)[-1]
    text = f"Series {safe_repr(value.name)}: {len(value):,} values, dtype {shown}{head}"
    return Summary("Series", cut(text, limit))


def _array_summary(value: Any, limit: int, safe: bool) -> Summary:
    import numpy  # only reached for a numpy value, so numpy is loaded already

    header = f"ndarray shape={tuple(value.shape)} dtype={value.dtype}"
    dtype = value.dtype
    if safe and dtype.hasobject and dtype.kind != "O":  # structured, with object fields: not opened
        return Summary("ndarray", header)
    formatter: Any = (
        {"object": lambda item: safe_repr(item, safe=safe, depth=MAX_DEPTH)} if dtype.kind == "O" else None
    )
    body = numpy.array2string(
        value, threshold=MAX_ITEMS * 5, edgeitems=3, max_line_width=100, formatter=formatter
    )
    return Summary("ndarray", cut(f"{header}\n{body}", limit))


def _figure_summary(value: Any) -> Summary:
    import io

    buffer = io.BytesIO()
    value.savefig(buffer, format="png", bbox_inches="tight")
    width, height = (int(x) for x in value.get_size_inches() * value.dpi)
    return Summary(
        "figure", f"[figure {width}×{height} px, attached as an image]", (("image/png", buffer.getvalue()),)
    )
