"""Exports of a conversation: Markdown, HTML and .ipynb that read well elsewhere and hold no secret."""

from __future__ import annotations

import json
import uuid
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import nbformat
import pytest

from hermes_notebook import connect
from hermes_notebook.errors import HermesUsageError
from hermes_notebook.export import enrich, export_messages, scrub, to_html, to_ipynb, to_markdown
from hermes_notebook.notebook import Reply


def _message(role: str, *parts: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"role": role, "status": "complete", "parts": list(parts), **extra}


def _text(text: str) -> dict[str, Any]:
    return {"kind": "text", "text": text}


TOOL = {
    "kind": "tool",
    "name": "terminal",
    "status": "complete",
    "arguments": {"command": "rm -rf ./x"},
    "duration": 0.25,
    "result": {"output": "", "exit_code": 0},
    "interaction": {"kind": "approval", "command": "rm -rf ./x", "status": "answered", "response": "once"},
}
CONVERSATION = [
    _message("user", _text("first <b>question</b>")),
    _message(
        "assistant",
        TOOL,
        _text("Done. <script>alert(1)</script> `<kept>`\n```\n<also kept>\n```"),
        usage={"input": 10, "output": 5, "total": 15},
    ),
]


def test_markdown_collapses_tools_keeps_usage_and_escapes_html() -> None:
    """Tools collapse, usage stays; model text holding HTML is a literal block in a fence longer than its
    own."""
    text = to_markdown(CONVERSATION, title="My run")
    assert text.startswith("# My run\n\n### You\n\n```\nfirst <b>question</b>\n```")
    # The summary reads as written in the file: the command, no character references.
    assert "<details><summary>Tool terminal(rm -rf ./x) — complete, 0.25 s</summary>" in text
    assert "` approval: rm -rf ./x [answered → once] `" in text
    assert "````\nDone. <script>alert(1)</script> `<kept>`\n```\n<also kept>\n```\n````" in text
    assert "<sub>tokens: in 10, out 5, total 15</sub>" in text
    assert text.index("### You") < text.index("### Hermes")


def test_html_is_a_page_without_live_markup() -> None:
    """Html is a page without live markup."""
    page = to_html(CONVERSATION, title="My <run>")
    assert page.startswith("<!DOCTYPE html>") and "<title>My &lt;run&gt;</title>" in page
    assert "<script>" not in page and "&lt;script&gt;" in page
    HTMLParser().feed(page)


def test_ipynb_has_a_cell_per_prompt_and_reply_and_validates() -> None:
    """Ipynb has a cell per prompt and reply and validates."""
    notebook = nbformat.from_dict(to_ipynb(CONVERSATION))
    nbformat.validate(notebook)
    assert [c.metadata["hermes"]["role"] for c in notebook.cells] == ["user", "assistant"]
    assert notebook.cells[1].metadata["hermes"]["usage"] == {"input": 10, "output": 5, "total": 15}


@pytest.mark.parametrize(
    "secret",
    [
        "sk-abcdefghijklmnopqrstuvwx",
        "ghp_abcdefghijklmnopqrstuvwxyz0123",
        "Bearer abc.def.ghi",
        "api_key=hunter2hunter2",
        "AKIAABCDEFGHIJKLMNOP",
        "hf_AbCdEfGhIjKlMnOpQrStUvWxYz012345",
        "sk_live_51HxYzAbCdEfGhIjKlMnOpQr",
        "AIzaSyD-1234567890abcdefghijklmnopqrstu",
        "github_pat_11ABCDEFG0123456789_abcdefghijklmnop",
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
    ],
)
def test_scrub_removes_key_shapes(secret: str) -> None:
    """Scrub removes key shapes."""
    assert secret not in scrub(f"before {secret} after")


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("Config(password='hunter2hunter2', host='db')", "hunter2hunter2"),  # a dataclass repr
        ("{'api_key': 'abcdef1234567890', 'token_count': '123456789'}", "abcdef1234567890"),  # a dict repr
        (
            '{"AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"}',
            "wJalrXUtnFEMI",
        ),  # an environment
        ('client = OpenAI(api_key="abcd1234efgh5678ijkl")', "abcd1234efgh5678ijkl"),  # cell source
        ("postgresql://analyst:s3cr3t-pw@db.example:5432/sales", "s3cr3t-pw"),  # a DSN
        (
            "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAxyz0123456789\n-----END RSA PRIVATE KEY-----",
            "MIIEow",
        ),
    ],
)
def test_scrub_removes_secrets_in_the_forms_reads_produce(text: str, secret: str) -> None:
    """Quoted names and values, an environment dict, URL passwords and PEM blocks lose the secret, keep the
    rest."""
    scrubbed = scrub(text)
    assert secret not in scrubbed and "********" in scrubbed
    assert "token_count': '123456789'" in scrub("{'token_count': '123456789'}")  # a count is not a token


