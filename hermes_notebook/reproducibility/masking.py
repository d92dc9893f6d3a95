"""What of a cell's output may differ between two faithful runs, masked, so only real changes compare.

Pure (no I/O): an output (an nbformat output dict, saved or fresh) becomes the lines a comparison reads.
Volatile parts are replaced by a fixed token: execution counts (``Out[3]``, ``Cell In[3]``), timings
(``1.2 ms``, ``Wall time: 3 s``, ``%timeit``'s loop counts), memory addresses (``0x7f3a...``) and object ids
(``id=140234...``, ``<Foo object at 0x...>``), a widget's model id (also where a chat's saved transcript
names it). Metadata and execution counts are not compared at all. Binary outputs (images) compare by their
bytes, shown as a line naming the type and size.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

__all__ = ["ANSI", "MASKS", "Mask", "cell_lines", "mask", "output_lines"]

Mask = tuple["re.Pattern[str]", str]

_UNIT = r"(?:ns|µs|μs|us|ms|s|sec|secs|seconds?|min|mins|minutes?|h|hours?)"

#: The volatile parts, in order: each pattern's matches become its token.
MASKS: tuple[Mask, ...] = (
    # %timeit: "1.23 µs ± 4.5 ns per loop (mean ± std. dev. of 7 runs, 1,000,000 loops each)"
    (re.compile(r"[\d,]+ loops? each"), "<N> loops each"),
    (re.compile(r"of \d+ runs?,"), "of <N> runs,"),
    (re.compile(rf"\b\d+(?:\.\d+)?(?:e[+-]?\d+)?\s?{_UNIT}(?![A-Za-z])"), "<time>"),
    (re.compile(r"\b0x[0-9a-fA-F]{4,}\b"), "0x<address>"),
    (re.compile(r"\b(id|object_id|model_id)([=:]\s*['\"]?)[0-9a-fA-F-]{6,}"), r"\1\2<id>"),
    (re.compile(r"\b(In|Out|Cell In)\s?\[\d*\]"), r"\1[<n>]"),
    # a saved chat's static transcript names the widget it twins: new in every kernel (widgets/chat.py)
    (re.compile(r'(data-hn-transcript=")[^"]*'), r"\1<id>"),
)

#: Terminal colour codes in tracebacks (IPython colours them; a saved notebook keeps them).
ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")

_TEXT_TYPES = ("text/", "application/json", "application/javascript", "image/svg+xml")
_WIDGET = "application/vnd.jupyter.widget-view+json"


def mask(text: str, extra: Sequence[Mask] = ()) -> str:
    """``text`` with every volatile part replaced by its token (colour codes dropped, then ``MASKS``, then
    the caller's own ``extra`` masks)."""
    text = ANSI.sub("", text)
    for pattern, token in (*MASKS, *extra):
        text = pattern.sub(token, text)
    return text


def _text(value: Any) -> str:
    """nbformat keeps multi-line strings either whole or as a list of lines."""
    if isinstance(value, list):
        return "".join(str(part) for part in value)
    return "" if value is None else str(value)


def _bundle_lines(data: Mapping[str, Any], extra: Sequence[Mask]) -> list[str]:
    lines: list[str] = []
    for mime in sorted(data):
        value = data[mime]
        if mime == _WIDGET:
            lines.append(f"[{mime}: a widget]")  # its model id is new in every kernel
        elif isinstance(value, dict):  # application/json and friends: compared as sorted JSON
            lines.append(f"[{mime}]")
            lines.extend(mask(json.dumps(value, sort_keys=True, indent=1, default=str), extra).splitlines())
        elif mime.startswith(_TEXT_TYPES):
            lines.append(f"[{mime}]")
            lines.extend(mask(_text(value), extra).splitlines())
        else:  # base64 images and other binaries: their bytes, named by size and digest
            raw = _text(value).replace("\n", "")
            digest = hashlib.sha256(raw.encode()).hexdigest()[:12]
            lines.append(f"[{mime}: {len(raw)} base64 characters, sha256 {digest}]")
    return lines


def output_lines(output: Mapping[str, Any], extra: Sequence[Mask] = ()) -> list[str]:
    """One output as masked lines: a stream's text, a result's or display's mime bundle, an error's name and
    message (its traceback is not compared: its frames name files and line numbers of this machine)."""
    kind = output.get("output_type")
    if kind == "stream":
        return [f"[{output.get('name', 'stdout')}]", *mask(_text(output.get("text")), extra).splitlines()]
    if kind in ("execute_result", "display_data", "update_display_data"):
        return _bundle_lines(output.get("data") or {}, extra)
    if kind == "error":
        error = f"{output.get('ename', '')}: {output.get('evalue', '')}"
        return [f"[error] {mask(error, extra)}"]
    return [f"[{kind}]"]


def cell_lines(outputs: Iterable[Mapping[str, Any]], extra: Sequence[Mask] = ()) -> list[str]:
    """A cell's outputs as masked lines; consecutive stream outputs of one name join first (a kernel may
    split the same printed text into chunks differently on each run)."""
    merged: list[dict[str, Any]] = []
    for output in outputs:
        last = merged[-1] if merged else None
        if (
            output.get("output_type") == "stream"
            and last is not None
            and last.get("output_type") == "stream"
            and last.get("name") == output.get("name")
        ):
            last["text"] = _text(last.get("text")) + _text(output.get("text"))
        else:
            merged.append(dict(output))
    return [line for output in merged for line in output_lines(output, extra)]
