"""Hermes' checkpoint answers as data: the list, a diff split per file, a restore, and which checkpoint is a
turn's.

Shapes are ``rollback.*``'s (docs/protocol/dashboard-newer.md §15); the real-server path is
``tests/client/dashboard/test_rollback_hermes.py``.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from hermes_notebook.turns.checkpoints import (
    DIFF_LIMIT,
    Checkpoint,
    checkpoint_for_turn,
    parse_checkpoints,
    parse_diff,
    parse_restore,
)

DIFF = """diff --git a/notes.txt b/notes.txt
index 1111111..2222222 100644
--- a/notes.txt
+++ b/notes.txt
@@ -1,2 +1,2 @@
-alpha
+ALPHA
 beta
diff --git a/new.py b/new.py
new file mode 100644
--- /dev/null
+++ b/new.py
@@ -0,0 +1 @@
+print(1)
diff --git a/old.csv b/old.csv
deleted file mode 100644
--- a/old.csv
+++ /dev/null
@@ -1 +0,0 @@
-a,b
"""
STAT = (
    " new.py    | 1 +\n notes.txt | 2 +-\n old.csv   | 1 -\n big.bin   | Bin 0 -> 10 bytes\n 4 files changed"
)


def test_a_diff_splits_per_file_with_status_and_counts() -> None:
    """Each ``diff --git`` section is one file; a file only the stat names (cut from the diff) still shows."""
    diff = parse_diff("ab12cd34", {"stat": STAT, "diff": DIFF})
    assert [(f.path, f.status, f.added, f.removed) for f in diff.files] == [
        ("notes.txt", "modified", 1, 1),
        ("new.py", "added", 1, 0),
        ("old.csv", "deleted", 0, 1),
        ("big.bin", "modified", 0, 0),
    ]
    assert diff.files[0].diff.splitlines() == ["@@ -1,2 +1,2 @@", "-alpha", "+ALPHA", " beta"]
    assert not diff.truncated and parse_diff("x", {"diff": "x" * DIFF_LIMIT}).truncated


def test_lists_and_restores_read_defensively() -> None:
    """Rows without a hash are skipped, ``enabled: false`` is kept, a failed restore carries its reason."""
    enabled, found = parse_checkpoints(
        {
            "enabled": True,
            "checkpoints": [
                {"hash": "ab12", "timestamp": "2026-12-04T15:33:43+00:00", "message": "before patch"},
                {"message": "x"},
            ],
        }
    )
    assert enabled and found == [
        Checkpoint("ab12", datetime(2026, 12, 4, 15, 33, 43, tzinfo=timezone.utc), "before patch")
    ]
    assert parse_checkpoints({"enabled": False, "checkpoints": []}) == (False, [])
    failed = parse_restore({"success": False, "reason": "nested repositories"})
    assert not failed.success and failed.error == "nested repositories"
    done = parse_restore(
        {
            "success": True,
            "restored_to": "ab12cd34",
            "reason": "before patch",
            "history_removed": 2,
            "skipped_user_edits": ["mine.txt"],
        }
    )
    assert done.success and done.error == "" and done.history_removed == 2 and done.skipped == ("mine.txt",)


def test_a_turns_checkpoint_is_the_oldest_taken_while_it_ran() -> None:
    """Newest-first listing; the turn's is the oldest in its window; a restore's pre-rollback snapshot and the
    checkpoints known before the turn never are."""
    start = datetime(2026, 12, 4, 15, 0, 0, 500000, tzinfo=timezone.utc)
    at = lambda s: start.replace(microsecond=0) + timedelta(seconds=s)  # noqa: E731
    listed = [
        Checkpoint("e5", at(30), "before patch"),
        Checkpoint("d4", at(20), "before terminal: rm x"),
        Checkpoint("c3", at(10), "before patch"),
        Checkpoint("b2", at(0), "pre-rollback snapshot (restoring to a1)"),
        Checkpoint("a1", at(0), "before patch"),
    ]
    assert checkpoint_for_turn(listed, start, known={"a1"}) == listed[2]
    assert (
        checkpoint_for_turn(listed, start) == listed[4]
    )  # same second as the start: only `known` tells them apart
    assert checkpoint_for_turn(listed, start + timedelta(seconds=15), at(25)) == listed[1]
    assert checkpoint_for_turn(listed, start + timedelta(seconds=40)) is None
