"""``./demo``: a local Hermes with the scripted offline model, and JupyterLab on the quickstart notebook.

Which Hermes: the newer one by default (``--hermes newer``; what current Hermes speaks: the notebook's kernel
tools, plans, diffs, undo and model switching all work there), or ``--hermes 0.19.0`` (the PyPI release). The
caller picks the binary (``$HERMES_BIN``: ``./demo`` and ``python -m hermes_notebook.demo`` set it by this
flag).

Why a launcher of our own: a first-time user should see the notebook surface work in a minute, with no LLM
account and no network. Hermes itself is real (its API Server and Dashboard run on loopback ports in a
throwaway ``HERMES_HOME``); only the model is a scripted stand-in, and every banner says so. If the user has
their own ``~/.hermes/config.yaml``, they may use its ``model:`` section instead (their home is only read).

With ``--copy`` (what ``./demo`` passes for a clone) Lab opens fresh copies of the notebooks, made for this
run in its throwaway folder, so the tracked notebooks are never opened in place: Lab's autosave, the cells'
outputs and the files the notebooks write (an export) land in the copy, ``git status`` stays clean, and the
next run starts from the notebooks as committed, not from this run's outputs.

Everything started here is stopped by PID on Ctrl+C (or SIGTERM), Lab first (it shuts its kernels down),
then Hermes. ``--check`` starts everything, verifies the Lab URL and both Hermes servers, runs one prompt in a
kernel Lab starts for the quickstart notebook (so a package that does not import there fails), and stops.
"""

from __future__ import annotations

import argparse
import contextlib
import faulthandler
import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import webbrowser
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import httpx

from .local_hermes import PROVIDER_KEY_NAMES, LocalHermes
from .processes import REPO_ROOT, free_port

__all__ = ["HERMES_CHOICES", "hermes_choice", "main"]

LOOPBACK = "127.0.0.1"
USER_CONFIG = Path.home() / ".hermes" / "config.yaml"
NOTEBOOK = "quickstart.ipynb"
#: ``--hermes``: the newer Hermes (the default) or the PyPI release.
HERMES_CHOICES = ("newer", "0.19.0")


def say(message: str) -> None:
    """Print a demo line (flushed: the test reads it from a pipe)."""
    print(f"[demo] {message}", flush=True)


def _parse(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="./demo", description=__doc__.split("\n")[0])
    parser.add_argument(
        "--use-my-hermes",
        action="store_true",
        help="use the model from ~/.hermes/config.yaml instead of the scripted offline model",
    )
    parser.add_argument("--scripted", action="store_true", help="use the scripted model without asking")
    parser.add_argument("--no-browser", action="store_true", help="print the URL but do not open a browser")
    parser.add_argument(
        "--check",
        action="store_true",
        help="start everything, verify Lab and Hermes, run one prompt in a Lab kernel, then stop (for CI)",
    )
    parser.add_argument(
        "--hermes",
        choices=HERMES_CHOICES,
        default=HERMES_CHOICES[0],
        help="which Hermes to start: the newer one (default: kernel tools, plans, diffs, undo) or the 0.19.0 "
        "release",
    )
    parser.add_argument("--port", type=int, default=0, help="JupyterLab port (default: a free one)")
    parser.add_argument("--notebooks", type=Path, default=REPO_ROOT / "notebooks", help="folder Lab opens")
    parser.add_argument(
        "--copy",
        action="store_true",
        help="open fresh copies of the notebooks in that folder, made for this run (and removed after it)",
    )
    return parser.parse_args(argv)


def hermes_choice(argv: Sequence[str]) -> str:
    """The ``--hermes`` value in ``argv`` (default: the newer Hermes), read before the launcher parses the
    rest."""
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--hermes", choices=HERMES_CHOICES, default=HERMES_CHOICES[0])
    return str(parser.parse_known_args(list(argv))[0].hermes)


def _want_user_model(args: argparse.Namespace) -> bool:
    if args.use_my_hermes:
        if not USER_CONFIG.exists():
            raise SystemExit(f"[demo] --use-my-hermes: {USER_CONFIG} does not exist")
        return True
    if args.scripted or args.check or not USER_CONFIG.exists() or not sys.stdin.isatty():
        return False
    answer = (
        input(
            f"[demo] Found your Hermes config ({USER_CONFIG}). Use its model instead of the scripted "
            "offline stand-in? [y/N] "
        )
        .strip()
        .lower()
    )
    return answer in ("y", "yes")


