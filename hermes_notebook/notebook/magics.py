"""``%hermes`` and ``%%hermes``: ask Hermes from a cell, and see the turn live in the cell's output.

``%hermes PROMPT`` blocks until the turn ends, so Run All waits and ``r = %hermes ...`` feeds the next cell.
While it waits, the live view's buttons (approve, answer, stop) keep working: the wait loop pumps widget
messages (:mod:`hermes_notebook.notebook.comm_pump`). At the end the live output becomes a static transcript,
which is what the saved notebook shows. ``-b`` returns a live handle at once instead.

Everything the user can get wrong ends in one ``UsageError`` line (no traceback), and no message ever holds
the API key or the Dashboard token: secrets come from the environment or a masked prompt, never from cell
text.
"""

from __future__ import annotations

import getpass
import io
import os
import re
import shlex
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from IPython.core.error import StdinNotImplementedError, UsageError
from IPython.core.magic import Magics, line_cell_magic, magics_class, no_var_expand
from IPython.core.magic_arguments import MagicArgumentParser, argument, magic_arguments
from traitlets import CFloat, Unicode

from ..errors import HermesError
from ..inert import terminal_safe
from ..scrub import scrub
from ..settings import ENV_API_KEY, ENV_DASHBOARD_TOKEN, Settings
from ..turns.compression import compress_result_text
from . import context as _context

if TYPE_CHECKING:
    from .facade import Hermes

__all__ = ["HermesMagics", "load_ipython_extension"]

SUBCOMMANDS = (
    "connect",
    "status",
    "sessions",
    "history",
    "jobs",
    "chat",
    "stop",
    "export",
    "compress",
    "models",
    "usage",
    "undo",
    "branch",
    "regenerate",
    "rollback",
    "changes",
    "steer",
    "profiles",
)

#: Options that take a value (the rest of a line after the options is the prompt, taken verbatim).
_VALUE_OPTIONS = {
    "-s",
    "--session",
    "--via",
    "-o",
    "--out",
    "--instructions",
    "--model",
    "--approve",
    "--clarify",
    "--timeout",
    "--kernel",
    "--profile",
    "--file",
}
#: ``--kernel MODE[,MODE...]`` -> ``share_kernel(read=..., edit=..., run=...)``: each word sets one permission
# mode : (the rest keep the safe defaults: reads off, edits propose, runs ask); ``read-only`` sets all three.
KERNEL_MODES: dict[str, dict[str, str]] = {
    "read": {"read": "on"},
    "no-read": {"read": "off"},
    "propose": {"edit": "propose"},
    "no-edit": {"edit": "off"},
    "ask": {"run": "ask"},
    "allow": {"run": "allow"},
    "never": {"run": "never"},
    "read-only": {"read": "on", "edit": "off", "run": "never"},
}


def kernel_modes(spec: str) -> dict[str, str]:
    """``read,allow`` -> ``{"read": "on", "run": "allow"}`` (argparse's ``type`` for ``--kernel``)."""
    modes: dict[str, str] = {}
    for word in filter(None, (w.strip() for w in spec.split(","))):
        if word not in KERNEL_MODES:
            raise ValueError(word)
        modes.update(KERNEL_MODES[word])
    if not modes:
        raise ValueError(spec)
    return modes


kernel_modes.__name__ = "kernel mode"  # argparse names the type in its error: "invalid kernel mode value"
_OPTION = re.compile(r"\s*-")
#: The subcommands' ``--resume``: their SESSION is a stored session, not one of this notebook's.
_RESUME = (
    ("--resume",),
    {"action": "store_true", "help": "SESSION is a stored session (id or title) to open"},
)


def _session(name: str | None, stored: bool) -> str | None:
    """The session option as the facade takes it: with ``--resume``, a stored session to join
    (``hn.resume``)."""
    if not stored:
        return name
    if not name:
        raise UsageError("--resume needs the id or title of a stored session (%hermes sessions lists them)")
    from .facade import resume

    return resume(name)


