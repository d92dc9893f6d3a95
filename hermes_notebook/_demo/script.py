"""What the scripted model answers: the keyword table of :mod:`hermes_notebook._demo.scripted_model`, as
a pure function of the request body (:func:`plan_reply`), with no server around it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from .chart import DOT_PNG, IMAGE_PNG, picture_file
from .follow_up import follow_up, is_judge_request, is_title_request, judge_reply, title_reply
from .kernel_steps import kernel_call, kernel_steps, preview_steps
from .reply import USAGE, Reply, ToolCall, content_text
from .request_body import (
    is_image_note,
    offered_tools,
    pending_tool_results,
    prompt_of,
    result_images,
    tool_properties,
    tool_rounds,
)

__all__ = [
    "BIG_USAGE",
    "CACHED_USAGE",
    "DELEGATE_TEXT",
    "DOT_PNG",
    "IMAGE_PNG",
    "MARKDOWN_REPLY",
    "MODEL_ID",
    "PLAN_STEPS",
    "PLAN_TEXT",
    "THINKRUN_REASONING",
    "THINK_REASONING",
    "USAGE",
    "Reply",
    "ToolCall",
    "plan_reply",
    "prompt_of",
]

MODEL_ID = "fake-model"
DANGER_DEFAULT_DIR = "hermes-danger-demo"
THINK_REASONING = "Let me think about this. Step 1: read the question. Step 2: answer it."
THINK_TEXT = "I thought about it: the answer is 42."
THINKRUN_REASONING = "Let me think about this. I will run the command."
CLARIFY_DEFAULT_QUESTION = "Pick A or B?"
CLARIFY_CHOICES = ("A", "B")
CLARIFY3_QUESTIONS: tuple[dict[str, Any], ...] = (
    {"question": "Pick one", "choices": ["A", "B"]},
    {"question": "Pick any", "choices": ["X", "Y", "Z"], "multi_select": True},
    {"question": "Your name?"},
)
SLOW_DEFAULT_TICKS = 60
LONG_DEFAULT_CHARS = 2000
# A prompt mostly read from the provider's prompt cache (OpenAI's prompt_tokens_details), for the CACHED
# keyword.
CACHED_USAGE = {
    "prompt_tokens": 100,
    "completion_tokens": 5,
    "total_tokens": 105,
    "prompt_tokens_details": {"cached_tokens": 60},
}
# Over half of the 200k context local_hermes declares: Hermes compacts before its next model call.
BIG_USAGE = {"prompt_tokens": 150_000, "completion_tokens": 5, "total_tokens": 150_005}
MARKDOWN_REPLY = (
    "# Scripted markdown\n"
    "\n"
    "Some **bold** text, some `inline code` and a [link](https://example.com/docs).\n"
    "\n"
    "- first item\n"
    "- second item\n"
    "\n"
    "```python\n"
    "def greet(name):\n"
    '    return f"Hello, {name}!"\n'
    "```\n"
    "\n"
    'Inline HTML that must stay inert: <script>alert(1)</script> <img src="x" onerror="alert(2)">\n'
)


# Paths Hermes probes at agent build time to guess the server type; a 404 makes it move on quickly.
_SAFE_DIR = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._-]*$")


def _clarify_call(body: Mapping[str, Any], questions: list[dict[str, Any]]) -> ToolCall:
    """A clarify call in the schema Hermes offered: ``questions[]`` (newer) or one ``question`` (0.19.0)."""
    if "questions" in tool_properties(body, "clarify"):
        return ToolCall("clarify", {"questions": questions})
    first = questions[0]
    return ToolCall("clarify", {"question": first["question"], "choices": first.get("choices") or []})


def _watch_command(messages: Sequence[Mapping[str, Any]]) -> str | None:
    """The command line of a scheduled reproducibility check's prompt (hermes_notebook/jobs/reproduce_job.py)
    in the last user message, None for any other prompt."""
    last = next((m for m in reversed(messages) if m.get("role") == "user" and not is_image_note(m)), None)
    text = content_text(last.get("content")) if last is not None else ""
    return next(
        (line.strip() for line in text.splitlines() if " -m hermes_notebook.reproducibility.watch " in line),
        None,
    )


PLAN_STEPS: tuple[tuple[dict[str, str], ...], ...] = (
    (
        {"id": "1", "content": "Read the data", "status": "in_progress"},
        {"id": "2", "content": "Write the report", "status": "pending"},
    ),
    (
        {"id": "1", "content": "Read the data", "status": "completed"},
        {"id": "2", "content": "Write the report", "status": "in_progress"},
    ),
)
PLAN_TEXT = "Plan done."
DELEGATE_TEXT = "Delegated; waiting for the subagent. "


def _todo_call(offered: set[str], todos: Sequence[Mapping[str, str]], merge: bool) -> ToolCall:
    """The todo tool as offered: ``todo`` (0.19.0) or, deferred on a newer Hermes, through its ``tool_call``
    bridge."""
    args: dict[str, Any] = {"todos": [dict(t) for t in todos], "merge": merge}
    if "todo" in offered or "tool_call" not in offered:
        return ToolCall("todo", args)
    return ToolCall("tool_call", {"calls": [{"name": "todo_list", "arguments": args}]})


def _plan_step(body: Mapping[str, Any], messages: Sequence[Mapping[str, Any]]) -> Reply:
    rounds = tool_rounds(messages)
    if rounds >= len(PLAN_STEPS):
        return Reply(text=PLAN_TEXT)
    return Reply(tool_calls=[_todo_call(offered_tools(body), PLAN_STEPS[rounds], merge=rounds > 0)])


def _delegate_call(body: Mapping[str, Any], goal: str) -> ToolCall:
    """delegate_task in the schema offered: one ``goal`` (0.19.0) or ``tasks[]`` (newer)."""
    if "goal" in tool_properties(body, "delegate_task"):
        return ToolCall("delegate_task", {"goal": goal})
    return ToolCall("delegate_task", {"tasks": [{"goal": goal}]})


def _tool_or_refusal(offered: set[str], call: ToolCall, reasoning: str = "") -> Reply:
    if call.name not in offered:
        return Reply(
            text=f"[scripted model] tool '{call.name}' was not offered by Hermes.", reasoning=reasoning
        )
    return Reply(reasoning=reasoning, tool_calls=[call])


def plan_reply(body: Mapping[str, Any], *, slow_delay: float = 0.25) -> Reply:
    """Choose the scripted reply for one chat-completions request body (pure; see the module docstring)."""
    messages: list[Mapping[str, Any]] = list(body.get("messages") or [])
    if is_title_request(body):
        return title_reply(body)
    if is_judge_request(body):
        return judge_reply(body)

    paragraph = prompt_of(body)
    keyword, _, rest = paragraph.partition(" ")
    rest = rest.strip()
    if keyword == "PLAN":
        return _plan_step(body, messages)
    results = pending_tool_results(messages)
    if results is not None and keyword == "DELEGATE":
        # Slow on purpose: a Dashboard runs the subagent in the background, and its events reach the turn only
        # while the turn is open.
        return Reply(text=[DELEGATE_TEXT] + ["… "] * 24, delay=0.25)
    if keyword == "KERNELS" or keyword.startswith("KERNELS@"):
        return kernel_steps(body, messages, rest, keyword)
    if keyword == "PREVIEW" or keyword.startswith("PREVIEW@"):
        return preview_steps(body, messages, rest, keyword)
    watch = _watch_command(messages)
    if watch is not None:  # a scheduled reproducibility check: run its command, relay what it printed
        if results is not None:
            data = json.loads(results[-1]) if results[-1].strip().startswith("{") else {}
            printed = str(data.get("output") or "") if isinstance(data, dict) else ""
            return Reply(text=printed.strip() or "\n".join(results))
        return _tool_or_refusal(offered_tools(body), ToolCall("terminal", {"command": watch}))
    if results is not None:
        return follow_up(keyword, rest, results, result_images(messages))

    offered = offered_tools(body)
    if keyword == "THINK":
        return Reply(reasoning=THINK_REASONING, text=THINK_TEXT)
    if keyword == "BIGCONTEXT" and rest:
        return replace(_tool_or_refusal(offered, ToolCall("terminal", {"command": rest})), usage=BIG_USAGE)
    if keyword in ("RUN", "THINKRUN") and rest:
        reasoning = THINKRUN_REASONING if keyword == "THINKRUN" else ""
        return _tool_or_refusal(offered, ToolCall("terminal", {"command": rest}), reasoning)
    if keyword == "DANGER":
        target = rest.split()[0].removeprefix("./") if rest else ""
        if not _SAFE_DIR.match(target) or ".." in target:
            target = DANGER_DEFAULT_DIR
        return _tool_or_refusal(offered, ToolCall("terminal", {"command": f"rm -rf ./{target}"}))
    if keyword == "CLARIFY":
        question = rest or CLARIFY_DEFAULT_QUESTION
        return _tool_or_refusal(
            offered, _clarify_call(body, [{"question": question, "choices": list(CLARIFY_CHOICES)}])
        )
    if keyword == "CLARIFY3":
        return _tool_or_refusal(offered, _clarify_call(body, list(CLARIFY3_QUESTIONS)))
    if keyword == "KERNEL" or keyword.startswith("KERNEL@"):
        return kernel_call(body, keyword, rest)
    if keyword == "SKILL" and rest:
        return _tool_or_refusal(offered, ToolCall("skill_view", {"name": rest.split()[0]}))
    if keyword == "DELEGATE" and rest:
        return _tool_or_refusal(offered, _delegate_call(body, rest))
    if keyword == "IMAGE":
        words = rest.split()
        name = words[0] if words and _SAFE_DIR.match(words[0]) else "hn-image"
        picture = picture_file("dot", DOT_PNG) if words[1:2] == ["dot"] else picture_file("chart", IMAGE_PNG)
        command = f"mkdir -p ../images && cp {picture} ../images/{name}.png && realpath ../images/{name}.png"
        return _tool_or_refusal(offered, ToolCall("terminal", {"command": command}))
    if keyword == "EDIT" and len(rest.split()) == 3:
        path, old, new = rest.split()
        return _tool_or_refusal(
            offered, ToolCall("patch", {"path": path, "old_string": old, "new_string": new})
        )
    if keyword == "SLOW" and (slow := re.fullmatch(r"(\d*) ?(.*)", rest, re.S)):  # n ticks, "for <words>"
        ticks = [f"tick {i} " for i in range(int(slow[1] or SLOW_DEFAULT_TICKS))]
        return Reply(text=ticks + [f"for {slow[2]}"] * bool(slow[2]), delay=slow_delay)
    if (match := re.fullmatch(r"FAIL(\d{3})?", keyword)) is not None:
        return Reply(status=int(match.group(1) or 500))
    if keyword == "MARKDOWN":
        return Reply(text=MARKDOWN_REPLY)
    if keyword == "CACHED":
        return Reply(text=f"Hello from the scripted model. You said: {paragraph}", usage=CACHED_USAGE)
    if keyword == "LONG":
        n = int(rest.split()[0]) if rest.split() and rest.split()[0].isdigit() else LONG_DEFAULT_CHARS
        return Reply(text=_long_text(n), delay=0.0)
    return Reply(text=f"Hello from the scripted model. You said: {paragraph}")


def _long_text(n: int) -> list[str]:
    """Exactly ``n`` characters (no trailing whitespace, so nothing is trimmed) in 10-character deltas."""
    words = "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt. "
    text = (words * (n // len(words) + 1))[:n]
    if text and text[-1].isspace():
        text = text[:-1] + "."
    return [text[i : i + 10] for i in range(0, len(text), 10)]