def _user_model_overrides(home: Path) -> dict[str, Any]:
    """The ``model:`` section of the user's config (read only), and their ``.env`` copied into our home."""
    import yaml  # jupyter_events (a JupyterLab dependency) brings PyYAML

    config = yaml.safe_load(USER_CONFIG.read_text()) or {}
    model = config.get("model")
    if not isinstance(model, dict):
        raise SystemExit(f"[demo] {USER_CONFIG} has no model: section to use")
    env_file = USER_CONFIG.parent / ".env"
    if env_file.exists():
        shutil.copy2(env_file, home / ".env")
        os.chmod(home / ".env", 0o600)
    return {"model": model}


# Lab's own settings for the demo (its user settings dir is a throwaway one): no "Would you like to get
# notified about official Jupyter news?" toast, no update checks.
LAB_SETTINGS = {
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {
        "fetchNews": "false",
        "checkForUpdates": False,
    },
}

# What --check runs in a kernel Lab starts for the quickstart notebook: the import a user's first cell does,
# from the notebook's folder (not the repo root, where the package would import from the working directory),
# and one real prompt. The last line is read back.
KERNEL_CHECK = """
import json, hermes_notebook as hn
reply = hn.connect().ask("Hello from ./demo --check", approve="deny")
print(json.dumps([hn.__file__, reply.text]))
"""


def write_lab_settings(settings_dir: Path) -> None:
    """Write :data:`LAB_SETTINGS` as JupyterLab user settings files."""
    for rel, data in LAB_SETTINGS.items():
        path = settings_dir / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(data, indent=2))


def run_in_lab_kernel(
    base: str, token: str, runtime_dir: Path, notebook: str, code: str, timeout: float = 180
) -> tuple[str, str]:
    """Run ``code`` in a kernel the Lab server starts for ``notebook``; return the JSON list it printed last.

    Why Lab's own kernel: it is the one the user's notebook gets (Lab's Python, environment and working
    directory), so a package that does not import there fails here too.
    """
    from jupyter_client.blocking.client import BlockingKernelClient

    params = {"token": token}
    with httpx.Client(trust_env=False, timeout=30) as http:
        created = http.post(
            f"{base}/api/sessions",
            params=params,
            json={"path": notebook, "type": "notebook", "name": notebook, "kernel": {"name": "python3"}},
        )
        created.raise_for_status()
        session = created.json()
        kernel_id = session["kernel"]["id"]
        client = BlockingKernelClient()
        try:
            client.load_connection_file(str(runtime_dir / f"kernel-{kernel_id}.json"))
            # No heartbeat channel: on a loaded machine a late heartbeat reads as "Kernel died" while the
            # kernel is only slow to start; readiness is its kernel_info reply, and Lab reports a real death.
            client.start_channels(hb=False)
            try:
                client.wait_for_ready(timeout=120)
            except RuntimeError as exc:
                state = http.get(f"{base}/api/kernels/{kernel_id}", params=params)
                detail = (
                    state.json().get("execution_state")
                    if state.status_code == 200
                    else f"HTTP {state.status_code}"
                )
                raise RuntimeError(f"the Lab kernel did not start ({exc}; Lab says: {detail})") from exc
            printed: list[str] = []
            errors: list[str] = []

            def collect(msg: dict[str, Any]) -> None:
                content = msg["content"]
                if msg["msg_type"] == "stream" and content.get("name") == "stdout":
                    printed.append(content["text"])
                elif msg["msg_type"] == "error":
                    errors.append(f"{content.get('ename')}: {content.get('evalue')}")

            reply = client.execute_interactive(code, timeout=timeout, output_hook=collect)
            if reply["content"].get("status") != "ok" or errors:
                raise RuntimeError(f"the Lab kernel failed: {'; '.join(errors) or reply['content']}")
            lines = "".join(printed).strip().splitlines()
            where, answer = json.loads(lines[-1])
            return str(where), str(answer)
        finally:
            client.stop_channels()
            http.delete(f"{base}/api/sessions/{session['id']}", params=params)


