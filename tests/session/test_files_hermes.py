"""Text files and PDFs beside images: checked before sending, staged on the real Dashboards, read by the
model.

``ask(files=)``, ``%hermes --file`` and the chat's ``send_files`` all go through
``client/dashboard/files.py``: a text file is staged with ``file.attach`` and its ``@file:`` reference goes
into the prompt, where Hermes inlines it for the model; a PDF goes to ``pdf.attach`` (pages as images) or, on
a server without ``pdftoppm``, to ``file.attach`` as well. The scripted model's request log shows what the
model got.
"""

from __future__ import annotations

import asyncio
import base64
import json
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from IPython.core.interactiveshell import InteractiveShell

from hermes_notebook.client.dashboard.files import (
    MAX_FILE_BYTES,
    MAX_FILES,
    MAX_PDF_BYTES,
    attach_files,
    prepare_files,
    prompt_with_files,
)
from hermes_notebook.errors import HermesRPCError, HermesUnsupportedAttachmentError, HermesUsageError
from hermes_notebook.notebook import Hermes
from hermes_notebook.settings import Settings
from hermes_notebook.widgets import inbound
from hermes_notebook.widgets.chat import Chat
from tests.helpers import agent_requests, eventually

pytestmark = pytest.mark.both_servers

# A one-page PDF that pdftoppm renders (where the server has it).
PDF = (
    b"%PDF-1.1\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj\n2 0 obj<</Type/Pages/Kids[3 0 R]/Count "
    b"1>>endobj\n"
    b"3 0 obj<</Type/Page/Parent 2 0 R/MediaBox[0 0 200 200]>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF\n"
)


def _user_turn(model: Any, marker: str) -> str:
    """What the model got as the user turn that mentions ``marker`` (text parts joined)."""
    for body in reversed(agent_requests(model)):
        for message in reversed(body.get("messages") or []):
            content = message.get("content")
            text = (
                content
                if isinstance(content, str)
                else " ".join(str(p.get("text", "")) for p in content or [] if isinstance(p, Mapping))
            )
            if message.get("role") == "user" and marker in text:
                return text
    raise AssertionError(f"the model never got a user turn with {marker!r}")


def test_a_pdf_and_a_text_file_reach_the_model(
    hermes_nb: Hermes, scripted_model: Any, tmp_path: Path
) -> None:
    """``ask(files=[path, (name, bytes)])``: the text file's content and the PDF (by name) are in what the
    model got, and the prompt as stored names both files."""
    tag = uuid.uuid4().hex[:8]
    notes = tmp_path / "notes.txt"
    notes.write_text(f"the secret ingredient is saffron-{tag}\n")
    reply = hermes_nb.ask(f"read the files {tag}", new=True, files=[notes, ("paper.pdf", PDF)])
    assert reply.status == "complete"
    seen = _user_turn(scripted_model, f"read the files {tag}")
    assert f"saffron-{tag}" in seen and "paper.pdf" in seen
    prompt = next(m for m in hermes_nb.history() if m["role"] == "user")["parts"][0]["text"]
    assert prompt.startswith(f"read the files {tag}\n\n") and "notes.txt" in prompt and "paper.pdf" in prompt


def test_magic_file_option(hermes_shell: InteractiveShell, scripted_model: Any, tmp_path: Path) -> None:
    """``%hermes --file PATH prompt`` attaches the file; a binary file is a one-line refusal, nothing sent."""
    tag = uuid.uuid4().hex[:8]
    data = tmp_path / "data.csv"
    data.write_text(f"name,value\nmagic-{tag},1\n")
    result = hermes_shell.run_cell(f"%hermes --new --file {data} what is in the table {tag}")
    result.raise_error()
    assert f"magic-{tag},1" in _user_turn(scripted_model, f"what is in the table {tag}")
    blob = tmp_path / "blob.bin"
    blob.write_bytes(b"\x00\x01\x02")
    assert hermes_shell.run_cell(f"%hermes --file {blob} never sent {tag}").error_in_exec is not None
    # Counted by content: Hermes may title the session in the background meanwhile (a request of its own).
    assert not any(f"never sent {tag}" in json.dumps(request) for request in scripted_model.requests)