def _split_options(line: str) -> tuple[list[str], str]:
    """Leading ``-x`` options (shell-quoted values allowed) and the rest of the line verbatim as the prompt.

    Why not shlex the whole line: prompts are prose ("what's wrong?"), and an apostrophe must not be a quote.
    """
    stream = io.StringIO(line)
    lexer = shlex.shlex(stream, posix=True)
    lexer.whitespace_split = True
    lexer.commenters = ""
    tokens: list[str] = []
    expect_value = False
    while True:
        rest = line[stream.tell() :]
        if not expect_value and not _OPTION.match(rest):
            return tokens, rest.strip()
        try:
            token = lexer.get_token()
        except ValueError as exc:  # unbalanced quote inside the options
            raise UsageError(f"cannot read the options: {exc}") from None
        if token is None:
            return tokens, ""
        tokens.append(token)
        if expect_value:
            expect_value = False
        elif token == "--":
            tokens.pop()
            return tokens, line[stream.tell() :].strip()
        elif token in _VALUE_OPTIONS:
            expect_value = True


def _one_line(error: BaseException, *secrets: object) -> str:
    """An error as one line for the terminal: server text in it carries no escape sequence and no secret."""
    text = " ".join(str(error).split()) or type(error).__name__
    return terminal_safe(scrub(text, secrets))


