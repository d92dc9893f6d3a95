"""Saved transcripts show the task list, subagents and tool diffs readably without a kernel
(render_activity.py)."""

from __future__ import annotations

from typing import Any

from hermes_notebook.notebook.results import Reply
from hermes_notebook.render import transcript_html, transcript_markdown, transcript_text

MESSAGE: dict[str, Any] = {
    "id": "assistant:t",
    "role": "assistant",
    "status": "complete",
    "usage": None,
    "error": None,
    "parts": [
        {
            "id": "tool:p1",
            "kind": "tool",
            "text": "",
            "name": "patch",
            "status": "completed",
            "arguments": None,
            "preview": "f.txt",
            "result": None,
            "duration": 0.5,
            "interaction": None,
            "diff": "a/f.txt → b/f.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+TWO <script>",
        },
        {
            "id": "todo",
            "kind": "todo",
            "text": "",
            "name": None,
            "status": None,
            "arguments": None,
            "preview": None,
            "result": None,
            "duration": None,
            "interaction": None,
            "todos": [
                {"id": "1", "content": "Read <b>x</b>", "status": "completed", "parent": None},
                {"id": "2", "content": "Write", "status": "in_progress", "parent": None},
                {"id": "3", "content": "Ship", "status": "pending", "parent": "2"},
            ],
        },
        {
            "id": "subagent:sa-1",
            "kind": "subagent",
            "text": "",
            "name": None,
            "status": "completed",
            "arguments": None,
            "preview": None,
            "result": None,
            "duration": 0.61,
            "interaction": None,
            "subagent": {
                "id": "sa-1",
                "parent_id": None,
                "depth": 0,
                "goal": "RUN echo child",
                "status": "completed",
                "model": "fake-model",
                "task_index": 0,
                "task_count": 1,
                "activity": None,
                "tools": [{"name": "terminal", "preview": "echo child"}],
                "summary": "child said hi",
            },
        },
        {
            "id": "subagent:sa-2",
            "kind": "subagent",
            "text": "",
            "name": None,
            "status": "error",
            "arguments": None,
            "preview": None,
            "result": None,
            "duration": None,
            "interaction": None,
            "subagent": {
                "id": "sa-2",
                "parent_id": "sa-1",
                "depth": 1,
                "goal": "nested",
                "status": "timeout",
                "model": None,
                "task_index": 0,
                "task_count": 1,
                "activity": None,
                "tools": [],
                "summary": None,
            },
        },
    ],
}


def test_plain_text_shows_a_checklist_a_subagent_tree_and_the_diff() -> None:
    """text/plain: ``[x]``/``[~]``/``[ ]`` items, subagents indented by depth with their tools, diff lines."""
    text = transcript_text([MESSAGE])
    assert "[plan]\n  [x] Read <b>x</b>\n  [~] Write\n    [ ] Ship" in text
    assert (
        "[subagent: RUN echo child [completed, 0.61 s]]\n  tool: terminal(echo child)\n  > child said hi"
        in text
    )
    assert "  [subagent: nested [timeout]]" in text
    assert "  -two\n  +TWO <script>" in text


def test_markdown_escapes_item_text_and_fences_the_diff() -> None:
    """text/markdown: a task list with escaped text, the diff in a ``diff`` fence."""
    md = transcript_markdown([MESSAGE])
    assert "- [x] Read &#60;b&#62;x&#60;&#47;b&#62;" in md
    assert "```diff\na/f.txt → b/f.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+TWO <script>\n```" in md
    assert "_subagent&#58; RUN echo child &#91;completed&#44; 0&#46;61 s&#93;_" in md


def test_html_colours_diff_lines_by_class_and_escapes_everything() -> None:
    """text/html: each diff line a classed row (never server markup), items with their status, a collapsible
    subagent card indented by depth."""
    html = transcript_html([MESSAGE])
    assert '<div class="hn-diff-add">+TWO &lt;script&gt;</div>' in html
    assert '<div class="hn-diff-del">-two</div>' in html and '<div class="hn-diff-hunk">' in html
    assert '<li data-status="completed">[x] Read &lt;b&gt;x&lt;/b&gt;' in html
    assert 'class="hn-subagent" style="margin-left:16px" data-status="error"' in html
    assert "<summary>subagent: nested [timeout]</summary>" in html


def test_a_reply_shows_the_new_parts_and_names_them() -> None:
    """``Reply`` (what ``ask`` returns) displays the checklist and the diff, and hands them to scripts."""
    reply = Reply(MESSAGE)
    html = reply.bundle()["text/html"]
    assert "hn-todo" in html and "hn-diff-add" in html and "RUN echo child" in html
    assert [item["status"] for item in reply.plan] == ["completed", "in_progress", "pending"]
    assert [(s["goal"], s["status"]) for s in reply.subagents] == [
        ("RUN echo child", "completed"),
        ("nested", "timeout"),
    ]
