// An approved run's Undo variables (`run_undo` on a run_code, run_cell or run_cells part, kernel/undo/): the
// kernel saved the variables the code named before it ran. Offered: a button "Undo variables" and what it puts
// back and deletes; a click sends `undo_run` with the run's number (the kernel refuses an older run's, and says
// what it did as the notice line).
// Not offered: the kernel's one line saying why. After a click the kernel patches the part with what it did (no
// button), which the saved transcript keeps too. All say files and other effects are not undone.
//
// Stable DOM hooks: .hn-run-undo (hidden when the part has none), .hn-run-undo-button, .hn-run-undo-note.

import { h } from "../dom";
import type { ChatCommand } from "../types/chat";
import type { RunUndo } from "../types/turns";

/** Fill `slot` with the part's Undo (hidden when it has none); rebuilt only when it changes. */
export function renderRunUndo(slot: HTMLElement, undo: RunUndo | undefined, send: (message: ChatCommand) => void): void {
  const key = undo === undefined ? "" : `${undo.run}:${undo.offered}:${undo.text}`;
  if (slot.dataset.undo === key) return;
  slot.dataset.undo = key;
  slot.hidden = undo === undefined;
  if (undo === undefined) {
    slot.replaceChildren();
    return;
  }
  const note = h("span", { class: "hn-run-undo-note", role: "note" }, undo.text);
  if (!undo.offered) {
    slot.replaceChildren(note);
    return;
  }
  const button = h("button", { type: "button", class: "hn-run-undo-button" }, "Undo variables");
  button.addEventListener("click", () => {
    button.disabled = true; // one click: the kernel's answer shows as the notice line
    button.textContent = "Undo sent";
    send({ type: "undo_run", run: undo.run });
  });
  slot.replaceChildren(button, note);
}