def test_chat_sends_files_from_the_view(settings: Settings, scripted_model: Any) -> None:
    """The view's ``send_files``: the file reaches the model and the user message names it; a binary is
    refused in the notice line and nothing is sent."""
    tag = uuid.uuid4().hex[:8]
    chat = Chat(settings)
    try:
        chat.wait_ready(30)
        encoded = base64.b64encode(f"chat file says kiwi-{tag}".encode()).decode()
        chat._dispatch(
            chat,
            {
                "type": "send_files",
                "text": f"look {tag}",
                "images": [],
                "files": [{"name": "fruit.md", "data": encoded}],
            },
            [],
        )
        eventually(
            lambda: len(chat.snapshot()) == 2 and chat.snapshot()[1]["status"] == "complete", 60, "the reply"
        )
        assert f"kiwi-{tag}" in _user_turn(scripted_model, f"look {tag}")
        assert "fruit.md" in chat.snapshot()[0]["parts"][0]["text"]
        chat._dispatch(
            chat,
            {
                "type": "send_files",
                "text": "no",
                "images": [],
                "files": [{"name": "x.bin", "data": base64.b64encode(b"\x00\x00").decode()}],
            },
            [],
        )
        eventually(lambda: "binary" in chat.notice, 30, "the refusal")
        assert len(chat.snapshot()) == 2
    finally:
        chat.close()


def test_limits_and_types_are_checked_before_anything_is_sent(tmp_path: Path) -> None:
    """Too big, empty, too many, binary, an image, a fake PDF and an unreadable path are one-line refusals."""
    assert [f.kind for f in prepare_files([("a.txt", b"hi"), ("b.pdf", PDF), ("c", PDF)])] == [
        "text",
        "pdf",
        "pdf",
    ]
    cases: list[tuple[Any, type[Exception], str]] = [
        ([("big.txt", b"x" * (MAX_FILE_BYTES + 1))], HermesUsageError, "at most 25 MB"),
        ([("empty.txt", b"")], HermesUsageError, "is empty"),
        ([("f.txt", b"x")] * (MAX_FILES + 1), HermesUsageError, "too many files"),
        ([("tool.exe", b"MZ\x00\x00")], HermesUnsupportedAttachmentError, "is binary"),
        ([("latin.txt", "café".encode("latin-1"))], HermesUnsupportedAttachmentError, "not UTF-8 text"),
        ([("shot.png", b"\x89PNG\r\n\x1a\n")], HermesUnsupportedAttachmentError, "attach it with images="),
        ([("fake.pdf", b"not a pdf")], HermesUnsupportedAttachmentError, "not a PDF"),
        ([tmp_path / "missing.txt"], HermesUsageError, "cannot read the file 'missing.txt'"),
        ([("../../etc/\x07bell", b"x")], HermesUsageError, "control characters"),
        ([42], HermesUsageError, "a path or a (name, bytes) pair"),
    ]
    for files, error, text in cases:
        with pytest.raises(error, match=text.replace("(", r"\(").replace(")", r"\)")):
            prepare_files(files)
    assert prepare_files([("../secret/notes.txt", b"x")])[0].name == "notes.txt"  # a name, never a path
    assert (
        prompt_with_files("hi ", ["@file:a"]) == "hi\n\n@file:a"
        and prompt_with_files("", ["@file:a"]) == "@file:a"
    )


