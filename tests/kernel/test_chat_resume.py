"""The restart's chat resume hint (kernel/chat_resume.py): used once, only by a restarted kernel of the same
notebook and profile, only while fresh; and a real chat opened without a session takes it, resuming the
session with its history, or opens a new one without a word when that session is gone."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from hermes_notebook._demo.local_hermes import LocalHermes
from hermes_notebook.kernel.chat_resume import ENV_SESSION_NAME, HINT_TTL, ChatResumeHints, notebook_of
from hermes_notebook.kernel.document import DocumentLink
from hermes_notebook.widgets import Chat
from tests.helpers import eventually
from tests.scripted_front_end import ScriptedFrontEnd


class Clock:
    """A settable time and process id (a restarted kernel is another process)."""

    def __init__(self) -> None:
        self.now, self.pid = 1000.0, 11

    def hints(self, directory: Path) -> ChatResumeHints:
        return ChatResumeHints(directory, clock=lambda: self.now, pid=lambda: self.pid)


def test_a_hint_is_taken_once_by_a_restarted_kernel_of_its_notebook_and_profile(tmp_path: Path) -> None:
    """leave() writes a private file without secrets; the writing kernel itself, another notebook or another
    profile never take the hint; the restarted kernel takes it once; an expired hint is dropped; an unknown
    notebook leaves nothing; a newer hint of the same notebook replaces the older one."""
    clock = Clock()
    hints = clock.hints(tmp_path)
    assert hints.leave("", "work", "s-1") is False and not hints.path.exists()  # the notebook is unknown
    assert hints.leave("/home/u/a.ipynb", "work", "s-old") is True
    assert hints.leave("/home/u/a.ipynb", "work", "s-1") is True  # replaces s-old
    assert hints.leave("/home/u/b.ipynb", None, "s-2") is True
    assert stat.S_IMODE(hints.path.stat().st_mode) == 0o600
    stored = json.loads(hints.path.read_text(encoding="utf-8"))
    assert [h["session"] for h in stored] == ["s-1", "s-2"]
    assert set(stored[0]) == {"notebook", "profile", "session", "at", "pid"}

    assert hints.take("work", "/home/u/a.ipynb") is None  # the kernel that wrote it was not restarted
    clock.pid = 12  # the restarted kernel
    assert hints.take("other", "/home/u/a.ipynb") is None  # another profile
    assert hints.take("work", "/home/u/c.ipynb") is None  # another notebook
    assert hints.take(None, "/home/u/a.ipynb") is None  # the default profile is another profile
    assert hints.take("work", "/home/u/a.ipynb") == "s-1"
    assert hints.take("work", "/home/u/a.ipynb") is None  # used up: the next chat opens a new session
    clock.now += HINT_TTL + 1
    assert hints.take(None, "/home/u/b.ipynb") is None  # expired
    assert not hints.path.exists()  # nothing left behind

    hints.path.write_text("not json", encoding="utf-8")  # a damaged file is ignored, then replaced
    assert hints.take("work", "/home/u/a.ipynb") is None
    assert hints.leave("/home/u/a.ipynb", "work", "s-3") and json.loads(hints.path.read_text())[0]["session"]


def test_the_notebook_is_jupyters_name_else_the_pages_path() -> None:
    """JPY_SESSION_NAME (the same after a restart) names the notebook; without it the page's path does."""
    link = DocumentLink()
    assert notebook_of(link, {}) == ""
    ScriptedFrontEnd(link).hello()
    assert notebook_of(link, {}) == "scripted.ipynb"
    assert notebook_of(link, {ENV_SESSION_NAME: "/srv/nb/a.ipynb"}) == "/srv/nb/a.ipynb"


def test_a_chat_opened_after_the_restart_resumes_the_hinted_session(
    hermes: LocalHermes, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A chat without a session in the restarted kernel resumes the hinted session with its history; the
    next one opens a new session; one given a session ignores a hint; a hint naming a session the server no
    longer has opens a new session with no notice."""
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(tmp_path))  # where the chat's RESUME_HINTS look
    monkeypatch.setenv(ENV_SESSION_NAME, str(tmp_path / "restarted.ipynb"))
    settings = hermes.settings()
    old_kernel = ChatResumeHints(pid=lambda: -1)  # the kernel that asked for the restart
    first = Chat(settings).wait_ready(30)
    try:
        first.send_prompt("before the restart")
        eventually(lambda: not first.busy and len(first.snapshot()) >= 2, 60, "the first turn")
        asked = first.session_id
    finally:
        first.close()
    assert asked is not None and old_kernel.leave(notebook_of(), settings.profile, asked)
    chats: list[Chat] = []
    try:
        chats.append(Chat(settings).wait_ready(30))  # the re-run chat cell
        assert chats[0].session_id == asked and chats[0].notice == ""
        assert "before the restart" in json.dumps(chats[0].snapshot())
        chats.append(Chat(settings).wait_ready(30))  # the hint was used up
        assert chats[1].session_id not in (None, asked) and chats[1].snapshot() == []

        old_kernel.leave(notebook_of(), settings.profile, "given-not-taken")
        chats.append(Chat(settings, session=asked).wait_ready(30))  # a session given: the hint stays
        assert chats[2].session_id == asked and "given-not-taken" in old_kernel.path.read_text()
        old_kernel.leave(notebook_of(), settings.profile, "no-such-session-0000")  # replaces the hint above
        chats.append(Chat(settings).wait_ready(30))
        assert chats[3].session_id not in (None, asked, "no-such-session-0000")
        assert chats[3].notice == "" and chats[3].snapshot() == []
        assert not old_kernel.path.exists()  # each hint was used up
    finally:
        for chat in chats:
            chat.close()
