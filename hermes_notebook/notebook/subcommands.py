"""``%hermes``'s subcommands, one row each: its name, its arguments, how ``%hermes?`` lists it, what it does.

Why a table: each subcommand is a few lines over the facade's public methods, and a row keeps them in one
place with their help; the magic looks the first word up here (:func:`subcommand_named`) and ``%hermes?``'s
list is built from the rows. Adding one is a row and a small function ``run(magic, args)`` (``args``: the
parsed arguments, or the rest of the line as it is for a ``verbatim`` row).
"""

from __future__ import annotations

import getpass
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from IPython.core.error import StdinNotImplementedError, UsageError
from IPython.core.magic_arguments import MagicArgumentParser

from ..inert import terminal_safe
from ..settings import ENV_API_KEY, ENV_DASHBOARD_TOKEN, Settings
from ..turns.compression import compress_result_text
from .connecting import connect
from .facade import resume
from .magic_line import one_line
from .results import Table

if TYPE_CHECKING:
    from .facade import Hermes

__all__ = ["SUBCOMMANDS", "Magic", "Subcommand", "session_option", "subcommand_named", "use_profile"]

Argument = tuple[tuple[str, ...], dict[str, Any]]

#: A subcommand's optional SESSION (one of this notebook's, or with ``--resume`` a stored one).
SESSION: Argument = (("session",), {"nargs": "?", "metavar": "SESSION"})
#: The subcommands' ``--resume``: their SESSION is a stored session, not one of this notebook's.
RESUME: Argument = (
    ("--resume",),
    {"action": "store_true", "help": "SESSION is a stored session (id or title) to open"},
)


class Magic(Protocol):
    """What a subcommand uses of the magic (:class:`~.magics.HermesMagics`)."""

    @property
    def facade(self) -> Hermes: ...

    @property
    def connected(self) -> bool: ...

    def use(self, hermes: Hermes) -> None: ...


@dataclass(frozen=True)
class Subcommand:
    """One ``%hermes`` subcommand: ``usage`` is its line in ``%hermes?``'s list."""

    name: str
    usage: str
    run: Callable[[Magic, Any], Any]
    arguments: tuple[Argument, ...] = ()
    #: The rest of the line is handed over as it is (prose: an apostrophe is not a quote).
    verbatim: bool = False

    def __call__(self, magic: Magic, rest: str) -> Any:
        """Parse ``rest`` and run the subcommand."""
        return self.run(magic, rest if self.verbatim else _parse(self.name, rest, self.arguments))


def _parse(prog: str, rest: str, arguments: tuple[Argument, ...]) -> Any:
    parser = MagicArgumentParser(prog=f"%hermes {prog}")
    for flags, kwargs in arguments:
        parser.add_argument(*flags, **kwargs)
    args = parser.parse_argstring(rest)
    for key, value in vars(args).items():  # IPython keeps the quotes of a quoted value: 'my title'
        if isinstance(value, str) and len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            setattr(args, key, value[1:-1])
    return args


def session_option(name: str | None, stored: bool) -> str | None:
    """The session option as the facade takes it: with ``--resume``, a stored session to join
    (``hn.resume``)."""
    if not stored:
        return name
    if not name:
        raise UsageError("--resume needs the id or title of a stored session (%hermes sessions lists them)")
    return resume(name)


def _target(magic: Magic, args: Any, usage: str) -> Any:
    """The session ``args`` names (``--resume``: a stored one), or the notebook's own; refused in one line
    when there is none yet (``usage``: how to name one, e.g. ``export PATH SESSION``)."""
    if args.session is None and magic.facade.session_id is None:
        raise UsageError(f"no session yet: %hermes {usage}, or ask something first")
    return session_option(args.session, args.resume)


