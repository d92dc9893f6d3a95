"""The agent's task list, subagents and file diffs in the turn model (turns/activity.py), from recorded
payloads.

The payloads are trimmed copies of what the real servers sent (captured against both:
docs/protocol/dashboard-newer.md §11); the real-server runs are in
tests/client/dashboard/test_activity_hermes.py.
"""

from __future__ import annotations

import json
from typing import Any

from hermes_notebook.turns import TurnFolder, apply_changes, fold_history
from hermes_notebook.turns.activity import MAX_SUBAGENT_TOOLS, clean_diff, diff_line_kind
from hermes_notebook.turns.events import Event

ESC = "\x1b"
INLINE_DIFF = (
    "display.diff.review_header\n"
    f"{ESC}[38;2;218;165;32ma/f.txt → b/f.txt{ESC}[0m\n"
    f"{ESC}[38;2;139;134;130m@@ -1,2 +1,2 @@{ESC}[0m\n"
    f"{ESC}[38;2;184;134;11m one{ESC}[0m\n"
    f"{ESC}[38;2;255;255;255;48;2;119;20;20m-two{ESC}[0m\n"
    f"{ESC}[38;2;255;255;255;48;2;19;87;20m+TWO <script>{ESC}[0m"
)
TODOS_1 = [
    {"id": "1", "content": "Read <b>x</b>", "status": "in_progress"},
    {"id": "2", "content": "Write", "status": "pending"},
]
TODOS_2 = [
    {"id": "1", "content": "Read <b>x</b>", "status": "completed"},
    {"id": "2", "content": "Write", "status": "pending"},
]
SUB = {
    "goal": "RUN echo child",
    "task_count": 1,
    "task_index": 0,
    "subagent_id": "sa-0-a1",
    "depth": 0,
    "model": "fake-model",
    "child_session_id": "c1",
}


def _fold(events: list[Event], turn_id: str = "t") -> tuple[TurnFolder, list[dict[str, Any]]]:
    folder = TurnFolder(turn_id)
    changes: list[dict[str, Any]] = []
    for event in events:
        changes.extend(folder.apply(event))
    return folder, changes


def _replayed(folder: TurnFolder, changes: list[dict[str, Any]]) -> dict[str, Any]:
    messages = apply_changes({}, changes)
    return messages[folder.message_id]


def _todo_turn(name: str = "todo_list") -> list[Event]:
    return [
        Event("message.start", {}),
        Event("tool.start", {"tool_id": "c1", "name": name, "args": {"todos": TODOS_1}}),
        Event(
            "tool.complete",
            {
                "tool_id": "c1",
                "name": name,
                "result": {"todos": TODOS_1, "revision": 1},
                "todos": TODOS_1,
                "revision": 1,
            },
        ),
        Event("todo.updated", {"todos": TODOS_1, "revision": 1}),
        Event("tool.start", {"tool_id": "c2", "name": name}),
        Event(
            "tool.complete",
            {
                "tool_id": "c2",
                "name": name,
                "result": {"todos": TODOS_2, "revision": 2},
                "todos": TODOS_2,
                "revision": 2,
            },
        ),
        Event("todo.updated", {"todos": TODOS_2, "revision": 2}),
        Event("message.delta", {"text": "\n\nplanned"}),
        Event("message.complete", {"text": "planned", "status": "complete"}),
    ]


def test_todo_updates_fold_into_one_checklist_part_patched_in_place() -> None:
    """Two todo tool runs (each with its todo.updated) make ONE ``todo`` part holding the latest full list."""
    folder, changes = _fold(_todo_turn())
    parts = folder.message.to_dict()["parts"]
    assert [p["id"] for p in parts] == ["tool:c1", "todo", "tool:c2", "text:3"]
    todo = parts[1]
    assert todo["kind"] == "todo" and todo["status"] is None
    assert todo["todos"] == [{**item, "parent": None} for item in TODOS_2]
    todo_records = [c for c in changes if c.get("part_id") == "todo" or c.get("part", {}).get("id") == "todo"]
    assert len(todo_records) == 2  # added once, patched once: a repeated snapshot adds nothing
    assert _replayed(folder, changes) == folder.message.to_dict()


