"""File and PDF attachments for a Dashboard prompt: checked before anything is sent, then staged on the
server.

Why bytes, never a path: the Dashboard may run on another machine, so a path on ours means nothing to it.
``file.attach`` takes the bytes as a ``data_url`` and stages them in the session's ``attachments/`` folder;
its answer's ``ref_text`` (``@file:<path>``) goes into the prompt, where Hermes inlines a text file for the
model (``agent/context_references.py``). ``pdf.attach`` takes ``content_base64`` and queues the pages,
rendered to PNG, as images for the next prompt; a server without ``pdftoppm`` answers 5028, and the PDF is
then staged with ``file.attach`` instead (the model gets the reference and reads it with its tools).
Contracts: ``tui_gateway/contracts/prompt_voice.py`` (``PdfAttachParams``, ``FileAttachParams``);
docs/protocol/dashboard-newer.md §5.9.

A path is checked before it is read: ``stat`` first, regular files only (a FIFO would block the kernel
forever, ``/dev/zero`` would fill its memory), then at most the largest size allowed plus one byte is read,
through a descriptor checked again after opening (the name may have been swapped meanwhile). A text file is
checked
whole: no NUL byte and valid UTF-8 anywhere in it, not only in its first 64 KB.
"""

from __future__ import annotations

import base64
import mimetypes
import os
import stat
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from ...errors import (
    HermesError,
    HermesNotOfferedError,
    HermesRPCError,
    HermesUnsupportedAttachmentError,
    HermesUsageError,
)

__all__ = [
    "MAX_FILES",
    "MAX_FILE_BYTES",
    "MAX_PDF_BYTES",
    "FileAttachment",
    "FileInput",
    "attach_files",
    "classify",
    "prepare_files",
    "prompt_with_files",
    "read_file",
]

#: Largest text file: what ``image.attach_bytes`` allows an image (a bigger one would not fit a model's
# context).
MAX_FILE_BYTES = 25 * 1024 * 1024
#: ``pdf.attach``'s own cap (``tui_gateway/prompt_attachments.py`` ``_PDF_ATTACH_MAX_BYTES``); we refuse
# first.
MAX_PDF_BYTES = 50 * 1024 * 1024
#: Files per prompt (as many as images).
MAX_FILES = 8
#: Every PDF starts so; ``pdf.attach`` refuses bytes that do not (4017).
PDF_MAGIC = b"%PDF-"
#: A name longer than this is refused (file systems stop at 255 bytes).
MAX_NAME_CHARS = 200
NO_PDFTOPPM = 5028  # pdf.attach: "pdftoppm not installed" (or it failed to render)
METHOD_NOT_FOUND = -32601

FileInput = str | os.PathLike[str] | tuple[str, bytes]
Request = Callable[[str, Mapping[str, Any]], Awaitable[Any]]


@dataclass(frozen=True, slots=True)
class FileAttachment:
    """A checked attachment: its name (no folders), bytes, and whether it is a PDF or a text file."""

    name: str
    data: bytes
    kind: Literal["pdf", "text"]


def classify(name: str, data: bytes) -> Literal["pdf", "text"]:
    """``pdf`` or ``text`` by content (a ``.pdf`` name must hold a PDF), else a one-line refusal."""
    if data.startswith(PDF_MAGIC):
        return "pdf"
    if name.lower().endswith(".pdf"):
        raise HermesUnsupportedAttachmentError(f"{name!r} is named .pdf but is not a PDF")
    if (mimetypes.guess_type(name)[0] or "").startswith("image/"):
        raise HermesUnsupportedAttachmentError(f"{name!r} is an image: attach it with images=")
    if b"\x00" in data:
        raise HermesUnsupportedAttachmentError(
            f"only text files and PDFs can be attached; {name!r} is binary"
        )
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        raise HermesUnsupportedAttachmentError(
            f"only text files (UTF-8) and PDFs can be attached; {name!r} is not UTF-8 text"
        ) from None
    return "text"