def use_profile(magic: Magic, name: str) -> None:
    """Move the notebook to profile ``name``: a new connection, checked (the name is listed) before it is
    kept (``%hermes --profile``)."""
    old = magic.facade
    if old.settings.profile == name:
        return
    try:
        new = connect(old.settings, profile=name)
    except ValueError as exc:  # not a profile name
        raise UsageError(one_line(exc)) from None
    try:
        new.check()
    except BaseException:
        new.close()
        raise
    magic.use(new)
    print(terminal_safe(f"the notebook now uses Hermes profile {name} (a new connection)"))


def _ask_secret(label: str) -> str:
    try:
        return getpass.getpass(f"{label}: ").strip()
    except (StdinNotImplementedError, EOFError, OSError):
        return ""


# --- the subcommands --------------------------------------------------------------------------------------


def _connect(magic: Magic, args: Any) -> None:
    env = os.environ
    api_key = env.get(ENV_API_KEY) or _ask_secret("API Server key (HERMES_API_KEY)")
    token = env.get(ENV_DASHBOARD_TOKEN)
    if not token and (args.dashboard or not api_key):
        token = _ask_secret("Dashboard token (HERMES_DASHBOARD_TOKEN, Enter to skip)")
    try:
        settings = Settings.resolve(
            api_url=args.api,
            api_key=api_key or None,
            dashboard_url=args.dashboard,
            dashboard_token=token or None,
        )
    except ValueError as exc:
        raise UsageError(one_line(exc)) from None
    magic.use(connect(settings))
    print(str(magic.facade.status()))


def _jobs(magic: Magic, _args: Any) -> Table:
    columns = ("id", "name", "schedule", "state", "next_run_at", "last_status")
    rows = [
        {
            "id": j.id,
            "name": j.name,
            "schedule": j.schedule_display,
            "state": j.state,
            "next_run_at": j.next_run_at,
            "last_status": j.last_status,
        }
        for j in magic.facade.jobs.list()
    ]
    return Table(rows, columns=columns, empty="no jobs")


def _export(magic: Magic, args: Any) -> None:
    session = _target(magic, args, "export PATH SESSION")
    written = magic.facade.export(session, args.path, overwrite=args.overwrite, images=args.images)
    print(f"exported to {written}")


def _undo(magic: Magic, args: Any) -> None:
    removed = magic.facade.undo(_target(magic, args, "undo SESSION"), files=args.files)
    print("undid the last exchange" if removed else "nothing to undo")
    for name in getattr(removed, "files", ()):
        print(terminal_safe(f"  put back {name}"))  # a path the server named


def _branch(magic: Magic, args: Any) -> None:
    branched = magic.facade.branch(
        _target(magic, args, "branch SESSION"),
        at=-args.back if args.back else None,
        name=args.name,
        files=args.files,
    )
    print(terminal_safe(f"branched: the notebook continues in session {branched}"))  # the id is the server's
    for label, names in (
        ("put back", getattr(branched, "files", ())),
        ("could not put back", getattr(branched, "skipped", ())),
    ):
        for name in names:
            print(terminal_safe(f"  {label} {name}"))  # paths the server named


def _steer(magic: Magic, text: str) -> None:
    if not text.strip():
        raise UsageError(
            "%hermes steer TEXT: the guidance for the running turn (%hermes -b PROMPT starts one)"
        )
    outcome = magic.facade.steer(text.strip())
    print(
        "steered the running turn"
        if outcome.status == "queued"
        else "Hermes did not take the steer (the turn makes no more tool calls): send it as a prompt"
    )


def _stop(magic: Magic, _args: Any) -> None:
    turn = magic.facade.last_turn if magic.connected else None
    if turn is None or turn.done():
        print("no turn is running")
        return
    turn.stop()
    print("asked Hermes to stop the running turn")


def _flag(name: str, text: str) -> Argument:
    return ((name,), {"action": "store_true", "help": text})