def test_a_todo_item_keeps_its_text_as_data_and_odd_values_are_normalised() -> None:
    """Item text stays verbatim (markup included); unknown statuses read as pending, non-items are skipped."""
    items = [
        {"id": 3, "content": "<img src=x onerror=alert(1)>", "status": "blocked", "parent": "1"},
        "junk",
        None,
    ]
    folder, _ = _fold([Event("todo.updated", {"todos": items, "revision": 1})])
    assert folder.message.to_dict()["parts"][0]["todos"] == [
        {"id": "3", "content": "<img src=x onerror=alert(1)>", "status": "pending", "parent": "1"}
    ]


def test_history_rebuilds_the_same_checklist_from_the_todo_tool_rows() -> None:
    """REST rows of a newer server (the call names the ``tool_call`` bridge, the tool row ``todo_list``) fold
    into the same parts as the live turn."""

    def call(cid: str, todos: list[dict[str, str]]) -> dict[str, Any]:
        args = json.dumps({"calls": [{"name": "todo_list", "arguments": {"todos": todos}}]})
        return {"id": cid, "type": "function", "function": {"name": "tool_call", "arguments": args}}

    rows = [
        {"id": 3, "role": "user", "content": "x todo"},
        {"id": 4, "role": "assistant", "content": "", "tool_calls": [call("c1", TODOS_1)]},
        {
            "id": 5,
            "role": "tool",
            "tool_call_id": "c1",
            "tool_name": "todo_list",
            "content": json.dumps({"todos": TODOS_1, "revision": 1}),
        },
        {"id": 6, "role": "assistant", "content": "", "tool_calls": [call("c2", TODOS_2)]},
        {
            "id": 7,
            "role": "tool",
            "tool_call_id": "c2",
            "tool_name": "todo_list",
            "content": json.dumps({"todos": TODOS_2, "revision": 2}),
        },
        {"id": 8, "role": "assistant", "content": "planned"},
    ]
    history = fold_history(rows)[1].to_dict()["parts"]
    live = _fold(_todo_turn())[0].message.to_dict()["parts"]
    assert [(p["id"], p["kind"], p["name"]) for p in history] == [
        (p["id"], p["kind"], p["name"]) for p in live
    ]
    assert history[1]["todos"] == live[1]["todos"]


def test_the_inline_diff_is_plain_lines_on_the_tool_part() -> None:
    """``tool.complete.inline_diff`` lands on the tool part without terminal colours or the header line."""
    folder, changes = _fold(
        [
            Event("tool.start", {"tool_id": "p1", "name": "patch"}),
            Event(
                "tool.complete",
                {"tool_id": "p1", "name": "patch", "result": {"success": True}, "inline_diff": INLINE_DIFF},
            ),
        ]
    )
    part = folder.message.to_dict()["parts"][0]
    assert part["diff"] == "a/f.txt → b/f.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+TWO <script>"
    assert [diff_line_kind(line) for line in part["diff"].split("\n")] == [
        "file",
        "hunk",
        "context",
        "del",
        "add",
    ]
    assert _replayed(folder, changes) == folder.message.to_dict()


