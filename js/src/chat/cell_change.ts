// A kernel cell tool's part names the notebook change it proposed (`cell_change`): say what it is and offer
// "Show in notebook", which asks the notebook extension to scroll to the pending change (notebook/reveal.ts).

import { h } from "../dom";
import { revealChange } from "../notebook/reveal";
import type { CellChange } from "../types/turns";

function describe(change: CellChange): string {
  if (change.kind === "insert") return `Proposed a new ${change.cell_type} cell at index ${change.index}`;
  if (change.kind === "edit") return `Proposed an edit of cell ${change.index}`;
  return `Proposed deleting cell ${change.index}`;
}

/** Fill `slot` for `change` (hidden when there is none); rebuilt only when the change differs. */
export function renderCellChange(slot: HTMLElement, change: CellChange | undefined): void {
  const key = change === undefined ? "" : JSON.stringify(change);
  if (slot.dataset.change === key) return;
  slot.dataset.change = key;
  slot.hidden = change === undefined;
  if (change === undefined) {
    slot.replaceChildren();
    return;
  }
  const note = h("span", { class: "hn-cell-change-note", role: "status" });
  const show = h("button", { type: "button", class: "hn-cell-change-show" }, "Show in notebook");
  show.addEventListener("click", () => {
    note.textContent = revealChange(change.id)
      ? ""
      : "Not pending any more (kept or discarded), or this notebook is not open with the hermes-notebook extension.";
  });
  slot.replaceChildren(h("span", { class: "hn-cell-change-label" }, `${describe(change)}, waiting for you:`), show, note);
}
