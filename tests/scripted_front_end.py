"""A scripted stand-in for the notebook front end on the far side of the kernel's document comm, for tests
that have no browser: it keeps a list of cells and answers the kernel's requests as js/src/labextension.ts
does (outline, propose, cell, run, outputs), recording each. The real extension is tested in tests/browser/.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hermes_notebook.kernel.document import DocumentLink


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
    #: What a ``run`` answers (a real page runs the cell and sends its outputs).
    run_outputs: list[dict[str, Any]] = field(default_factory=list)
    #: False: receive requests and never answer (a page that went away without a word).
    answering: bool = True

    def hello(self) -> None:
        self.link.connect(self)
        self.link.receive({"type": "hello", "client": self.client, "app": "lab"})

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
            cells = [{**c, "lines": len(c["source"].splitlines())} for c in self.cells]
            return {
                "ok": True,
                "path": "scripted.ipynb",
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
            self.pending[change["id"]] = change
            old = "" if change["kind"] == "insert" else self.cells[index]["source"]
            new = "" if change["kind"] == "delete" else change["source"]
            return {
                "ok": True,
                "added": len(new.splitlines()),
                "removed": len(old.splitlines()),
                "cell_type": change.get("cell_type") or self.cells[index]["type"],
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
            return {"ok": True, "execution_count": cell["execution_count"], "outputs": self.run_outputs}
        if op == "outputs":
            cell = next((c for c in self.cells if c["id"] == request.get("cell")), None)
            if cell is None or cell["source"] != request.get("source"):
                return {"ok": False, "error": "the cell changed after the user approved it"}
            cell["written_outputs"] = request.get("outputs")
            return {"ok": True}
        return {"ok": False, "error": f"unknown request {op!r}"}


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