@magics_class
class HermesMagics(Magics):
    """``%hermes`` / ``%%hermes``. Defaults: ``%config HermesMagics.via = "api"`` and the options below."""

    via = Unicode("", help="Default path: 'dashboard' or 'api' ('' = dashboard when a token is set).").tag(
        config=True
    )
    session = Unicode(
        "", help="Default session: a name or id of this notebook's ('' = continue the notebook's session)."
    ).tag(config=True)
    timeout = CFloat(0.0, help="Seconds after which a blocking turn is interrupted (0 = no limit).").tag(
        config=True
    )
    approve = Unicode(
        "", help="Default approval answer for unattended runs: once, session, always or deny."
    ).tag(config=True)
    clarify = Unicode("", help="Default answer to clarify questions for unattended runs.").tag(config=True)

    def __init__(self, shell: Any = None, **kwargs: Any) -> None:
        super().__init__(shell=shell, **kwargs)
        self._hermes: Hermes | None = None

    # --- the connection ---

    @property
    def facade(self) -> Hermes:
        """The notebook's :class:`~hermes_notebook.notebook.Hermes` (from the environment until
        ``connect``)."""
        if self._hermes is None:
            from .facade import connect

            try:
                self._hermes = connect()
            except ValueError as exc:  # a malformed URL in the environment
                raise UsageError(_one_line(exc)) from None
        return self._hermes

    def _secrets(self) -> tuple[object, ...]:
        hermes = self._hermes
        if hermes is None:
            return ()
        return (hermes.settings.api_key, hermes.settings.dashboard_token)

    # --- the magic ---

    @magic_arguments()
    @argument(
        "-s",
        "--session",
        metavar="NAME_OR_ID",
        help="Session to use: a name you choose (a new session on "
        "first use) or the id of one of this notebook's; with --resume a stored id/title. It becomes the "
        "notebook's session.",
    )
    @argument("--new", action="store_true", help="Start a new session (named by --session if given).")
    @argument(
        "--resume",
        action="store_true",
        help="Join the stored session --session names (an id or title from "
        "%%hermes sessions) instead of starting one.",
    )
    @argument(
        "--via",
        choices=["dashboard", "api"],
        help="Dashboard (default when a token is set) or API Server runs.",
    )
    @argument("-o", "--out", metavar="VAR", help="Store the reply (or the -b handle) in this variable.")
    @argument(
        "-b", "--background", action="store_true", help="Return a live handle at once (await it, .wait())."
    )
    @argument(
        "--instructions", metavar="TEXT", help="Extra system instructions for this turn (API Server runs)."
    )
    @argument(
        "--model",
        metavar="NAME",
        help="Switch the session to this model first (Dashboard; the session keeps "
        "it), or the run's model (API Server runs, where the server honours one).",
    )
    @argument(
        "--approve", metavar="CHOICE", help="Answer approvals without asking: once, session, always or deny."
    )
    @argument("--clarify", metavar="ANSWER", help="Answer clarify questions without asking (Dashboard only).")
    @argument("--timeout", type=float, metavar="SECONDS", help="Interrupt the turn after this many seconds.")
    @argument(
        "--kernel",
        type=kernel_modes,
        metavar="MODES",
        help="Share this kernel with Hermes' tools first, "
        "with these permission modes, comma-separated: read / no-read (reads on/off), propose / no-edit "
        "(cell edits proposed or refused), ask / allow / never (runs need a click, are allowed for this "
        "session, or are refused), read-only; unnamed ones stay safe (no-read, propose, ask).",
    )
    @argument(
        "--profile",
        metavar="NAME",
        help="Use this Hermes profile from now on (a new connection, checked "
        "first; %%hermes profiles lists them), then ask the prompt if one follows.",
    )
    @argument(
        "--dry-run",
        action="store_true",
        help="Show exactly what would be sent (text, size, images); send nothing.",
    )
    @argument("--raw", action="store_true", help="Send the prompt as written: no {name} / {expr} filling.")
    @argument(
        "--file",
        action="append",
        metavar="PATH",
        help="Attach a text file or PDF (repeat for more; Dashboard).",
    )
    @argument(
        "prompt",
        nargs="*",
        help="The prompt (%%hermes: the cell body). Subcommands instead of a prompt: "
        "connect [--api URL] [--dashboard URL] | status | sessions | history [SESSION] | jobs | "
        "chat [SESSION] | stop | fix [options] [QUESTION] (ask about the last error) | "
        "export PATH [SESSION] [-f] [--images] (.md, .html or .ipynb; -f replaces a file; --images embeds "
        "images) | compress [SESSION] (summarize earlier messages) | models | usage [SESSION] | /NAME [ARGS] "
        "(run a Hermes command, e.g. /help) | "
        "undo [SESSION] [--files] (drop the last exchange; --files: its file changes too) | branch [SESSION] "
        "[--back N] [--files] [--name TITLE] (continue in a copy, without the last N exchanges; --files: "
        "their file changes undone too) | regenerate [SESSION] | rollback [ID [FILE]] (list or restore "
        "checkpoints) | "
        "changes [SESSION] (files the last turn changed) | steer TEXT (guide the running turn) | profiles",
    )
    @line_cell_magic
    @no_var_expand  # we fill {name} ourselves, with bounded summaries and one-line errors
    def hermes(self, line: str, cell: str | None = None) -> Any:
        """Ask Hermes; the turn streams into this cell and the reply is the cell's value.

        ``%hermes PROMPT`` or ``%%hermes [options]`` with the prompt as the cell body. Consecutive calls
        continue one session unless ``--new`` or ``--session`` says otherwise. Approval and clarify buttons
        work while the cell runs; ``--approve``/``--clarify`` answer them for unattended runs (nbconvert, Run
        All in CI).
        """
        try:
            return self._hermes_magic(line, cell)
        except UsageError:
            raise
        except HermesError as exc:
            raise UsageError(_one_line(exc, *self._secrets())) from None
        except (TimeoutError, ConnectionError, OSError) as exc:
            raise UsageError(_one_line(exc, *self._secrets())) from None

    def _hermes_magic(self, line: str, cell: str | None) -> Any:
        words = line.split(None, 1)
        if cell is None and words and words[0] in SUBCOMMANDS:
            return self._subcommand(words[0], words[1] if len(words) > 1 else "")
        if cell is None and words and words[0].startswith("/"):  # a Hermes slash command, e.g. /help
            return self.facade.command(line.strip())
        fix = cell is None and bool(words) and words[0] == "fix"
        tokens, prompt = _split_options(words[1] if fix and len(words) > 1 else "" if fix else line)
        parser: MagicArgumentParser = HermesMagics.hermes.parser
        args = parser.parse_args(tokens)
        if cell is not None:
            if prompt:
                raise UsageError("%%hermes takes options on its first line and the prompt in the cell body")
            prompt = cell.strip()
        if args.profile is not None:
            self._use_profile(args.profile)
            if not prompt and not fix:
                return None
        if args.kernel is not None:
            share = self.facade.share_kernel(**args.kernel)
            if not prompt and not fix:
                return share
        if not prompt and not fix:
            raise UsageError(
                "the prompt is empty: %hermes PROMPT, or %%hermes with the prompt in the cell body"
            )
        hermes = self.facade  # its key and token are scrubbed out of what the placeholders fill in
        secrets = self._secrets()
        prepared = (
            _context.fix_prompt(self.shell, prompt, secrets)
            if fix
            else _context.prepare_magic(prompt, self.shell, raw=args.raw, secrets=secrets)
        )
        if args.dry_run:
            return prepared
        if args.out is not None and not args.out.isidentifier():
            raise UsageError(f"-o needs a variable name, not {args.out!r}")
        options: dict[str, Any] = {
            "session": _session(
                args.session or (self.session or None if not args.new else None), args.resume
            ),
            "via": args.via or self.via or None,
            "approve": args.approve or self.approve or None,
            "clarify": args.clarify or self.clarify or None,
            "new": args.new,
            "instructions": args.instructions,
            "model": args.model,
        }
        if args.file:
            options["files"] = args.file
        if options["via"] == "api" and not args.clarify:
            options["clarify"] = None  # a configured clarify default does not block API runs
        # already filled above (or --raw): a PromptPreview is sent as it is, its images attached
        if args.background:
            result: Any = hermes.start(prepared, **options)
        else:
            timeout = args.timeout if args.timeout is not None else (self.timeout or None)
            result = hermes.ask(prepared, timeout=timeout, **options)
        if args.out is not None:
            assert self.shell is not None
            self.shell.user_ns[args.out] = result
            return None
        return result

    # --- subcommands ---

    def _subcommand(self, name: str, rest: str) -> Any:
        handler: Callable[[str], Any] = getattr(self, f"_cmd_{name}")
        return handler(rest)

    def _parse(self, prog: str, rest: str, *arguments: tuple[tuple[str, ...], dict[str, Any]]) -> Any:
        parser = MagicArgumentParser(prog=f"%hermes {prog}")
        for flags, kwargs in arguments:
            parser.add_argument(*flags, **kwargs)
        args = parser.parse_argstring(rest)
        for key, value in vars(args).items():  # IPython keeps the quotes of a quoted value: 'my title'
            if isinstance(value, str) and len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
                setattr(args, key, value[1:-1])
        return args

    def _cmd_connect(self, rest: str) -> Any:
        args = self._parse(
            "connect",
            rest,
            (("--api",), {"metavar": "URL"}),
            (("--dashboard",), {"metavar": "URL"}),
        )
        from .facade import connect

        env = os.environ
        api_key = env.get(ENV_API_KEY) or self._ask_secret("API Server key (HERMES_API_KEY)")
        token = env.get(ENV_DASHBOARD_TOKEN)
        if not token and (args.dashboard or not api_key):
            token = self._ask_secret("Dashboard token (HERMES_DASHBOARD_TOKEN, Enter to skip)")
        try:
            settings = Settings.resolve(
                api_url=args.api,
                api_key=api_key or None,
                dashboard_url=args.dashboard,
                dashboard_token=token or None,
            )
        except ValueError as exc:
            raise UsageError(_one_line(exc)) from None
        old, self._hermes = self._hermes, connect(settings)
        if old is not None:
            old.close()
        status = self._hermes.status()
        print(str(status))
        return None

    def _use_profile(self, name: str) -> None:
        """Move the notebook to profile ``name``: a new connection, checked (the name is listed) before it is
        kept."""
        from .facade import connect

        old = self.facade
        if old.settings.profile == name:
            return
        try:
            new = connect(old.settings, profile=name)
        except ValueError as exc:  # not a profile name
            raise UsageError(_one_line(exc)) from None
        try:
            new.check()
        except BaseException:
            new.close()
            raise
        self._hermes = new
        old.close()
        print(terminal_safe(f"the notebook now uses Hermes profile {name} (a new connection)"))

    def _ask_secret(self, label: str) -> str:
        try:
            return getpass.getpass(f"{label}: ").strip()
        except (StdinNotImplementedError, EOFError, OSError):
            return ""

    def _cmd_status(self, rest: str) -> Any:
        self._parse("status", rest)
        print(str(self.facade.status()))

    def _cmd_sessions(self, rest: str) -> Any:
        self._parse("sessions", rest)
        return self.facade.sessions()

    def _cmd_history(self, rest: str) -> Any:
        args = self._parse("history", rest, (("session",), {"nargs": "?", "metavar": "SESSION"}), _RESUME)
        return self.facade.history(self._target(args, "history SESSION"))

    def _cmd_jobs(self, rest: str) -> Any:
        self._parse("jobs", rest)
        from .results import Table

        rows = [
            {
                "id": j.id,
                "name": j.name,
                "schedule": j.schedule_display,
                "state": j.state,
                "next_run_at": j.next_run_at,
                "last_status": j.last_status,
            }
            for j in self.facade.jobs.list()
        ]
        return Table(
            rows, columns=("id", "name", "schedule", "state", "next_run_at", "last_status"), empty="no jobs"
        )

    def _cmd_chat(self, rest: str) -> Any:
        args = self._parse("chat", rest, (("session",), {"nargs": "?", "metavar": "SESSION"}), _RESUME)
        return self.facade.chat(_session(args.session, args.resume))

    def _cmd_export(self, rest: str) -> Any:
        args = self._parse(
            "export",
            rest,
            (("path",), {"metavar": "PATH"}),
            (("session",), {"nargs": "?", "metavar": "SESSION"}),
            (("--overwrite", "-f"), {"action": "store_true", "help": "replace an existing file"}),
            (("--images",), {"action": "store_true", "help": "embed the images (else each is named)"}),
            _RESUME,
        )
        session = self._target(args, "export PATH SESSION")
        print(
            "exported to "
            f"{self.facade.export(session, args.path, overwrite=args.overwrite, images=args.images)}"
        )

    def _cmd_compress(self, rest: str) -> Any:
        args = self._parse("compress", rest, (("session",), {"nargs": "?", "metavar": "SESSION"}), _RESUME)
        print(compress_result_text(self.facade.compress(self._target(args, "compress SESSION"))))

    def _cmd_models(self, rest: str) -> Any:
        self._parse("models", rest)
        return self.facade.models()

    def _cmd_usage(self, rest: str) -> Any:
        args = self._parse("usage", rest, (("session",), {"nargs": "?", "metavar": "SESSION"}), _RESUME)
        return self.facade.usage(self._target(args, "usage SESSION"))

    def _target(self, args: Any, usage: str) -> Any:
        """The session ``args`` names (``--resume``: a stored one), or the notebook's own; refused in one line
        when there is none yet (``usage``: how to name one, e.g. ``export PATH SESSION``)."""
        if args.session is None and self.facade.session_id is None:
            raise UsageError(f"no session yet: %hermes {usage}, or ask something first")
        return _session(args.session, args.resume)

    def _cmd_undo(self, rest: str) -> Any:
        args = self._parse(
            "undo",
            rest,
            (("session",), {"nargs": "?", "metavar": "SESSION"}),
            _RESUME,
            (("--files",), {"action": "store_true", "help": "put back the turn's files too"}),
        )
        removed = self.facade.undo(self._target(args, "undo SESSION"), files=args.files)
        print("undid the last exchange" if removed else "nothing to undo")
        for name in getattr(removed, "files", ()):
            print(terminal_safe(f"  put back {name}"))  # a path the server named

    def _cmd_rollback(self, rest: str) -> Any:
        args = self._parse(
            "rollback",
            rest,
            (("checkpoint",), {"nargs": "?", "metavar": "ID"}),
            (("file",), {"nargs": "?", "metavar": "FILE"}),
            (("-s", "--session"), {"metavar": "SESSION"}),
            _RESUME,
        )
        session = _session(args.session, args.resume)
        return self.facade.rollback(session, checkpoint=args.checkpoint, file=args.file)

    def _cmd_changes(self, rest: str) -> Any:
        args = self._parse(
            "changes",
            rest,
            (("session",), {"nargs": "?", "metavar": "SESSION"}),
            (("--checkpoint",), {"metavar": "ID"}),
            _RESUME,
        )
        return self.facade.changes(_session(args.session, args.resume), checkpoint=args.checkpoint)

    def _cmd_steer(self, rest: str) -> Any:
        if not rest.strip():
            raise UsageError(
                "%hermes steer TEXT: the guidance for the running turn (%hermes -b PROMPT starts one)"
            )
        outcome = self.facade.steer(rest.strip())
        print(
            "steered the running turn"
            if outcome.status == "queued"
            else "Hermes did not take the steer (the turn makes no more tool calls): send it as a prompt"
        )

    def _cmd_profiles(self, rest: str) -> Any:
        self._parse("profiles", rest)
        return self.facade.profiles()

    def _cmd_branch(self, rest: str) -> Any:
        args = self._parse(
            "branch",
            rest,
            (("session",), {"nargs": "?", "metavar": "SESSION"}),
            _RESUME,
            (("--back",), {"type": int, "default": 0, "metavar": "N", "help": "leave out the last N"}),
            (("--files",), {"action": "store_true", "help": "put back their file changes too"}),
            (("--name",), {"metavar": "TITLE", "help": "the copy's title"}),
        )
        branched = self.facade.branch(
            self._target(args, "branch SESSION"),
            at=-args.back if args.back else None,
            name=args.name,
            files=args.files,
        )
        print(
            terminal_safe(f"branched: the notebook continues in session {branched}")
        )  # the id is the server's
        for label, names in (
            ("put back", getattr(branched, "files", ())),
            ("could not put back", getattr(branched, "skipped", ())),
        ):
            for name in names:
                print(terminal_safe(f"  {label} {name}"))  # paths the server named

    def _cmd_regenerate(self, rest: str) -> Any:
        args = self._parse("regenerate", rest, (("session",), {"nargs": "?", "metavar": "SESSION"}), _RESUME)
        return self.facade.regenerate(self._target(args, "regenerate SESSION"))

    def _cmd_stop(self, rest: str) -> Any:
        self._parse("stop", rest)
        turn = self.facade.last_turn if self._hermes is not None else None
        if turn is None or turn.done():
            print("no turn is running")
            return None
        turn.stop()
        print("asked Hermes to stop the running turn")
        return None