@pytest.mark.parametrize(
    "code",
    [
        "import json\ntoken=exec(chr(111)+chr(115))\njson.dumps(summary)",
        "API_KEY=$(echo${IFS}x) rm -rf ./dir",
        'api_key = os.environ["OPENAI_API_KEY"]',
        "password = getpass.getpass()",
        "pad_token = '[PAD]'",
    ],
)
def test_code_is_not_taken_for_a_key(code: str) -> None:
    """A value is key characters only: code after ``token=`` (a call, a subscript, a substitution) is not a
    key, so a saved card shows it as it ran instead of ``token=********``."""
    assert scrub(code) == code


def test_scrub_removes_the_given_secrets() -> None:
    """Scrub removes the given secrets."""
    assert scrub("token is abcd-1234-efgh", ["abcd-1234-efgh"]) == "token is ********"


def test_secrets_are_scrubbed_before_escaping_could_hide_them() -> None:
    """A secret in a tool's arguments, an error or the title is gone from every format, escaped or not."""
    secret = "abcd-1234-efgh"
    message = _message(
        "assistant",
        {**TOOL, "arguments": {"command": f"curl -u me:{secret} x"}},
        status="error",
        error=f"login with {secret} failed",
    )
    for text in (
        to_markdown([message], title=f"run {secret}", secrets=[secret]),
        json.dumps(to_ipynb([message], title=f"run {secret}", secrets=[secret])),
        to_html([message], title=f"run {secret}", secrets=[secret]),
    ):
        assert "1234" not in text  # neither the secret nor its escaped form (abcd&#45;1234&#45;efgh)


def test_format_comes_from_the_suffix(tmp_path: Path) -> None:
    """Format comes from the suffix."""
    for name in ("a.md", "b.html", "c.ipynb"):
        assert export_messages(CONVERSATION, tmp_path / name).stat().st_size > 100
    assert json.loads((tmp_path / "c.ipynb").read_text())["nbformat"] == 4
    with pytest.raises(HermesUsageError, match=r"cannot tell the export format of 'd.txt'"):
        export_messages(CONVERSATION, tmp_path / "d.txt")


def test_enrich_puts_live_replies_in_place_of_stored_copies() -> None:
    """Enrich puts live replies in place of stored copies."""
    stored = [
        _message("user", _text("q1")),
        _message("assistant", _text("a1")),
        _message("user", _text("q2")),
        _message("assistant", {"kind": "tool", "name": "t"}, _text("a2")),
    ]
    live = Reply(_message("assistant", TOOL, _text("a2"), usage={"total": 3}), prompt="q2")
    merged = enrich(stored, [live])
    assert merged[:3] == stored[:3]
    assert merged[3]["usage"] == {"total": 3} and merged[3]["parts"][0]["interaction"]["response"] == "once"


def test_reply_to_markdown_has_prompt_and_answer() -> None:
    """Reply to markdown has prompt and answer."""
    reply = Reply(_message("assistant", _text("the answer")), prompt="the question")
    assert reply.to_markdown() == "### You\n\nthe question\n\n### Hermes\n\nthe answer\n"


# --- against the real servers
# ------------------------------------------------------------------------------------


