"""docs/teams.md's configurations hold: the zero-to-jupyterhub recipe is valid chart configuration and speaks
to Hermes as the launcher does; the JupyterHub config block is Python.

The recipe cannot run here (no Kubernetes, no Docker engine), so it is validated as Helm would before
installing: the chart's defaults merged with it, then the chart's values schema (tests/fixtures/z2jh/, from
the chart's repository; SOURCE.md says which commit).
"""

from __future__ import annotations

import copy
import json
import re
from typing import Any

import jsonschema
import yaml

from hermes_notebook._demo.processes import deep_merge
from hermes_notebook.launch.user_hermes import CLIENT_VARIABLES, SPAWN_VARIABLES
from tests.helpers import FIXTURES, REPO

DOC = (REPO / "docs" / "teams.md").read_text(encoding="utf-8")
CHART = FIXTURES / "z2jh"


def _block(language: str, first_line: str) -> str:
    match = re.search(rf"```{language}\n({re.escape(first_line)}.*?)```", DOC, re.DOTALL)
    assert match is not None, f"docs/teams.md has no {language} block starting {first_line!r}"
    return match.group(1)


def _errors(values: dict[str, Any]) -> list[str]:
    schema = json.loads((CHART / "values.schema.json").read_text())
    defaults = json.loads((CHART / "values.json").read_text())
    validator = jsonschema.Draft7Validator(schema)
    return [error.message for error in validator.iter_errors(deep_merge(defaults, values))]


def test_the_zero_to_jupyterhub_recipe_is_valid_chart_configuration_for_the_launchers_variables() -> None:
    """The recipe parses, passes the chart's schema over its defaults (a misspelled key would not: checked),
    and its sidecar sets exactly the variables the launcher sets for Hermes (API_SERVER_*, the Dashboard's
    session token) on the pod's loopback, runs the Dashboard isolated, takes the model key and both
    credentials from Secrets, while the notebook container gets the settings kernels read."""
    recipe = yaml.safe_load(_block("yaml", "# config.yaml for the jupyterhub Helm chart"))
    assert _errors(recipe) == []
    misspelled = copy.deepcopy(recipe)
    misspelled["singleuser"]["extraContainer"] = misspelled["singleuser"].pop("extraContainers")
    assert any("'extraContainer' was unexpected" in error for error in _errors(misspelled))
    (sidecar,) = recipe["singleuser"]["extraContainers"]
    env = {item["name"]: item for item in sidecar["env"]}
    assert set(SPAWN_VARIABLES) <= set(env)
    assert env["API_SERVER_HOST"]["value"] == "127.0.0.1"
    for secret in ("API_SERVER_KEY", "HERMES_DASHBOARD_SESSION_TOKEN", "OPENROUTER_API_KEY"):
        assert "secretKeyRef" in env[secret]["valueFrom"] and "value" not in env[secret]
    script = " ".join(sidecar["args"])
    assert "--host 127.0.0.1" in script and "--isolated" in script and "--skip-build" in script
    kernels = recipe["singleuser"]["extraEnv"]
    assert set(kernels) == set(CLIENT_VARIABLES[:4])
    assert kernels["HERMES_DASHBOARD_URL"].startswith("http://127.0.0.1:")
    assert all(
        "secretKeyRef" in kernels[name]["valueFrom"] for name in ("HERMES_API_KEY", "HERMES_DASHBOARD_TOKEN")
    )


def test_the_hub_and_launcher_config_blocks_are_python() -> None:
    """The jupyterhub_config.py and jupyter_server_config.py blocks compile, and name real settings: the
    launcher's traits and the profile variables the settings read."""
    from hermes_notebook.launch.extension import HermesLauncher

    hub = _block("python", "# jupyterhub_config.py")
    compile(hub, "jupyterhub_config.py", "exec")
    assert "HERMES_PROFILE" in hub and "HERMES_PROFILE_LOCK" in hub
    launcher = _block("python", "c.HermesLauncher.hermes_bin")
    compile(launcher, "jupyter_server_config.py", "exec")
    named = set(re.findall(r"c\.HermesLauncher\.(\w+)", launcher))
    assert named and named <= set(HermesLauncher.class_own_traits(config=True))