def test_a_path_is_checked_before_it_is_read_and_a_text_file_whole(tmp_path: Path) -> None:
    """A FIFO, a device and a folder are refused before anything is read (a FIFO used to block the kernel, and
    ``/dev/zero`` to fill its memory); a file too large by ``stat`` is never read; a text file with a NUL byte
    or bad UTF-8 past its first 64 KB is refused like one with it up front."""
    import concurrent.futures
    import os

    fifo = tmp_path / "pipe.txt"
    os.mkfifo(fifo)
    big = tmp_path / "big.txt"
    with big.open("wb") as handle:
        handle.truncate(MAX_PDF_BYTES + 1)  # sparse: stat says too big, nothing is read
    late_nul = tmp_path / "late.txt"
    late_nul.write_bytes(b"a" * 70_000 + b"\x00")
    late_latin = tmp_path / "latin.txt"
    late_latin.write_bytes(b"a" * 70_000 + "café".encode("latin-1"))
    cases: list[tuple[Path, type[Exception], str]] = [
        (fifo, HermesUsageError, "'pipe.txt' is not a regular file"),
        (Path("/dev/zero"), HermesUsageError, "'zero' is not a regular file"),
        (tmp_path, HermesUsageError, "is not a regular file"),
        (big, HermesUsageError, "at most 50 MB"),
        (late_nul, HermesUnsupportedAttachmentError, "is binary"),
        (late_latin, HermesUnsupportedAttachmentError, "not UTF-8 text"),
    ]
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        for path, error, text in cases:
            future = pool.submit(prepare_files, [path])
            try:
                with pytest.raises(error, match=text):
                    future.result(timeout=10)
            finally:
                if not future.done():  # the old code blocks on the FIFO: unblock it so the test can fail
                    os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))


def test_the_view_message_is_checked_before_decoding() -> None:
    """``send_files`` from a view: count, names and base64 size are refused before anything is decoded."""

    def send_files(files: Any) -> dict[str, Any]:
        return inbound.validate(
            {"type": "send_files", "text": "t", "images": [], "files": files}, inbound.CHAT_MESSAGES
        )

    assert send_files([{"name": "a.txt", "data": "aGk="}])["files"] == [{"name": "a.txt", "data": "aGk="}]
    for files, text in [
        ([{"name": "a.txt", "data": "aGk="}] * (inbound.MAX_FILES + 1), "too many files"),
        ([{"name": "", "data": "aGk="}], "needs a name"),
        ([{"name": "a.txt", "data": "A" * (4 * inbound.MAX_VIEW_FILE_BYTES // 3 + 8)}], "too large"),
        ([{"name": "a.txt", "data": 5}], "could not be read"),
        ("nope", "must be a list"),
    ]:
        with pytest.raises(inbound.Refused, match=text):
            send_files(files)
    with pytest.raises(inbound.Refused, match="not valid base64"):
        inbound.decode_files([{"name": "a.txt", "data": "%%%"}])


def test_a_server_without_the_method_is_told_apart() -> None:
    """-32601 for ``file.attach`` is "not offered by this Hermes"; a PDF the server cannot render (5028) is
    staged as a file instead; other errors pass through."""
    calls: list[str] = []

    async def server(answers: dict[str, Any]) -> Any:
        async def request(method: str, params: Mapping[str, Any]) -> Any:
            calls.append(method)
            answer = answers[method]
            if isinstance(answer, Exception):
                raise answer
            return answer

        return request

    async def run(answers: dict[str, Any], files: list[Any]) -> list[str]:
        return await attach_files(await server(answers), "live-1", prepare_files(files))

    missing = HermesRPCError("unknown method", code=-32601)
    with pytest.raises(HermesUsageError, match=r"not offered by this Hermes \(file.attach\)"):
        asyncio.run(run({"file.attach": missing}, [("a.txt", b"hi")]))
    no_render = HermesRPCError("pdftoppm not installed", code=5028)
    lines = asyncio.run(
        run({"pdf.attach": no_render, "file.attach": {"ref_text": "@file:p.pdf"}}, [("p.pdf", PDF)])
    )
    assert lines == ["@file:p.pdf"] and calls[-2:] == ["pdf.attach", "file.attach"]
    with pytest.raises(HermesRPCError, match="too large"):
        asyncio.run(run({"pdf.attach": HermesRPCError("too large", code=4018)}, [("p.pdf", PDF)]))