def read_file(path: Path) -> bytes:
    """The bytes of a regular file, at most :data:`MAX_PDF_BYTES` + 1 of them (module docstring: stat
    first)."""
    name = path.name
    try:
        info = os.stat(path)
    except OSError as exc:
        raise HermesUsageError(f"cannot read the file {name!r}: {exc.strerror}") from exc
    if not stat.S_ISREG(info.st_mode):
        raise HermesUsageError(
            f"{name!r} is not a regular file: only files can be attached (not a folder, a pipe or a device)"
        )
    if info.st_size > MAX_PDF_BYTES:
        raise HermesUsageError(
            f"{name!r} is {info.st_size:,} bytes; at most {MAX_PDF_BYTES // (1024 * 1024)} MB"
        )
    try:
        fd = os.open(
            path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)
        )  # a FIFO swapped in: open does not block
    except OSError as exc:
        raise HermesUsageError(f"cannot read the file {name!r}: {exc.strerror}") from exc
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            raise HermesUsageError(f"{name!r} is not a regular file: only files can be attached")
        return handle.read(MAX_PDF_BYTES + 1)


def _checked_name(name: str) -> str:
    clean = Path(name.replace("\\", "/")).name.strip()
    if not clean or clean in (".", ".."):
        raise HermesUsageError("an attached file needs a name")
    if len(clean) > MAX_NAME_CHARS or any(ord(c) < 32 for c in clean):
        raise HermesUsageError("an attached file's name is too long or holds control characters")
    return clean


def prepare_files(files: Iterable[FileInput] | None) -> list[FileAttachment]:
    """Check every attachment before anything is sent: paths or ``(name, bytes)`` pairs; text files and
    PDFs."""
    out: list[FileAttachment] = []
    for item in files or ():
        if isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], str):
            name, data = item
            if not isinstance(data, (bytes, bytearray, memoryview)):
                raise HermesUsageError(f"the file {name!r} must be given as bytes, not {type(data).__name__}")
            data = bytes(data)
        elif isinstance(item, (str, os.PathLike)):
            path = Path(item)
            name = path.name
            data = read_file(path)
        else:
            raise HermesUsageError(
                f"a file must be a path or a (name, bytes) pair, not {type(item).__name__}"
            )
        name = _checked_name(name)
        if not data:
            raise HermesUsageError(f"the file {name!r} is empty")
        kind = classify(name, data)
        limit = MAX_PDF_BYTES if kind == "pdf" else MAX_FILE_BYTES
        if len(data) > limit:
            raise HermesUsageError(f"{name!r} is {len(data):,} bytes; at most {limit // (1024 * 1024)} MB")
        out.append(FileAttachment(name, data, kind))
    if len(out) > MAX_FILES:
        raise HermesUsageError(f"too many files ({len(out)}; at most {MAX_FILES} per prompt)")
    return out


def _not_offered(exc: HermesRPCError, method: str) -> HermesError:
    if exc.code == METHOD_NOT_FOUND:
        return HermesNotOfferedError("file attachments", method)
    return exc


async def attach_files(request: Request, live_id: str, files: Iterable[FileAttachment]) -> list[str]:
    """Stage each file on the server for the session's next prompt; returns the lines to add to the prompt."""
    lines: list[str] = []
    for item in files:
        b64 = base64.b64encode(item.data).decode("ascii")
        if item.kind == "pdf":
            try:
                result = await request(
                    "pdf.attach", {"session_id": live_id, "content_base64": b64, "filename": item.name}
                )
                lines.append(str(result.get("text") or f"[User attached PDF: {item.name}]"))
                continue
            except HermesRPCError as exc:
                if exc.code != NO_PDFTOPPM:
                    raise _not_offered(exc, "pdf.attach") from None
        mime = "application/pdf" if item.kind == "pdf" else "text/plain"
        params = {"session_id": live_id, "data_url": f"data:{mime};base64,{b64}", "name": item.name}
        try:
            result = await request("file.attach", params)
        except HermesRPCError as exc:
            raise _not_offered(exc, "file.attach") from None
        lines.append(str(result["ref_text"]))
    return lines


def prompt_with_files(text: str, lines: Iterable[str]) -> str:
    """The prompt as sent: the user's text, then one line per attachment (``@file:`` refs, PDF notes)."""
    extra = "\n".join(lines)
    return f"{text.rstrip()}\n\n{extra}" if extra and text.strip() else extra or text