def test_a_diff_names_files_as_the_tool_was_given_them_and_labels_read_plainly() -> None:
    """Hermes writes the working folder's absolute path (``a//tmp/home/work/report.md``): the part shows the
    path the tool was given; the label says what the call did, where Hermes' preview is a message key or hides
    the file a command writes; a kernel tool reads as "notebook: describe"."""
    absolute = INLINE_DIFF.replace("a/f.txt", "a//tmp/home/work/f.txt").replace(
        "b/f.txt", "b//tmp/home/work/f.txt"
    )
    folder, changes = _fold(
        [
            Event(
                "tool.start",
                {"tool_id": "p1", "name": "patch", "context": "f.txt", "args": {"path": "f.txt"}},
            ),
            Event(
                "tool.complete",
                {"tool_id": "p1", "name": "patch", "result": {"success": True}, "inline_diff": absolute},
            ),
            Event(
                "tool.start",
                {
                    "tool_id": "t1",
                    "name": "terminal",
                    "context": "printf 'x\\n'",
                    "args": {"command": "printf 'x\\n' > report.md"},
                },
            ),
            Event(
                "tool.start",
                {"tool_id": "t2", "name": "terminal", "context": "display.preview.shell_plus_one"},
            ),
            Event(
                "tool.start",
                {
                    "tool_id": "d1",
                    "name": "todo_list",
                    "context": "display.preview.todo_tasks",
                    "args": {"todos": TODOS_2, "merge": False},
                },
            ),
            Event(
                "tool.start",
                {
                    "tool_id": "k1",
                    "name": "mcp__notebook_2f7ef78f__describe",
                    "context": "sales",
                    "args": {"name": "sales"},
                },
            ),
            Event(
                "tool.complete",
                {
                    "tool_id": "k1",
                    "name": "mcp__notebook_2f7ef78f__describe",
                    "result": {"result": "sales (DataFrame): 4 rows x 3 columns"},
                },
            ),
        ]
    )
    parts = folder.message.to_dict()["parts"]
    assert parts[0]["diff"].split("\n")[0] == "a/f.txt → b/f.txt"
    assert [p["label"] for p in parts] == [
        {"name": "patch", "detail": "f.txt"},
        {"name": "terminal", "detail": "printf 'x\\n' > report.md"},
        {"name": "terminal", "detail": None},
        {"name": "todo_list", "detail": f"{len(TODOS_2)} tasks"},
        {"name": "notebook: describe", "detail": "sales"},
    ]
    assert parts[2]["preview"] == "display.preview.shell_plus_one"  # Hermes' own preview is kept as data
    # Hermes handed the kernel tool's output to the model wrapped as untrusted data: the part says so
    assert parts[4]["risk"] == {"level": "untrusted", "findings": [], "redacted": False}
    assert "risk" not in parts[0]
    assert _replayed(folder, changes) == folder.message.to_dict()


def test_a_diff_without_tool_start_still_lands_and_parts_without_one_have_no_diff_key() -> None:
    """A diff's completion may come without tool.start (docs/protocol/dashboard.md §8.8); other parts keep the
    old
    contract: no ``diff`` key at all."""
    folder, _ = _fold(
        [
            Event("tool.complete", {"tool_id": "p1", "name": "write_file", "inline_diff": INLINE_DIFF}),
            Event("tool.complete", {"tool_id": "p2", "name": "terminal", "result": {"output": "hi"}}),
        ]
    )
    first, second = folder.message.to_dict()["parts"]
    assert first["diff"].startswith("a/f.txt")
    assert "diff" not in second and "todos" not in second and "subagent" not in second


def test_clean_diff_strips_every_control_sequence() -> None:
    """OSC links, cursor moves and bare controls are removed; a diff with no file or hunk line is kept
    whole."""
    text = f"{ESC}]8;;https://evil.example{ESC}\\+added{ESC}]8;;{ESC}\\\n{ESC}[2J-gone\x07\n ctx"
    assert clean_diff(text) == "+added\n-gone\n ctx"
    assert clean_diff("just words") == "just words"


def test_history_keeps_the_inline_diff_a_newer_server_stored_beside_the_row() -> None:
    """``display_metadata.tool_result_metadata.inline_diff`` of a tool row becomes the part's diff, as
    live."""
    call = {"id": "p1", "type": "function", "function": {"name": "patch", "arguments": "{}"}}
    rows = [
        {"id": 1, "role": "user", "content": "x patch"},
        {"id": 2, "role": "assistant", "content": "", "tool_calls": [call]},
        {
            "id": 3,
            "role": "tool",
            "tool_call_id": "p1",
            "tool_name": "patch",
            "content": '{"success": true}',
            "display_metadata": {"tool_result_metadata": {"inline_diff": INLINE_DIFF}},
        },
        {"id": 4, "role": "assistant", "content": "patched"},
    ]
    part = fold_history(rows)[1].to_dict()["parts"][0]
    assert part["diff"] == "a/f.txt → b/f.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+TWO <script>"


def _subagent_turn() -> list[Event]:
    child = {**SUB, "subagent_id": "sa-0-b2", "parent_id": "sa-0-a1", "depth": 1, "goal": "nested"}
    return [
        Event("message.start", {}),
        Event("tool.start", {"tool_id": "d1", "name": "delegate_task"}),
        Event("subagent.start", {**SUB, "text": "RUN echo child"}),
        Event("subagent.thinking", {**SUB, "text": "(⌐■_■) reflecting..."}),
        Event(
            "subagent.tool",
            {**SUB, "tool_name": "terminal", "text": "echo child", "tool_preview": "echo child"},
        ),
        Event("subagent.start", child),
        Event("subagent.progress", {**SUB, "text": "🔀 terminal"}),
        Event("subagent.complete", {**child, "status": "timeout", "duration_seconds": 3.0}),
        Event(
            "subagent.complete",
            {
                **SUB,
                "status": "completed",
                "summary": "Command output:\n```\nchild\n```\n",
                "duration_seconds": 0.61,
                "api_calls": 2,
            },
        ),
        Event(
            "tool.complete", {"tool_id": "d1", "name": "delegate_task", "result": {"status": "dispatched"}}
        ),
        Event("message.complete", {"text": "done", "status": "complete"}),
    ]