def test_export_of_a_session_with_a_tool_call_and_an_approval(hermes_factory: Any, tmp_path: Path) -> None:
    """Export of a session with a tool call and an approval."""
    hermes = hermes_factory()  # its own server: the secrets typed below must not reach other tests' sessions
    client = connect(hermes.settings())
    try:
        marker = f"export-{uuid.uuid4().hex[:8]}"
        first = client.ask(
            f"{marker} my key is {hermes.api_key} and token {hermes.dashboard_token}", new=True
        )
        assert first.ok
        danger = client.ask("DANGER", approve="deny")
        assert danger.tools and danger.tools[0]["interaction"]["kind"] == "approval"
        assert client.ask("RUN echo exported-output").ok
        paths = [client.export(None, tmp_path / f"conversation.{ext}") for ext in ("md", "html", "ipynb")]
    finally:
        client.close()
    for path in paths:
        text = path.read_text(encoding="utf-8")
        assert hermes.api_key not in text and hermes.dashboard_token not in text, path.name
        order = [
            text.index(marker),
            text.index("DANGER"),
            text.index("Dangerous command was blocked"),
            text.index("echo exported-output"),
        ]
        assert order == sorted(order), path.name
    markdown = paths[0].read_text()
    assert "` approval: rm -rf ./hermes-danger-demo [answered → deny] `" in markdown
    assert "<summary>Tool terminal(" in markdown and "tokens: in" in markdown
    notebook = nbformat.read(paths[2], as_version=4)
    nbformat.validate(notebook)
    assert [c.metadata["hermes"]["role"] for c in notebook.cells] == ["user", "assistant"] * 3
    assert any("usage" in c.metadata["hermes"] for c in notebook.cells)
    HTMLParser().feed(paths[1].read_text())


# --- where an export writes
# ---------------------------------------------------------------------------------------


def test_an_existing_file_is_replaced_only_when_asked(tmp_path: Path) -> None:
    """Writing over a file is refused with an error naming it; ``overwrite=True`` replaces it whole."""
    target = tmp_path / "conversation.md"
    target.write_text("my notes\n", encoding="utf-8")
    with pytest.raises(HermesUsageError, match="conversation.md already exists: pass overwrite=True"):
        export_messages(CONVERSATION, target)
    assert target.read_text(encoding="utf-8") == "my notes\n"
    export_messages(CONVERSATION, target, overwrite=True)
    assert "first" in target.read_text(encoding="utf-8") and "my notes" not in target.read_text(
        encoding="utf-8"
    )
    assert [p.name for p in tmp_path.iterdir()] == ["conversation.md"]  # no temp file left behind


@pytest.mark.parametrize("overwrite", [False, True])
def test_an_export_never_writes_through_a_symbolic_link(tmp_path: Path, overwrite: bool) -> None:
    """A path that is a symbolic link is refused (even with overwrite=True); the file it points at is
    untouched."""
    elsewhere = tmp_path / "elsewhere.md"
    elsewhere.write_text("keep me\n", encoding="utf-8")
    link = tmp_path / "conversation.md"
    link.symlink_to(elsewhere)
    with pytest.raises(HermesUsageError, match="conversation.md is a symbolic link"):
        export_messages(CONVERSATION, link, overwrite=overwrite)
    assert elsewhere.read_text(encoding="utf-8") == "keep me\n" and link.is_symlink()
    dangling = tmp_path / "dangling.md"
    dangling.symlink_to(tmp_path / "nowhere.md")
    with pytest.raises(HermesUsageError, match="symbolic link"):
        export_messages(CONVERSATION, dangling, overwrite=overwrite)
    assert not (tmp_path / "nowhere.md").exists()


