"""What the scripted model says once Hermes has sent back the tool results, and the titles it gives sessions.

Written to read like a model's answer in the demo: the result itself, not the envelope Hermes hands the model
(an untrusted tool's output arrives wrapped in ``<untrusted_tool_result ...>`` with a warning paragraph, and
a kernel tool's text as the JSON ``{"result": "..."}``), and a one-line summary where the raw result is a
JSON record (a patch, a dangerous command that ran).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from .reply import Reply, content_text

__all__ = [
    "follow_up",
    "images_line",
    "is_judge_request",
    "is_title_request",
    "judge_reply",
    "result_text",
    "title_reply",
]

# Hermes' untrusted-data wrapper (agent/tool_dispatch_helpers.py _maybe_wrap_untrusted): the opening tag, one
# fixed paragraph, the output, the end tag.
_WRAPPED = re.compile(
    r'\A<untrusted_tool_result source="[^"\n]*">\n[^\n]*\n\n(?P<inner>.*)\n</untrusted_tool_result>\Z', re.S
)
#: What a title says for each keyword (``{rest}``: the words after it), so a session list reads plainly.
_TITLES = {
    "RUN": "Run {rest}",
    "THINKRUN": "Run {rest}",
    "BIGCONTEXT": "Run {rest}",
    "DANGER": "Remove {rest}",
    "CLARIFY": "Question: {rest}",
    "CLARIFY3": "Three questions",
    "THINK": "{rest}",
    "KERNEL": "Notebook: {rest}",
    "KERNELS": "Notebook steps",
    "PREVIEW": "Preview a new cell",
    "PLAN": "Plan the analysis",
    "EDIT": "Edit {rest}",
    "IMAGE": "Chart of revenue",
    "SKILL": "Load skill {rest}",
    "DELEGATE": "Delegate: {rest}",
    "SLOW": "Slow reply",
    "MARKDOWN": "Markdown sample",
    "LONG": "Long reply",
}
_TITLE_WORDS = 6


def _loads(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


def result_text(raw: str) -> str:
    """A tool result as a reader wants it: without Hermes' untrusted-data wrapper, and a kernel tool's
    ``{"result": "..."}`` as its text."""
    match = _WRAPPED.match(raw.strip())
    inner = match.group("inner") if match else raw
    data = _loads(inner)
    if isinstance(data, dict) and set(data) == {"result"} and isinstance(data["result"], str):
        return data["result"]
    return inner


def _clarify_answer(data: Any) -> str:
    """The user's answer(s) from a clarify tool result of either server."""
    if isinstance(data, dict) and isinstance(data.get("responses"), list):
        answers = []
        for item in data["responses"]:
            if isinstance(item, dict):
                value = item.get("user_response")
                answers.append(", ".join(map(str, value)) if isinstance(value, list) else str(value or ""))
        return "; ".join(a for a in answers if a)
    if isinstance(data, dict):
        return str(data.get("user_response") or data.get("error") or "").strip()
    return ""


def images_line(images: Sequence[str]) -> str:
    """``Images received: N (...)`` on a line of its own, or nothing when no image came with the results."""
    return f"\nImages received: {len(images)} ({', '.join(images)})" if images else ""


def _fenced(text: str) -> str:
    return f"```\n{text}\n```"


def _command(keyword: str, raw: str, data: Any) -> Reply:
    if isinstance(data, dict) and "output" in data:
        output = str(data.get("output") or data.get("error") or "").rstrip("\n")
        code = data.get("exit_code", 0)
    else:
        output, code = raw, 0
    if keyword == "DANGER":
        return Reply(
            text=f"Dangerous command ran (exit code {code})." + (f"\n{_fenced(output)}" if output else "")
        )
    head = "Command output:" if code in (0, None) else f"Command output (exit code {code}):"
    return Reply(
        text=f"{head}\n{_fenced(output)}" if output else f"{head} none (the command printed nothing)."
    )


def _blocked(raw: str, data: Any) -> str | None:
    """Why Hermes blocked a dangerous command, or None when it ran."""
    if isinstance(data, dict) and (data.get("status") == "blocked" or "BLOCKED" in str(data.get("error"))):
        return str(data.get("error"))
    return raw if "BLOCKED" in raw or "denied" in raw.lower() else None


def _edited(rest: str, raw: str, data: Any) -> Reply:
    """A patch result as one line: which file, and whether it changed."""
    path = rest.split()[0] if rest.split() else "the file"
    if isinstance(data, dict) and data.get("success") is True:
        changed = len(data.get("files_modified") or []) or 1
        return Reply(text=f"Edited {path} ({changed} file{'s' if changed != 1 else ''} changed).")
    error = data.get("error") if isinstance(data, dict) else None
    return Reply(text=f"Could not edit {path}: {error}" if error else f"Tool result:\n{_fenced(raw)}")


