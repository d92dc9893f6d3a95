import { describe, expect, it } from "vitest";

import { createPartView } from "../src/chat/parts";
import type { PartContext } from "../src/chat/part_view";
import type { ChatOutgoing } from "../src/types/chat";
import { toolPart } from "./fixtures";

function context(): PartContext & { sent: ChatOutgoing[] } {
  const sent: ChatOutgoing[] = [];
  return { role: "assistant", sent, send: (m) => sent.push(m), answered: new Set() };
}

const OFFERED = "Puts back df, as before this run. Files and other effects are not undone.";
const DONE = "Undone: restored df. Files, network, databases and other effects of the run were not undone.";
const REFUSED = "Undo is not offered: log_file: an open file (TextIOWrapper) cannot be saved.";

describe("an approved run's Undo variables", () => {
  it("offers the button with what it restores, and one click sends undo_run with the run's number", () => {
    const ctx = context();
    const view = createPartView(toolPart("tool:1", { status: "completed" }), "assistant:t", ctx);
    const slot = view.el.querySelector<HTMLElement>(".hn-run-undo")!;
    expect(slot.hidden).toBe(true); // no run_undo: nothing shown
    view.update(toolPart("tool:1", { status: "completed", run_undo: { run: 3, offered: true, text: OFFERED } }));
    const button = slot.querySelector<HTMLButtonElement>("button.hn-run-undo-button")!;
    expect(slot.hidden).toBe(false);
    expect(button.textContent).toBe("Undo variables");
    expect(slot.querySelector(".hn-run-undo-note")!.textContent).toBe(OFFERED);
    button.click();
    button.click();
    expect(ctx.sent).toEqual([{ type: "undo_run", run: 3 }]);
    expect(button.disabled).toBe(true);
    expect(button.textContent).toBe("Undo sent");
    // the kernel puts what the click did on the part: the button goes, the outcome stays
    view.update(toolPart("tool:1", { status: "completed", run_undo: { run: 3, offered: false, text: DONE } }));
    expect(slot.querySelector("button")).toBeNull();
    expect(slot.textContent).toBe(DONE);
  });

  it("says in one line why Undo is not offered, with no button", () => {
    const ctx = context();
    const view = createPartView(
      toolPart("tool:2", { status: "completed", run_undo: { run: 4, offered: false, text: REFUSED } }),
      "assistant:t",
      ctx,
    );
    const slot = view.el.querySelector<HTMLElement>(".hn-run-undo")!;
    expect(slot.hidden).toBe(false);
    expect(slot.querySelector("button")).toBeNull();
    expect(slot.textContent).toBe(REFUSED);
    expect(ctx.sent).toEqual([]);
  });
});
