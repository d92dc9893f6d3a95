"""Hermes' checkpoints and a checkpoint's changes as display bundles (``text/plain`` and inert ``text/html``).

What a rewind shows before it puts files back: which checkpoints there are (when, Hermes' note) and which
files changed since one, with a coloured diff per file (classes by line prefix, never server markup). Every
string is the server's (paths, notes, diff lines): escaped; text/plain keeps no terminal control. Pure.
"""

from __future__ import annotations

from collections.abc import Sequence

from .inert import escape_html, html_block, terminal_safe
from .render_activity import activity_css, diff_html
from .turns.checkpoints import Checkpoint, CheckpointDiff

__all__ = ["REWIND_CSS", "checkpoint_diff_bundle", "checkpoints_bundle"]

REWIND_CSS = (
    ".hn-rewind{font-family:var(--jp-ui-font-family,system-ui,sans-serif);color:var(--jp-ui-font-color1,inherit)}"
    ".hn-rewind .hn-file{font-family:var(--jp-code-font-family,monospace);margin-top:6px}"
    ".hn-rewind .hn-meta{color:var(--jp-ui-font-color2,#666);font-size:smaller}"
) + activity_css()


def _when(checkpoint: Checkpoint) -> str:
    return checkpoint.timestamp.astimezone().strftime("%Y-%m-%d %H:%M:%S") if checkpoint.timestamp else "?"


def checkpoints_bundle(checkpoints: Sequence[Checkpoint], *, enabled: bool = True) -> dict[str, str]:
    """A numbered list of checkpoints (newest first): short hash, local time, Hermes' note."""
    if not enabled:
        text = "This Hermes takes no checkpoints of files."
        return {"text/plain": text, "text/html": html_block(f"<p>{escape_html(text)}</p>")}
    if not checkpoints:
        text = "No checkpoints yet: Hermes takes one before a turn first changes a file."
        return {"text/plain": text, "text/html": html_block(f"<p>{escape_html(text)}</p>")}
    rows = [(n, c.hash[:8], _when(c), c.message) for n, c in enumerate(checkpoints, 1)]
    text = "\n".join(f"{n}. {short}  {when}  {note}".rstrip() for n, short, when, note in rows)
    items = "".join(
        f"<li><code>{escape_html(short)}</code> {escape_html(when)} {escape_html(note)}</li>"
        for _, short, when, note in rows
    )
    return {"text/plain": terminal_safe(text), "text/html": html_block(f'<ol class="hn-rewind">{items}</ol>')}


def checkpoint_diff_bundle(diff: CheckpointDiff) -> dict[str, str]:
    """The files changed since a checkpoint, each with its +/- counts and diff lines."""
    lines: list[str] = []
    html = [f"<style>{REWIND_CSS}</style>", '<div class="hn-rewind">']
    for change in diff.files:
        head = f"{change.path} ({change.status}, +{change.added} -{change.removed})"
        lines.append(head)
        lines.extend(f"  {line}" for line in change.diff.split("\n") if change.diff)
        html.append(f'<div class="hn-file">{escape_html(head)}</div>{diff_html({"diff": change.diff})}')
    if not diff.files:
        lines.append("No file changed since this checkpoint.")
        html.append('<p class="hn-meta">No file changed since this checkpoint.</p>')
    if diff.truncated:
        note = "Hermes cut this diff at 4,000 characters: files further down show without their lines."
        lines.append(note)
        html.append(f'<p class="hn-meta">{escape_html(note)}</p>')
    html.append("</div>")
    return {"text/plain": terminal_safe("\n".join(lines)), "text/html": html_block("".join(html))}
