"""What a finished turn and the facade's listings give back, each with a notebook repr.

:class:`Reply` is one turn (its ``str`` is the answer; displayed, a static transcript that a saved notebook
keeps); :class:`Transcript`, :class:`Table` and :class:`Status` are ``history()``, ``sessions()``/jobs tables
and ``status()``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..formatting import table_cell
from ..inert import lines_html, redact_urls, table_html, terminal_safe
from ..render import transcript_bundle
from ..scrub import scrub
from ..shell import host
from ..turns import sent_prompt_message
from .reply_images import ReplyImage, reply_images

__all__ = ["KEPT_REPLIES", "Reply", "Status", "Table", "Transcript"]

#: How many of its newest replies a connection keeps for ``export()`` (older turns come from the history).
KEPT_REPLIES = 100


class Reply:
    """The outcome of one turn: the assistant message and what happened around it.

    ``str(reply)`` is the answer text; displayed, it is a static transcript (plain text and sanitized
    HTML), which is what a saved notebook keeps.
    """

    def __init__(
        self,
        message: Mapping[str, Any],
        *,
        session_id: str | None = None,
        prompt: str = "",
        via: str = "dashboard",
        notes: Sequence[str] = (),
        filled: int = 0,
        profile: str | None = None,
    ) -> None:
        self.message: dict[str, Any] = dict(message)
        self.session_id = session_id
        #: The Hermes profile the turn ran in (None: the server's own, no profile chosen).
        self.profile = profile
        self.prompt = prompt
        self.via = via
        #: How many ``{placeholders}`` were filled into ``prompt`` (the transcript then shows it, collapsed).
        self.filled = filled
        #: Sentences about things the transcript does not show by itself (an approval nobody answered, ...).
        self.notes: list[str] = list(notes)
        self._live: tuple[str | None, int | None] | None = (
            None  # (display id, execution count) of the live view
        )
        self._secrets: tuple[object, ...] = ()  # the connection's key and token: never shown (hide())

    def hide(self, *secrets: object) -> Reply:
        """Never show these values (the connection's API key and Dashboard token) in this reply's reprs and
        bundles, besides what is shaped like a key (:mod:`hermes_notebook.scrub`). Returns self."""
        self._secrets = (*self._secrets, *(s for s in secrets if s is not None))
        return self

    @property
    def parts(self) -> list[dict[str, Any]]:
        """The message parts (reasoning, text, tool), in order."""
        return list(self.message.get("parts") or [])

    @property
    def text(self) -> str:
        """The answer: the text parts joined by blank lines."""
        return "\n\n".join(p["text"] for p in self.parts if p.get("kind") == "text" and p.get("text"))

    @property
    def reasoning(self) -> str:
        """The model's reasoning, if it streamed any (Dashboard only)."""
        return "\n\n".join(p["text"] for p in self.parts if p.get("kind") == "reasoning" and p.get("text"))

    @property
    def tools(self) -> list[dict[str, Any]]:
        """The tool parts: ``name``, ``status``, ``preview``/``arguments``, ``result``, ``interaction``, and
        ``risk`` (``{"level", "findings", "redacted"}``) where Hermes flagged the tool's output."""
        return [p for p in self.parts if p.get("kind") == "tool"]

    @property
    def images(self) -> list[ReplyImage]:
        """The images the reply names (each displays as an image output; a remote one as a link, never
        loaded)."""
        return reply_images(self.message, secrets=self._secrets)

    @property
    def plan(self) -> list[dict[str, Any]]:
        """The agent's task list as it ended the turn: ``id``, ``content``, ``status``, ``parent`` per
        item."""
        return next((list(p.get("todos") or []) for p in self.parts if p.get("kind") == "todo"), [])

    @property
    def subagents(self) -> list[dict[str, Any]]:
        """The subagents the turn delegated to: ``goal``, ``status``, ``tools``, ``summary``, ``parent_id``,
        ..."""
        return [dict(p["subagent"]) for p in self.parts if p.get("kind") == "subagent" and p.get("subagent")]

    @property
    def status(self) -> str:
        """``complete``, ``interrupted``, ``error`` or ``cancelled``."""
        return str(self.message.get("status"))

    @property
    def usage(self) -> dict[str, Any] | None:
        """Token usage as the server reported it (Dashboard values are session totals)."""
        return self.message.get("usage")

    @property
    def error(self) -> str | None:
        """The server's error message when the turn failed."""
        return self.message.get("error")

    @property
    def ok(self) -> bool:
        """True when the turn completed normally."""
        return self.status == "complete"

    def to_markdown(self) -> str:
        """This turn (prompt and reply) as Markdown that reads well on GitHub; tools collapsed, no secrets."""
        from ..export import messages_of, to_markdown

        return to_markdown(messages_of(self), secrets=self._secrets)

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        text = scrub(self.text, self._secrets)
        short = text if len(text) <= 60 else text[:57] + "..."
        tools = f", {len(self.tools)} tool(s)" if self.tools else ""
        return f"<Reply {self.status}{tools}: {short!r}>"

    def shown_live(self, display_id: str | None, execution_count: int | None) -> None:
        """Record that this turn was already shown in cell ``execution_count`` (under ``display_id``, if a
        view).

        When the reply is also that cell's value it is then shown once, not twice.
        """
        self._live = (display_id, execution_count)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        # ``%hermes``/``ask`` already showed this turn in the cell (a live view turned transcript, or text
        # printed as it streamed). When the reply is also that same cell's value, show it once.
        live, self._live = self._live, None
        if live is not None and host.same_cell(live[1]):
            display_id = live[0]
            if display_id is None:
                return {"text/plain": repr(self)}
            from IPython.display import update_display

            update_display({"text/plain": ""}, raw=True, display_id=display_id)
        return self.bundle()

    def bundle(self) -> dict[str, str]:
        """The static transcript: text/plain and sanitized text/html, with the notes (and the prompt as sent,
        collapsed, when placeholders were filled into it)."""
        messages: list[Mapping[str, Any]] = [self.message]
        if self.filled:
            turn_id = str(self.message.get("id") or "").partition(":")[2]
            messages.insert(0, sent_prompt_message(turn_id, self.prompt, self.filled).to_dict())
        # the notes go inside the transcript's one inert container: they may quote a model-chosen command
        return transcript_bundle(messages, notes=self.notes, secrets=self._secrets)


class Table(list):  # type: ignore[type-arg]
    """A list of row dicts that shows as a table."""

    def __init__(
        self,
        rows: list[dict[str, Any]],
        *,
        columns: Sequence[str],
        current: str | None = None,
        empty: str = "no sessions yet",
    ) -> None:
        super().__init__(rows)
        self.columns = tuple(columns)
        self.current = current
        self.empty = empty

    def _cell(self, value: Any, column: str = "") -> str:
        return table_cell(column, value)  # times as local time + "N min ago", long text cut

    def _repr_html_(self) -> str:
        return table_html(self, self.columns, current=self.current, empty=self.empty, cell=self._cell)

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(str(self))

    def __str__(self) -> str:
        """One line per row, for a terminal: server text (titles, names) carries no escape sequence."""
        if not self:
            return terminal_safe(f"({self.empty})")
        lines = []
        for row in self:
            mark = "*" if row.get("id") == self.current else " "
            rest = "  ".join(
                self._cell(row.get(c), c) for c in self.columns[1:] if row.get(c) not in (None, "")
            )
            lines.append(f"{mark} {row.get(self.columns[0])}  {rest}")
        return terminal_safe("\n".join(lines))


class Transcript(list):  # type: ignore[type-arg]
    """Message dicts that display as a static transcript."""

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        return transcript_bundle(self)


class Status(dict):  # type: ignore[type-arg]
    """``Hermes.status()``: a dict that reads well in a notebook."""

    def lines(self) -> list[str]:
        """One line per server, then the connection state."""
        out = []
        for name in ("api", "dashboard"):
            info = self.get(name) or {}
            state = "ok" if info.get("ok") else f"unavailable ({info.get('error', 'unknown')})"
            version = f", Hermes {info['version']}" if info.get("version") else ""
            extra = ""
            if name == "dashboard" and info.get("ok"):
                extra = ", connected" if info.get("connected") else ", not connected"
            label = "API Server" if name == "api" else "Dashboard"
            out.append(f"{label}: {info.get('url')} {state}{version}{extra}")
            if info.get("features"):  # the list is for code that checks one: a count reads better here
                count = len(info["features"])
                out.append(f"  {count} protocol features (status()['{name}']['features'] names them)")
        out.append(f"default path: {self.get('via')}; current session: {self.get('session') or 'none yet'}")
        kernel = self.get("kernel")
        out.append(
            kernel if kernel else "kernel tools: not shared (hermes.share_kernel() or %hermes --kernel MODES)"
        )
        return [terminal_safe(redact_urls(line)) for line in out]  # no URL userinfo, no escape sequence

    def __str__(self) -> str:
        return "\n".join(self.lines())

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(str(self))

    def _repr_html_(self) -> str:
        return lines_html(self.lines())
