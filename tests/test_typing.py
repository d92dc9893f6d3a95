"""Static checks: mypy with pyproject.toml's [tool.mypy] settings, and ruff."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path

from hermes_notebook.turns import events

ROOT = Path(__file__).resolve().parent.parent


def _mypy_files() -> list[str]:
    """The typed modules: pyproject.toml's [tool.mypy] ``files`` (one list, no copy here to drift)."""
    import tomllib

    with open(ROOT / "pyproject.toml", "rb") as f:
        return list(tomllib.load(f)["tool"]["mypy"]["files"])


def test_mypy_passes_on_the_typed_modules() -> None:
    """mypy (strict) reports no error on every module listed in [tool.mypy] files."""
    files = _mypy_files()
    assert "hermes_notebook/turns" in files
    result = subprocess.run(
        [sys.executable, "-m", "mypy", *files],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_event_builder_declares_exactly_the_event_fields() -> None:
    """events._EventBuilder annotates the same slots as Event's fields, so mypy checks the hot-path stores."""
    builder = events._EventBuilder
    assert builder.__slots__ == events.Event.__slots__
    assert list(builder.__annotations__) == [f.name for f in dataclasses.fields(events.Event)]


def test_ruff_passes_on_the_package_and_tests() -> None:
    """ruff (the rules in pyproject.toml, E501 included) reports nothing on the package, tests, benchmarks and
    scripts."""
    result = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "hermes_notebook", "tests", "benchmarks", "scripts"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_formatter_decides_the_layout() -> None:
    """``ruff format --check`` passes: the formatter lays out every Python file, so a line cap or a module
    size measures the same thing everywhere."""
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "ruff",
            "format",
            "--check",
            "hermes_notebook",
            "tests",
            "benchmarks",
            "scripts",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
