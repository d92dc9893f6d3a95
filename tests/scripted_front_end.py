"""A scripted stand-in for the notebook front end on the far side of the kernel's document comm, for tests
that have no browser: it keeps a list of cells and answers the kernel's requests as js/src/labextension.ts
does (outline, propose, cell, run, outputs, restart_run_all), recording each. The real extension is tested
in tests/browser/.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hermes_notebook.kernel.document import DocumentLink
from hermes_notebook.kernel.versions import cell_version


@dataclass
class ScriptedFrontEnd:
    """Plays one page with the extension: ``hello()`` attaches it, ``bye()`` detaches it."""

    link: DocumentLink
    cells: list[dict[str, Any]] = field(default_factory=list)
    client: str = "scripted-page"
    #: Every request the kernel sent, in order.
    requests: list[dict[str, Any]] = field(default_factory=list)
    #: Proposed changes by id, as the page would show them pending.
    pending: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: What a ``run`` answers (a real page runs the cell and sends its outputs); by cell id where
    #: ``outputs_by_cell`` names it.
    run_outputs: list[dict[str, Any]] = field(default_factory=list)
    outputs_by_cell: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    #: How many times the kernel asked the page to restart it and run all cells.
    restarts: int = 0
    #: False: receive requests and never answer (a page that went away without a word).
    answering: bool = True
    #: The notebook's path, as the page names it.
    path: str = "scripted.ipynb"

    def hello(self) -> None:
        self.link.connect(self)
        self.link.receive({"type": "hello", "client": self.client, "app": "lab", "path": self.path})

    def bye(self) -> None:
        self.link.receive({"type": "bye", "client": self.client})

    # Transport
    def send(self, data: dict[str, Any]) -> None:
        self.requests.append(data)
        if not self.answering or data.get("to") != self.client:
            return
        reply = self._answer(data)
        self.link.receive({"type": "reply", "id": data["id"], "client": self.client, **reply})

    def close(self) -> None:
        pass

    def _answer(self, request: dict[str, Any]) -> dict[str, Any]:
        op = request.get("op")
        if op == "outline":
            cells = [
                {**c, "lines": len(c["source"].splitlines()), "version": cell_version(c["source"])}
                for c in self.cells
            ]
            return {
                "ok": True,
                "path": self.path,
                "cells": cells,
                "pending": [
                    {"id": c["id"], "kind": c["kind"], "index": c["index"]} for c in self.pending.values()
                ],
            }
        index = request.get("index", request.get("change", {}).get("index"))
        if op == "propose":
            change = request["change"]
            if change["kind"] != "insert" and not 0 <= index < len(self.cells):
                return {
                    "ok": False,
                    "error": f"there is no cell {index}; the notebook has {len(self.cells)} cells",
                }
            if change.get("notebook") not in (None, self.path):
                return {"ok": False, "error": f"this is {self.path}, not {change['notebook']}"}
            based: dict[str, Any] = {}
            if change["kind"] != "insert":
                cell = self.cells[index]
                stale = _stale(change.get("expect"), index, cell)
                if stale is not None:
                    return {"ok": False, "error": "the cell changed", "stale": stale, "path": self.path}
                based = {"cell": cell["id"], "version": cell_version(cell["source"])}
            replaced = any(
                p["kind"] != "insert" and p["index"] == index and change["kind"] != "insert"
                for p in self.pending.values()
            )
            self.pending[change["id"]] = change
            old = "" if change["kind"] == "insert" else self.cells[index]["source"]
            new = "" if change["kind"] == "delete" else change["source"]
            return {
                "ok": True,
                "added": len(new.splitlines()),
                "removed": len(old.splitlines()),
                "cell_type": change.get("cell_type") or self.cells[index]["type"],
                "path": self.path,
                "replaced": replaced,
                **based,
            }
        if op == "cell":
            if not 0 <= index < len(self.cells):
                return {"ok": False, "error": f"there is no cell {index}"}
            return {"ok": True, "cell": self.cells[index]}
        if op == "run":
            cell = next((c for c in self.cells if c["id"] == request.get("cell")), None)
            if cell is None or cell["source"] != request.get("source"):
                return {"ok": False, "error": "the cell changed after the user approved it"}
            cell["execution_count"] = (cell.get("execution_count") or 0) + 1
            outputs = self.outputs_by_cell.get(cell["id"], self.run_outputs)
            return {"ok": True, "execution_count": cell["execution_count"], "outputs": outputs}
        if op == "restart_run_all":
            self.restarts += 1
            return {"ok": True}
        if op == "outputs":
            cell = next((c for c in self.cells if c["id"] == request.get("cell")), None)
            if cell is None or cell["source"] != request.get("source"):
                return {"ok": False, "error": "the cell changed after the user approved it"}
            cell["written_outputs"] = request.get("outputs")
            return {"ok": True}
        return {"ok": False, "error": f"unknown request {op!r}"}


def _stale(expect: Any, index: int, cell: dict[str, Any]) -> dict[str, Any] | None:
    """The page's read-before-write check (js/src/notebook/versions.ts staleCell)."""
    if not isinstance(expect, dict):
        return None
    version = cell_version(cell["source"])
    moved = expect.get("cell") not in (None, cell["id"])
    versions = expect.get("versions") or []
    if not moved and (not versions or version in versions):
        return None
    return {
        "index": index,
        "id": cell["id"],
        "type": cell["type"],
        "source": cell["source"],
        "version": version,
        "moved": moved,
    }


def code_cell(
    cell_id: str, source: str, count: int | None = None, outputs: list[str] | None = None
) -> dict[str, Any]:
    """A cell as the page's outline lists it."""
    return {
        "id": cell_id,
        "type": "code",
        "source": source,
        "execution_count": count,
        "outputs": outputs or [],
    }