def test_the_export_button_picks_a_fresh_name_instead_of_replacing_a_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two exports within the same second get ``-1``, ``-2`` names; the first file is never replaced."""
    from hermes_notebook.widgets import chat_export

    class Conversation:  # what export_chat reads of a chat widget
        session = {"id": "20260101_000000_abcdef", "title": "t"}

        def snapshot(self) -> list[dict[str, Any]]:
            return CONVERSATION

    monkeypatch.setattr(chat_export.time, "strftime", lambda _format: "20260101-000000")
    first = chat_export.export_chat(Conversation(), "md", tmp_path)
    first.write_text("edited by hand\n", encoding="utf-8")
    names = [chat_export.export_chat(Conversation(), "md", tmp_path).name for _ in range(2)]
    assert names == [
        "hermes-chat-20260101_000000_abcdef-20260101-000000-1.md",
        "hermes-chat-20260101_000000_abcdef-20260101-000000-2.md",
    ]
    assert first.read_text(encoding="utf-8") == "edited by hand\n"


def test_a_replys_bundle_and_repr_hold_no_key(hermes_factory: Any) -> None:
    """A real turn whose tool output prints an ``sk-`` key, an ``API_SERVER_KEY=`` assignment and the
    connection's own API key: the Reply's static transcript (what a saved notebook keeps), repr and Markdown
    hold none."""
    hermes = hermes_factory()  # its own server: the key typed below must not reach other tests' sessions
    shaped = "sk-" + uuid.uuid4().hex + uuid.uuid4().hex[:8]
    assignment = uuid.uuid4().hex
    client = connect(hermes.settings())
    try:
        reply = client.ask(f"RUN echo {shaped} API_SERVER_KEY={assignment} {hermes.api_key}", new=True)
    finally:
        client.close()
    assert reply.ok and reply.tools
    shown = json.dumps([reply.bundle(), repr(reply), reply.to_markdown()])
    for secret in (shaped, assignment, hermes.api_key):
        assert secret not in shown
    assert "API_SERVER_KEY=********" in shown


def test_embedded_image_bytes_are_never_scrubbed_but_the_text_around_them_is(tmp_path: Path) -> None:
    """An export with ``images=True`` embeds an inline image's base64 as it is, even where it happens to hold
    a key shape (``/AIza`` + 30 characters: about one 5 MB image in 200 does); the alt text and the reply's
    text are scrubbed; a payload that is not an image's base64 is never embedded."""
    import base64

    from hermes_notebook._demo.script import IMAGE_PNG

    padded = IMAGE_PNG + b"\0" * (-len(IMAGE_PNG) % 3)
    # base64 whose text holds two key shapes
    tail = "/AIzaSyA12345678901234567890123456789012+AKIAABCDEFGHIJKLMNOP/xy"
    data = base64.b64encode(padded + base64.b64decode(tail)).decode()
    assert data.endswith(tail)
    image = {
        "source": "inline",
        "mime": "image/png",
        "data": data,
        "path": None,
        "url": None,
        "alt": "chart sk-abcdefghijklmnopqrstuvwx",
        "bytes": 70,
        "note": None,
    }
    fake = {**image, "data": "sk-abcdefghijklmnopqrstuvwx", "alt": "fake"}
    message = {
        "id": "a",
        "role": "assistant",
        "status": "complete",
        "parts": [
            {"kind": "text", "id": "t", "text": "key sk-abcdefghijklmnopqrstuvwx", "images": [image, fake]}
        ],
    }
    for fmt in ("md", "html", "ipynb"):
        text = export_messages([message], tmp_path / f"x.{fmt}", images=True).read_text()
        stored = json.loads(text)["cells"][0]["source"] if fmt == "ipynb" else text
        assert f"data:image/png;base64,{data}" in stored, fmt
        assert "sk-abcdefghijklmnopqrstuvwx" not in stored and stored.count("data:image/png") == 1, fmt
        plain = export_messages([message], tmp_path / f"y.{fmt}").read_text()
        assert data not in plain and "chart" in plain, fmt


def test_tool_summaries_read_as_written_and_stay_inert() -> None:
    """An export's tool summary names a kernel tool as a person reads it, with no character references; a
    hostile name or argument is still HTML-escaped, and `$` cannot start math."""
    kernel = {
        "kind": "tool",
        "name": "mcp__notebook_2f7ef78f__describe",
        "status": "completed",
        "arguments": {"name": "sales"},
        "duration": 0.08,
        "result": {"result": "sales (DataFrame):\nrevenue: float64"},
    }
    text = to_markdown([_message("assistant", kernel)])
    assert "<summary>Tool notebook: describe(sales) — completed, 0.08 s</summary>" in text
    assert "&#" not in text.split("<summary>")[1].split("</summary>")[0]
    assert "```\nsales (DataFrame):\nrevenue: float64\n```" in text  # the result's text, not its JSON
    hostile = {**kernel, "name": "x</summary><img src=x onerror=alert(1)>", "arguments": {"name": "$\\pi$"}}
    summary = to_markdown([_message("assistant", hostile)]).split("<summary>")[1].split("</summary>")[0]
    assert "<img" not in summary and "&lt;img" in summary and "$" not in summary and "&#36;" in summary