#: A cell change the kernel proposed (kernel/proposals.py): what, and its pending change's id.
_PROPOSED = re.compile(r"\AProposed (?P<what>.+?) as pending change \S+?\. ")


def _kernel(text: str, images: Sequence[str]) -> Reply:
    """A kernel tool's result as its text; a proposed cell change as one line for the person (the tool's
    explanation is written for the model)."""
    proposed = _PROPOSED.match(text)
    if proposed:
        return Reply(
            text=f"I proposed {proposed['what']}: it shows on the notebook; Keep or Discard it there."
        )
    return Reply(text=f"Kernel tool result:\n{_fenced(text)}{images_line(images)}")


def follow_up(keyword: str, rest: str, results: list[str], images: Sequence[str] = ()) -> Reply:
    """The final answer once Hermes has sent back the tool results of the prompt ``keyword rest``
    (``images``: what came with them)."""
    raw = "\n".join(results).strip()
    data = _loads(raw) if len(results) == 1 else None
    if keyword in ("RUN", "THINKRUN", "BIGCONTEXT"):
        return _command(keyword, raw, data)
    if keyword == "DANGER":
        why = _blocked(raw, data)
        return (
            _command(keyword, raw, data)
            if why is None
            else Reply(text=f"Dangerous command was blocked:\n{_fenced(why)}")
        )
    if keyword in ("CLARIFY", "CLARIFY3"):
        answer = _clarify_answer(data) if isinstance(data, dict) else raw
        return Reply(text=f"You chose: {answer or '(no answer)'}")
    if keyword.startswith("KERNEL"):
        return _kernel(result_text(raw), images)
    if keyword == "IMAGE":
        output = str(data.get("output") or "") if isinstance(data, dict) else raw
        path = next((line.strip() for line in output.splitlines() if line.strip().endswith(".png")), "")
        return Reply(
            text=f"Here is the image:\n\nMEDIA:{path}" if path else f"No image was made:\n{_fenced(raw)}"
        )
    if keyword == "SKILL":
        name = data.get("name") if isinstance(data, dict) else None
        return Reply(text=f"Skill loaded: {name}" if name else f"Skill result:\n{_fenced(raw)}")
    if keyword == "EDIT":
        return _edited(rest, raw, data)
    return Reply(text=f"Tool result:\n{_fenced(raw)}")


def is_title_request(body: Mapping[str, Any]) -> bool:
    """Whether a request is Hermes asking for a session title (no tools; 0.19.0's "descriptive title" prompt
    or the newer "You name chat sessions")."""
    if body.get("tools"):
        return False
    system = " ".join(
        content_text(m.get("content")) for m in body.get("messages") or [] if m.get("role") == "system"
    )
    return "descriptive title" in system or "You name chat sessions" in system


def title_reply(body: Mapping[str, Any]) -> Reply:
    """A plain title from the user's opening words (a keyword reads as what it does), as the request asks:
    JSON ``{"title": ...}`` for the newer Hermes, the bare title for 0.19.0."""
    messages = list(body.get("messages") or [])
    text = content_text(messages[-1].get("content")) if messages else ""
    first = text.strip().split("\n\n", 1)[0].removeprefix("User:").strip()
    keyword, _, rest = first.partition(" ")
    template = _TITLES.get(keyword)
    words = (template.format(rest=rest.strip()) if template else first).split()[:_TITLE_WORDS]
    title = " ".join(words).rstrip(".,;:!?")[:48].strip() or "Scripted conversation"
    system = " ".join(content_text(m.get("content")) for m in messages if m.get("role") == "system")
    return Reply(text=json.dumps({"title": title}) if "JSON" in system else title)


def is_judge_request(body: Mapping[str, Any]) -> bool:
    """Whether a request is Hermes' goal judge asking whether a ``/goal`` is met (no tools; the user message
    opens with ``Goal:``)."""
    messages = list(body.get("messages") or [])
    if body.get("tools") or not messages:
        return False
    return content_text(messages[-1].get("content")).startswith("Goal:\n")


def judge_reply(body: Mapping[str, Any]) -> Reply:
    """The judge's verdict: always done (so no continuation turn follows); a goal reading ``JUDGE <s> ...``
    makes the judge take ``s`` seconds (at most 30), as a slow judge model would, while Hermes waits for it
    after the turn's ``message.complete``."""
    goal = content_text(body["messages"][-1].get("content")).removeprefix("Goal:\n").split("\n", 1)[0]
    keyword, _, rest = goal.partition(" ")
    seconds = rest.split(" ", 1)[0]
    pause = min(30.0, float(seconds)) if keyword == "JUDGE" and _is_number(seconds) else 0.0
    return Reply(text=json.dumps({"verdict": "done", "reason": "scripted judge"}), pause=pause)


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True
