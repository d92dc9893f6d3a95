"""Our anywidget base: one class for every instance, and nothing left behind once a widget is closed.

Why not ``anywidget.AnyWidget`` as is: it gives every *instance* its ``_esm``, ``_css`` and ``_anywidget_id``
traits through traitlets' ``add_traits``, which makes a new subclass per call (one ``MetaHasTraits`` class per
widget, never freed), and connects the class-level ``FileContents``' change signal to a lambda holding the
instance (psygnal keeps it strongly): every widget ever made stayed alive. A closed ``DOMWidget`` also
leaves its ``Layout`` child, a widget with its own comm, open and registered. A notebook asking a thousand
times made a thousand of each. Here the three traits are declared once on the class (``Bundle`` reads a
built file in ``static/`` on first use), ``add_traits`` adds only what a class lacks (so, for our classes,
nothing), and :meth:`LeanWidget.close` closes the layout too.
"""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path
from typing import Any

import anywidget
import traitlets

__all__ = ["STATIC", "Bundle", "LeanWidget", "bundle_hash", "bundle_text"]

#: The built front end (``cd js && npm run build``): one ESM bundle and one stylesheet per widget.
STATIC = Path(__file__).resolve().parent.parent / "static"


@functools.cache
def bundle_text(name: str) -> str:
    """The text of the built file ``static/<name>`` (read once per process)."""
    path = STATIC / name
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise FileNotFoundError(f"{path} is missing: build it with `cd js && npm run build`") from None


@functools.cache
def bundle_hash(*names: str) -> str:
    """A short hash of the built files ``names`` (which build of the view a page holds)."""
    digest = hashlib.sha256()
    for name in names:
        digest.update(bundle_text(name).encode())
    return digest.hexdigest()[:16]


class Bundle(traitlets.Unicode[str, "str | bytes"]):
    """A synced ``_esm`` / ``_css`` trait: the built file ``static/<name>``, read on first use."""

    def __init__(self, name: str) -> None:
        super().__init__()
        self.default_value = traitlets.Undefined  # type: ignore[assignment]  # so make_dynamic_default is asked
        self.file = name
        self.tag(sync=True)

    def make_dynamic_default(self) -> str:
        """The file's text (traitlets calls this for the first read of each instance)."""
        return bundle_text(self.file)


class LeanWidget(anywidget.AnyWidget):
    """An anywidget that adds no class per instance and frees everything it registered when closed."""

    #: anywidget's id for the class (its CSS updates); declared here so no instance adds it.
    _anywidget_id = traitlets.Unicode().tag(sync=True)

    @traitlets.default("_anywidget_id")
    def _default_anywidget_id(self) -> str:
        return f"{type(self).__module__}.{type(self).__name__}"

    def add_traits(self, **traits: Any) -> None:
        """Add only the traits this class lacks: traitlets makes a new class for every call."""
        missing = {name: trait for name, trait in traits.items() if not self.has_trait(name)}
        if missing:
            super().add_traits(**missing)

    def close(self) -> None:
        """Close the widget and its layout (a widget of its own, with its own comm)."""
        layout = self._trait_values.get("layout")  # never create one just to close it
        super().close()
        if layout is not None:
            layout.close()
