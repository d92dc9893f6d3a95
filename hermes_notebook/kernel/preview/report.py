"""What a preview shows and what the agent is told: one :class:`PreviewReport`, read from the copy's JSON.

The card's sentence is :data:`CARD_SENTENCE`, word for word. A name the copy could not check is listed as
"not checked", never left out as if unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..images import PNG, SentImage, ToolAnswer, take_png
from ..reading import bounded
from .variables import VariableChange

__all__ = ["CARD_SENTENCE", "ENDINGS", "PreviewReport"]

CARD_SENTENCE = (
    "Ran in a copy of your kernel: your variables are untouched. Files, network and databases are real."
)
#: How a preview ended: ran to its end (with or without an error), or was ended, or never started.
ENDINGS = ("finished", "error", "time limit", "memory budget", "stopped", "interrupted", "failed", "refused")
#: Characters of printed output the agent is told (the end).
SUMMARY_CHARS = 3000


@dataclass
class PreviewReport:
    """One preview: how it ended, what it printed and displayed, its error, its variables, its time."""

    ended: str
    reason: str = ""
    printed: str = ""
    outputs: list[dict[str, Any]] = field(default_factory=list)
    error: str = ""
    error_name: str = ""
    variables: list[VariableChange] = field(default_factory=list)
    seconds: float = 0.0
    pid: int | None = None

    @classmethod
    def refused(cls, reason: str) -> PreviewReport:
        return cls("refused", reason)

    @classmethod
    def from_copy(cls, payload: dict[str, Any], shell_output: str, seconds: float, pid: int) -> PreviewReport:
        """The copy's JSON report, plus what its file descriptors 1 and 2 received (a shell command's
        output)."""
        if "failed" in payload:
            return cls("failed", str(payload["failed"]), printed=shell_output, seconds=seconds, pid=pid)
        printed = str(payload.get("printed", "")) + shell_output
        outputs = list(payload.get("outputs") or [])
        if shell_output:
            outputs.insert(0, {"output_type": "stream", "name": "stdout", "text": shell_output[-16000:]})
        error_name = str(payload.get("error_name", ""))
        ended = (
            "memory budget"
            if "MemoryError" in error_name
            else "error"
            if payload.get("error")
            else "finished"
        )
        rows = [VariableChange(**row) for row in payload.get("variables") or []]
        return cls(ended, "", printed, outputs, str(payload.get("error", "")), error_name, rows, seconds, pid)

    @property
    def images(self) -> list[str]:
        """The PNGs (base64) the preview displayed, figures included."""
        return [o["data"][PNG] for o in self.outputs if isinstance(o.get("data"), dict) and PNG in o["data"]]

    def to_dict(self) -> dict[str, Any]:
        """What the page's diff shows (JSON)."""
        return {
            "ended": self.ended,
            "reason": self.reason,
            "sentence": CARD_SENTENCE,
            "outputs": self.outputs,
            "error": self.error,
            "variables": [row.to_dict() for row in self.variables],
            "seconds": round(self.seconds, 3),
        }

    def headline(self) -> str:
        """One line: how it ended and how long it took."""
        took = f"{self.seconds:.2f} s"
        return {
            "finished": f"Preview finished in {took}.",
            "error": f"Preview raised {self.error_name or 'an error'} after {took}.",
            "time limit": f"Preview stopped at its time limit ({self.reason}).",
            "memory budget": f"Preview stopped at its memory budget ({self.reason or 'memory limit'}).",
            "stopped": f"Preview stopped by the user after {took}.",
            "interrupted": f"Preview ended by the kernel's Interrupt after {took}.",
            "failed": f"Preview failed: {self.reason}",
            "refused": f"Preview refused: {self.reason}",
        }[self.ended]

    def summary(self) -> str:
        """The agent's text: the same facts as the card (bounded)."""
        parts = [self.headline()]
        if self.ended == "refused":
            return parts[0]
        parts.append(CARD_SENTENCE)
        if self.printed:
            cut = self.printed[-SUMMARY_CHARS:]
            parts.append("printed:\n" + ("… " if cut != self.printed else "") + cut.rstrip())
        texts = [
            o["data"]["text/plain"]
            for o in self.outputs
            if isinstance(o.get("data"), dict) and isinstance(o["data"].get("text/plain"), str)
        ]
        if texts:
            parts.append("displayed:\n" + "\n".join(t[:1500] for t in texts[-5:]))
        if self.images:
            parts.append(f"figures: {len(self.images)} image(s), attached")
        if self.error:
            parts.append("error:\n" + bounded(self.error, 3000))
        if self.variables:
            parts.append(
                "variables (in the copy):\n"
                + "\n".join(
                    f"- {row.name}: {row.change} ({row.type}{', ' + row.shape if row.shape else ''})"
                    for row in self.variables
                )
            )
        else:
            parts.append("variables: none created, changed or deleted")
        return bounded("\n\n".join(parts))

    def answer(self) -> ToolAnswer:
        """The agent's tool result: the summary and the figures."""
        images = [
            taken
            for n, data in enumerate(self.images, 1)
            if isinstance(taken := take_png(data, f"preview figure {n}"), SentImage)
        ]
        return ToolAnswer(self.summary(), tuple(images))
