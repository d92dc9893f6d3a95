"""mypy over the typed core, with the settings in pyproject.toml's [tool.mypy]."""

from __future__ import annotations

import dataclasses
import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from hermes_notebook import events

ROOT = Path(__file__).resolve().parent.parent

#: The modules mypy must pass on; the same list as [tool.mypy] ``files`` in pyproject.toml.
TYPED = [
    "hermes_notebook/client",
    "hermes_notebook/turns.py",
    "hermes_notebook/events.py",
    "hermes_notebook/errors.py",
    "hermes_notebook/settings.py",
    "hermes_notebook/runtime.py",
    "hermes_notebook/coalesce.py",
    "hermes_notebook/render.py",
]


@pytest.mark.skipif(
    importlib.util.find_spec("mypy") is None, reason="mypy is not installed (pip install -e .[dev])"
)
def test_mypy_passes_on_the_typed_core() -> None:
    """mypy reports no error on client/, turns, events, errors, settings, runtime, coalesce and render."""
    result = subprocess.run(
        [sys.executable, "-m", "mypy", *TYPED],
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