def test_subagents_are_parts_with_their_own_tools_status_and_place_in_the_tree() -> None:
    """Each subagent is a ``subagent:<id>`` part: goal, its tool calls, final status and summary; a child of a
    subagent names its parent and depth."""
    folder, changes = _fold(_subagent_turn())
    parts = {p["id"]: p for p in folder.message.to_dict()["parts"]}
    top, nested = parts["subagent:sa-0-a1"], parts["subagent:sa-0-b2"]
    assert top["kind"] == "subagent" and top["status"] == "completed" and top["duration"] == 0.61
    info = top["subagent"]
    assert (info["goal"], info["status"], info["parent_id"], info["depth"]) == (
        "RUN echo child",
        "completed",
        None,
        0,
    )
    assert info["tools"] == [{"name": "terminal", "preview": "echo child"}]
    assert info["summary"] == "Command output:\n```\nchild\n```" and info["activity"] is None
    assert (nested["subagent"]["parent_id"], nested["subagent"]["depth"]) == ("sa-0-a1", 1)
    assert (nested["status"], nested["subagent"]["status"]) == ("error", "timeout")
    assert parts["tool:d1"]["status"] == "completed"
    assert _replayed(folder, changes) == folder.message.to_dict()


def test_a_running_subagent_is_cancelled_when_its_turn_is_interrupted_and_never_holds_an_approval() -> None:
    """An approval during a delegation attaches to the running tool, not the subagent; an interrupted turn
    cancels the subagent part like a running tool."""
    folder, _ = _fold(
        [
            Event("tool.start", {"tool_id": "d1", "name": "delegate_task"}),
            Event("subagent.start", SUB),
            Event("approval.request", {"command": "rm -rf x", "description": "dangerous"}),
            Event("message.complete", {"text": "", "status": "interrupted"}),
        ]
    )
    parts = {p["id"]: p for p in folder.message.to_dict()["parts"]}
    assert parts["tool:d1"]["interaction"] is not None
    assert parts["subagent:sa-0-a1"]["interaction"] is None
    assert parts["subagent:sa-0-a1"]["status"] == "cancelled"


def test_a_subagent_keeps_a_bounded_tool_list_and_keys_by_task_without_an_id() -> None:
    """An endless child adds at most MAX_SUBAGENT_TOOLS tool rows; a frame without subagent_id keys by its
    task."""
    legacy = {"goal": "g", "task_count": 2, "task_index": 1}
    events = [
        Event("subagent.tool", {**legacy, "tool_name": "t", "text": str(n)})
        for n in range(MAX_SUBAGENT_TOOLS + 5)
    ]
    folder, changes = _fold(events)
    part = folder.message.to_dict()["parts"][0]
    assert part["id"] == "subagent:task-1" and len(part["subagent"]["tools"]) == MAX_SUBAGENT_TOOLS
    assert len(changes) == 1 + MAX_SUBAGENT_TOOLS  # message + part + patches; the capped ones change nothing


def test_garbage_activity_payloads_fold_cleanly() -> None:
    """Wrong types in every field of these events are skipped or defaulted, never raised."""
    junk: list[Any] = [None, 3, "x", [1], {"a": 1}, True]
    events = [
        Event(
            name,
            {
                key: value
                for key in (
                    "todos",
                    "goal",
                    "subagent_id",
                    "status",
                    "text",
                    "tool_name",
                    "depth",
                    "task_index",
                    "inline_diff",
                    "duration_seconds",
                )
            },
        )
        for name in ("todo.updated", "subagent.start", "subagent.tool", "subagent.complete", "tool.complete")
        for value in junk
    ]
    folder, changes = _fold([*events, Event("message.complete", {"text": "ok"})])
    assert folder.done and _replayed(folder, changes) == folder.message.to_dict()