_MAGIC_LINE = re.compile(
    r"^(?P<indent>[ \t]*)(?:(?P<target>[\w.]+)[ \t]*=[ \t]*)?%hermes(?P<rest>(?:[ \t].*)?)$"
)


def protect_prompts(lines: list[str]) -> list[str]:
    """Input transformer: turn ``%hermes ...`` lines into plain calls before IPython reads a trailing ``?``.

    Why: IPython treats a line ending in ``?`` as a help request, so ``r = %hermes Which one?`` would show
    "Object `one` not found" instead of asking. ``%hermes?`` alone still shows the help; ``%%hermes`` cells
    are left alone (their body is the prompt).
    """
    if not lines or lines[0].lstrip().startswith("%%"):
        return lines
    out = []
    for line in lines:
        body = line.rstrip("\n")
        match = _MAGIC_LINE.match(body)
        if (
            match is None
            or not match.group("rest").strip()
            or body.rstrip().endswith(("%hermes?", "%hermes??"))
        ):
            out.append(line)
            continue
        call = f"get_ipython().run_line_magic('hermes', {match.group('rest').strip()!r})"
        target = match.group("target")
        newline = "\n" if line.endswith("\n") else ""
        out.append(f"{match.group('indent')}{target + ' = ' if target else ''}{call}{newline}")
    return out


def load_ipython_extension(ipython: Any) -> None:
    """Register the magics, make ``%config HermesMagics`` work, and keep prompts ending in ``?`` prompts."""
    magics = HermesMagics(ipython, parent=ipython)
    ipython.register_magics(magics)
    if magics not in ipython.configurables:
        ipython.configurables.append(magics)
    cleanup = ipython.input_transformers_cleanup
    for existing in list(cleanup):
        if getattr(existing, "__name__", "") == "protect_prompts" and existing is not protect_prompts:
            cleanup.remove(existing)
    if protect_prompts not in cleanup:
        cleanup.append(protect_prompts)