class Demo:
    """The processes of one demo run, stopped in reverse order of starting."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.hermes: LocalHermes | None = None
        self.lab: subprocess.Popen[bytes] | None = None
        self.lab_log: Path | None = None
        self.url = ""
        self._home: Path | None = None
        self._runtime_dir = Path()
        self._base = self._token = ""

    def start(self) -> None:
        """Start Hermes, then Lab, and print where to go."""
        use_mine = _want_user_model(self.args)
        self._home = Path(tempfile.mkdtemp(prefix="hermes-demo-home-"))
        if use_mine:
            overrides = _user_model_overrides(self._home)
            extra_env = {k: os.environ[k] for k in PROVIDER_KEY_NAMES if k in os.environ}
            self.hermes = LocalHermes(
                home=self._home,
                model_url="http://127.0.0.1:9/v1",
                config_overrides=overrides,
                extra_env=extra_env,
            )
            label = f"YOUR model from {USER_CONFIG} (your ~/.hermes is only read)"
        else:
            self.hermes = LocalHermes(home=self._home, estimate_usage=True)  # the context gauge moves
            label = (
                "SCRIPTED OFFLINE STAND-IN (not an LLM: it answers by keyword; "
                "see hermes_notebook/_demo/scripted_model.py)"
            )
        say(f"starting Hermes {self.hermes.version} (API Server + Dashboard) on loopback ...")
        self.hermes.start()
        say(f"Hermes API Server  {self.hermes.api_url}")
        say(f"Hermes Dashboard   {self.hermes.dashboard_url}")
        say(f"model              {label}")
        self._start_lab()

    def _notebook_folder(self) -> Path:
        """The folder Lab opens: ``--notebooks``, or with ``--copy`` fresh copies of its notebooks, for this
        run only."""
        assert self._home is not None
        if not self.args.copy:
            return Path(self.args.notebooks)
        folder = self._home / "notebooks"
        folder.mkdir(parents=True, exist_ok=True)
        for notebook in sorted(Path(self.args.notebooks).glob("*.ipynb")):
            shutil.copyfile(notebook, folder / notebook.name)
        say(f"notebooks          fresh copies in {folder} (removed when the demo stops; the originals stay)")
        return folder

    def _start_lab(self) -> None:
        assert self.hermes is not None and self._home is not None
        notebooks = self._notebook_folder()
        port = self.args.port or free_port()
        token = secrets.token_urlsafe(24)
        lab_dir = self._home / "jupyter"
        for sub in ("config", "data", "runtime", "settings", "workspaces"):
            (lab_dir / sub).mkdir(parents=True, exist_ok=True)
        write_lab_settings(lab_dir / "settings")
        self._runtime_dir = lab_dir / "runtime"
        env = {
            **os.environ,
            "HERMES_API_URL": self.hermes.api_url,
            "HERMES_API_KEY": self.hermes.api_key,
            "HERMES_DASHBOARD_URL": self.hermes.dashboard_url,
            "HERMES_DASHBOARD_TOKEN": self.hermes.dashboard_token,
            "JUPYTER_CONFIG_DIR": str(lab_dir / "config"),
            "JUPYTER_RUNTIME_DIR": str(lab_dir / "runtime"),
            # By environment, not argv: a command line is readable by every local user (ps, /proc/*/cmdline).
            "JUPYTER_TOKEN": token,
        }
        argv = [
            sys.executable,
            "-m",
            "jupyterlab",
            "--no-browser",
            f"--ServerApp.ip={LOOPBACK}",
            f"--ServerApp.port={port}",
            "--ServerApp.port_retries=0",
            f"--ServerApp.root_dir={notebooks}",
            "--LabApp.news_url=None",
            "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
            f"--LabApp.workspaces_dir={lab_dir / 'workspaces'}",
            f"--LabApp.user_settings_dir={lab_dir / 'settings'}",
        ]
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            argv.append("--ServerApp.allow_root=True")
        self.lab_log = self._home / "logs" / "jupyterlab.log"
        self.lab_log.parent.mkdir(parents=True, exist_ok=True)
        with open(self.lab_log, "ab") as log:
            self.lab = subprocess.Popen(
                argv,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        base = f"http://{LOOPBACK}:{port}"
        deadline = time.monotonic() + 60
        with httpx.Client(trust_env=False, timeout=5) as http:
            while True:
                if self.lab.poll() is not None:
                    raise RuntimeError(f"JupyterLab exited during startup; see {self.lab_log}")
                with contextlib.suppress(httpx.TransportError):
                    if http.get(f"{base}/api/status", params={"token": token}).status_code == 200:
                        break
                if time.monotonic() > deadline:
                    raise RuntimeError(f"JupyterLab did not start within 60 s; see {self.lab_log}")
                time.sleep(0.1)
        self.url = f"{base}/lab/tree/{NOTEBOOK}?token={token}"
        self._base, self._token = base, token
        say(f"JupyterLab         {self.url}")
        if (notebooks / "working_with_data.ipynb").is_file():
            say(
                "next to it: working_with_data.ipynb (a DataFrame, kernel tools, a plan, a diff, undo, "
                "export)"
            )

    def check(self) -> None:
        """Verify the Lab page and both Hermes servers answer (``--check``)."""
        assert self.hermes is not None
        with httpx.Client(trust_env=False, timeout=10) as http:
            page = http.get(self.url)
            if page.status_code != 200 or "JupyterLab" not in page.text:
                raise RuntimeError(f"the Lab URL answered HTTP {page.status_code}")
            health = http.get(f"{self.hermes.api_url}/health").json()
            status = http.get(f"{self.hermes.dashboard_url}/api/status").json()
            news = http.get(
                f"{self._base}/lab/api/settings/@jupyterlab/apputils-extension:notification",
                params={"token": self._token},
            ).json()
        say(
            f"check: Lab page ok, API Server {health.get('status')} {health.get('version', '')}, "
            f"Dashboard version {status.get('version')}"
        )
        fetch_news = (news.get("settings") or {}).get("fetchNews")
        if fetch_news != "false":
            raise RuntimeError(f"JupyterLab would ask about Jupyter news (fetchNews={fetch_news!r})")
        say("check: Lab will not ask about Jupyter news")
        where, answer = run_in_lab_kernel(self._base, self._token, self._runtime_dir, NOTEBOOK, KERNEL_CHECK)
        say(f"check: a Lab kernel imported hermes_notebook from {where} and Hermes answered: {answer}")

    def stop(self, grace: float = 10.0) -> None:
        """Stop Lab and Hermes together: SIGTERM to Lab's process group (which also shuts its kernels down),
        Hermes stopped meanwhile, then SIGKILL for what is left of Lab after ``grace`` s. Says what took
        long."""
        started = time.monotonic()
        lab, self.lab = self.lab, None
        if lab is not None and lab.poll() is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(lab.pid, signal.SIGTERM)
        if self.hermes is not None:
            self.hermes.close()
            self.hermes = None
            if time.monotonic() - started > grace / 2:
                say(f"Hermes took {time.monotonic() - started:.1f} s to stop")
        if lab is not None:
            try:
                lab.wait(timeout=max(0.1, started + grace - time.monotonic()))
            except subprocess.TimeoutExpired:
                say(f"JupyterLab did not exit within {grace:.0f} s of being asked: killing it")
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(lab.pid, signal.SIGKILL)
                lab.wait(timeout=10)
        if self._home is not None:
            shutil.rmtree(self._home, ignore_errors=True)
            self._home = None


def main(argv: Sequence[str] | None = None) -> int:
    """Run the demo until Ctrl+C (or, with ``--check``, until the checks pass)."""
    args = _parse(argv)
    demo = Demo(args)

    def on_term(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, on_term)
    # Ctrl+C stops the demo even when it was started with SIGINT ignored or blocked (a background job of a
    # non-interactive shell, a CI runner): Python keeps an inherited SIG_IGN, and the demo would never stop.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGTERM})
    # `kill -USR1 <pid>` prints every thread's stack to stderr: what a demo that does not stop is waiting on.
    faulthandler.register(signal.SIGUSR1, all_threads=True)
    try:
        demo.start()
        if args.check:
            demo.check()
            say("check passed; stopping")
            return 0
        if not args.no_browser:
            with contextlib.suppress(Exception):
                webbrowser.open(demo.url)
        say("ready. Press Ctrl+C to stop everything the demo started.")
        while demo.lab is not None and demo.lab.poll() is None:
            time.sleep(0.5)
        say("JupyterLab exited")
        return 1
    except KeyboardInterrupt:
        say("stopping ...")
        return 0
    except Exception as exc:  # one clear line, then clean up
        say(f"failed: {exc}")
        return 1
    finally:
        demo.stop()
        say("stopped")
