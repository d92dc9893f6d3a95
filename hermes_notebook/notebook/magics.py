"""``%hermes`` and ``%%hermes``: ask Hermes from a cell, and see the turn live in the cell's output.

``%hermes PROMPT`` blocks until the turn ends, so Run All waits and ``r = %hermes ...`` feeds the next cell.
While it waits, the live view's buttons (approve, answer, stop) keep working: the wait loop pumps widget
messages (:mod:`hermes_notebook.notebook.comm_pump`). At the end the live output becomes a static transcript,
which is what the saved notebook shows. ``-b`` returns a live handle at once instead. A first word that names
a subcommand runs that row of :mod:`.subcommands`; :mod:`.magic_line` reads the options.

Everything the user can get wrong ends in one ``UsageError`` line (no traceback), and no message ever holds
the API key or the Dashboard token: secrets come from the environment or a masked prompt, never from cell
text.
"""

from __future__ import annotations

from typing import Any

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_cell_magic, magics_class, no_var_expand
from IPython.core.magic_arguments import MagicArgumentParser, argument, magic_arguments
from traitlets import CFloat, Unicode

from ..errors import HermesError
from . import context as _context
from .connecting import connect
from .facade import Hermes
from .magic_line import kernel_modes, one_line, protect_prompts, split_options
from .subcommands import SUBCOMMANDS, session_option, subcommand_named, use_profile

__all__ = ["HermesMagics", "load_ipython_extension"]

#: What ``%hermes?`` says of the subcommands (from their rows), the fix form and Hermes' own commands.
_SUBCOMMANDS_HELP = " | ".join(
    [
        *(row.usage for row in SUBCOMMANDS),
        "fix [options] [QUESTION] (ask about the last error)",
        "/NAME [ARGS] (run a Hermes command, e.g. /help)",
    ]
)


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
            try:
                self._hermes = connect()
            except ValueError as exc:  # a malformed URL in the environment
                raise UsageError(one_line(exc)) from None
        return self._hermes

    @property
    def connected(self) -> bool:
        """True once the notebook has a connection (``%hermes stop`` makes none)."""
        return self._hermes is not None

    def use(self, hermes: Hermes) -> None:
        """Use ``hermes`` from now on and close the connection it replaces (``connect``, ``--profile``)."""
        old, self._hermes = self._hermes, hermes
        if old is not None and old is not hermes:
            old.close()

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
        help=f"The prompt (%%hermes: the cell body). Subcommands instead of a prompt: {_SUBCOMMANDS_HELP}",
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
            raise UsageError(one_line(exc, *self._secrets())) from None
        except (TimeoutError, ConnectionError, OSError) as exc:
            raise UsageError(one_line(exc, *self._secrets())) from None

    def _hermes_magic(self, line: str, cell: str | None) -> Any:
        words = line.split(None, 1)
        subcommand = subcommand_named(words[0]) if cell is None and words else None
        if subcommand is not None:
            return subcommand(self, words[1] if len(words) > 1 else "")
        if cell is None and words and words[0].startswith("/"):  # a Hermes slash command, e.g. /help
            return self.facade.command(line.strip())
        fix = cell is None and bool(words) and words[0] == "fix"
        tokens, prompt = split_options(words[1] if fix and len(words) > 1 else "" if fix else line)
        parser: MagicArgumentParser = HermesMagics.hermes.parser
        args = parser.parse_args(tokens)
        if cell is not None:
            if prompt:
                raise UsageError("%%hermes takes options on its first line and the prompt in the cell body")
            prompt = cell.strip()
        if args.profile is not None:
            use_profile(self, args.profile)
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
            "session": session_option(
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
