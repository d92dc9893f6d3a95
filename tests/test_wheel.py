"""``pip install hermes-notebook`` users: a wheel built from the tree runs the quickstart outside a clone, and
JupyterLab there lists the prebuilt extension the wheel ships.

The wheel is built from a fresh clone (its JS bundles built there with ``npm ci``) and installed in a new venv
in a folder that is not a clone. There the packaged quickstart runs top to bottom with nbclient against a
real Hermes 0.19.0, and ``python -m hermes_notebook.demo --check`` finds ``hermes`` on PATH, copies the
quickstart to the user's data folder and answers one prompt in a kernel JupyterLab starts. The Hermes used is
the project's ``.venv-hermes`` (run, never changed). Slow by nature: the durations are printed for the report.
Built and installed with the project's uv when scripts/setup installed one (same wheel, same requirements,
packages hardlinked from uv's cache), else with pip.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from clones import ROOT, clean_env, make_clone, project_envs_state, run_step, uv

HERMES_BIN_DIR = ROOT / ".venv-hermes" / "bin"

# Runs in the wheel's venv: start a real Hermes (the harness ships in the wheel), run the packaged quickstart.
RUN_QUICKSTART = r"""
import json, os, sys, tempfile
from pathlib import Path
import nbformat
from nbclient import NotebookClient
import hermes_notebook
from hermes_notebook._demo.local_hermes import LocalHermes
from hermes_notebook.demo import packaged_notebook

notebook = packaged_notebook("quickstart.ipynb")
with LocalHermes() as hermes:
    os.environ.update(HERMES_API_URL=hermes.api_url, HERMES_API_KEY=hermes.api_key,
                      HERMES_DASHBOARD_URL=hermes.dashboard_url,
                      HERMES_DASHBOARD_TOKEN=hermes.dashboard_token, HERMES_NOTEBOOK_UNATTENDED="1")
    (hermes.workdir / "quickstart-scratch").mkdir(exist_ok=True)
    nb = nbformat.read(notebook, as_version=4)
    run_dir = tempfile.mkdtemp()
    client = NotebookClient(nb, timeout=180, kernel_name="python3", resources={"metadata": {"path": run_dir}})
    client.execute()
texts = []
for cell in nb.cells:
    for out in cell.get("outputs", []):
        texts.append(out.get("text", "") + out.get("data", {}).get("text/plain", ""))
errors = [o for c in nb.cells for o in c.get("outputs", []) if o.get("output_type") == "error"]
print(json.dumps({"package": hermes_notebook.__file__, "notebook": str(notebook), "texts": texts,
                  "errors": errors}))
"""


@pytest.mark.hermes
def test_wheel_runs_the_quickstart_outside_a_clone(tmp_path: Path) -> None:
    """Built wheel, fresh venv outside a clone: packaged quickstart runs via nbclient; the demo module
    checks."""
    if not (HERMES_BIN_DIR / "hermes").exists():
        pytest.fail("no .venv-hermes: run scripts/setup")
    envs_before = project_envs_state()
    clone = make_clone(tmp_path / "src")
    env = clean_env()
    uv_bin = uv()
    if uv_bin:
        env.update(UV_NO_CONFIG="1", UV_PYTHON_DOWNLOADS="never")
        build = [uv_bin, "build", "--wheel", "--quiet", "--out-dir", str(tmp_path / "dist")]
    else:
        build = [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            ".",
            "--no-deps",
            "--quiet",
            "-w",
            str(tmp_path / "dist"),
        ]
    run_step(build, cwd=clone, env=env, timeout=900)
    (wheel,) = (tmp_path / "dist").glob("hermes_notebook-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for shipped in (
        "hermes_notebook/static/chat.js",
        "hermes_notebook/static/jobs.js",
        "hermes_notebook/static/progress.js",
        "hermes_notebook/demo/notebooks/quickstart.ipynb",
        "hermes_notebook/demo/__main__.py",
    ):
        assert shipped in names, shipped
    # The prebuilt JupyterLab / Notebook 7 extension, where Jupyter looks for it (and only there).
    labext = "hermes_notebook-0.1.0.data/data/share/jupyter/labextensions/hermes-notebook/"
    manifest = json.loads(zipfile.ZipFile(wheel).read(labext + "package.json"))
    assert (
        manifest["name"] == "hermes-notebook"
        and manifest["jupyterlab"]["_build"]["extension"] == "./extension"
    )
    assert labext + manifest["jupyterlab"]["_build"]["load"] in names
    assert (
        json.loads(zipfile.ZipFile(wheel).read(labext + "install.json"))["packageName"] == "hermes-notebook"
    )
    assert not any(n.startswith("hermes_notebook/labextension/") for n in names)
    assert not any(n.startswith(("scripts/", "tests/", "js/")) for n in names)
    assert (
        subprocess.run(
            ["git", "status", "--porcelain"], cwd=clone, capture_output=True, text=True, check=True
        ).stdout
        == ""
    ), "building the wheel left the clone dirty"

    outside = tmp_path / "user"
    outside.mkdir()
    venv = outside / "venv"
    run_step([sys.executable, "-m", "venv", str(venv)], cwd=outside, env=env, timeout=120)
    py = str(venv / "bin" / "python")
    # --compile-bytecode as pip does: the quickstart and the demo would otherwise compile what they import.
    install = (
        [uv_bin, "pip", "install", "--compile-bytecode", "--python", py]
        if uv_bin
        else [py, "-m", "pip", "install"]
    )
    run_step(
        [*install, "--quiet", f"{wheel}[demo]", "nbclient", "nbformat"], cwd=outside, env=env, timeout=900
    )

    # hermes on PATH, as a user who installed it themselves would have it.
    user_env = {
        **env,
        "PATH": f"{HERMES_BIN_DIR}:{env['PATH']}",
        "XDG_DATA_HOME": str(outside / "data"),
        "XDG_CACHE_HOME": str(outside / "cache"),
    }
    out = run_step([py, "-c", RUN_QUICKSTART], cwd=outside, env=user_env, timeout=600)
    result = json.loads(out.strip().splitlines()[-1])
    site = str(venv / "lib")
    assert result["package"].startswith(site) and result["notebook"].startswith(site), result
    assert result["errors"] == []
    texts = "\n".join(result["texts"])
    assert "Hello from the scripted model" in texts
    assert "You chose: A" in texts and "I thought about it" in texts  # answered from outside (UNATTENDED)

    jupyter = venv / "bin" / "jupyter"
    listed = run_step(
        ["sh", "-c", f"'{jupyter}' labextension list 2>&1"], cwd=outside, env=user_env, timeout=120
    )
    assert re.search(
        r"hermes-notebook v0\.1\.0 \S*enabled\S* \S*OK\S* \(python, hermes-notebook\)", listed
    ), listed

    out = run_step([py, "-m", "hermes_notebook.demo", "--check"], cwd=outside, env=user_env, timeout=300)
    kernel = re.search(
        r"check: a Lab kernel imported hermes_notebook from (\S+) and Hermes answered: (.*)", out
    )
    assert kernel is not None, out
    assert kernel.group(1).startswith(site) and kernel.group(2).startswith("Hello from the scripted model")
    assert (outside / "data" / "hermes-notebook" / "demo" / "quickstart.ipynb").is_file()
    assert "check: Lab will not ask about Jupyter news" in out
    assert project_envs_state() == envs_before, "the wheel test installed into the project's own venvs"