SUBCOMMANDS: tuple[Subcommand, ...] = (
    Subcommand(
        "connect",
        "connect [--api URL] [--dashboard URL]",
        _connect,
        ((("--api",), {"metavar": "URL"}), (("--dashboard",), {"metavar": "URL"})),
    ),
    Subcommand("status", "status", lambda magic, _args: print(str(magic.facade.status()))),
    Subcommand("sessions", "sessions", lambda magic, _args: magic.facade.sessions()),
    Subcommand(
        "history",
        "history [SESSION]",
        lambda magic, args: magic.facade.history(_target(magic, args, "history SESSION")),
        (SESSION, RESUME),
    ),
    Subcommand("jobs", "jobs", _jobs),
    Subcommand(
        "chat",
        "chat [SESSION]",
        lambda magic, args: magic.facade.chat(session_option(args.session, args.resume)),
        (SESSION, RESUME),
    ),
    Subcommand("stop", "stop", _stop),
    Subcommand(
        "export",
        "export PATH [SESSION] [-f] [--images] (.md, .html or .ipynb; -f replaces a file; --images embeds "
        "images)",
        _export,
        (
            (("path",), {"metavar": "PATH"}),
            SESSION,
            (("--overwrite", "-f"), {"action": "store_true", "help": "replace an existing file"}),
            _flag("--images", "embed the images (else each is named)"),
            RESUME,
        ),
    ),
    Subcommand(
        "compress",
        "compress [SESSION] (summarize earlier messages)",
        lambda magic, args: print(
            compress_result_text(magic.facade.compress(_target(magic, args, "compress SESSION")))
        ),
        (SESSION, RESUME),
    ),
    Subcommand("models", "models", lambda magic, _args: magic.facade.models()),
    Subcommand(
        "usage",
        "usage [SESSION]",
        lambda magic, args: magic.facade.usage(_target(magic, args, "usage SESSION")),
        (SESSION, RESUME),
    ),
    Subcommand(
        "undo",
        "undo [SESSION] [--files] (drop the last exchange; --files: its file changes too)",
        _undo,
        (SESSION, RESUME, _flag("--files", "put back the turn's files too")),
    ),
    Subcommand(
        "branch",
        "branch [SESSION] [--back N] [--files] [--name TITLE] (continue in a copy, without the last N "
        "exchanges; --files: their file changes undone too)",
        _branch,
        (
            SESSION,
            RESUME,
            (("--back",), {"type": int, "default": 0, "metavar": "N", "help": "leave out the last N"}),
            _flag("--files", "put back their file changes too"),
            (("--name",), {"metavar": "TITLE", "help": "the copy's title"}),
        ),
    ),
    Subcommand(
        "regenerate",
        "regenerate [SESSION]",
        lambda magic, args: magic.facade.regenerate(_target(magic, args, "regenerate SESSION")),
        (SESSION, RESUME),
    ),
    Subcommand(
        "rollback",
        "rollback [ID [FILE]] (list or restore checkpoints)",
        lambda magic, args: magic.facade.rollback(
            session_option(args.session, args.resume), checkpoint=args.checkpoint, file=args.file
        ),
        (
            (("checkpoint",), {"nargs": "?", "metavar": "ID"}),
            (("file",), {"nargs": "?", "metavar": "FILE"}),
            (("-s", "--session"), {"metavar": "SESSION"}),
            RESUME,
        ),
    ),
    Subcommand(
        "changes",
        "changes [SESSION] (files the last turn changed)",
        lambda magic, args: magic.facade.changes(
            session_option(args.session, args.resume), checkpoint=args.checkpoint
        ),
        (SESSION, (("--checkpoint",), {"metavar": "ID"}), RESUME),
    ),
    Subcommand("steer", "steer TEXT (guide the running turn)", _steer, verbatim=True),
    Subcommand("profiles", "profiles", lambda magic, _args: magic.facade.profiles()),
    Subcommand(
        "reproduce",
        "reproduce PATH (run the saved notebook again in a fresh kernel and compare its outputs)",
        lambda magic, args: magic.facade.reproduce(args.path),
        ((("path",), {"metavar": "PATH"}),),
    ),
)

_BY_NAME = {row.name: row for row in SUBCOMMANDS}


def subcommand_named(word: str) -> Subcommand | None:
    """The row of subcommand ``word`` (None: the line is a prompt)."""
    return _BY_NAME.get(word)
