// What a pending change looks like on its cell: a heading that says what Hermes proposes, the diff (every line as
// text: the model wrote it), and Keep / Discard. Plain buttons, so Tab and Enter work; JupyterLab's notebook
// shortcuts are suppressed inside (data-lm-suppress-shortcuts), so Enter or "D D" there never acts on the cell.

import { h } from "../dom";
import type { DiffRow, LineDiff } from "./diff";
import type { PendingChange } from "./pending";

export interface PendingActions {
  keep(): void;
  discard(): void;
}

/** The heading of a pending change (also its region's accessible name). */
export function pendingTitle(change: PendingChange): string {
  if (change.kind === "insert") return `Hermes proposes a new ${change.cellType} cell here`;
  if (change.kind === "edit") return "Hermes proposes an edit of this cell";
  return "Hermes proposes deleting this cell";
}

/** The element shown on the cell for `change`; `stale`: the user changed the cell after Hermes proposed this. */
export function pendingView(change: PendingChange, diff: LineDiff, stale: boolean, actions: PendingActions): HTMLElement {
  const title = pendingTitle(change);
  const keep = h("button", { type: "button", class: "hn-pending-keep", title: keepHint(change) }, "Keep");
  const discard = h("button", { type: "button", class: "hn-pending-discard", title: "Leave the notebook as it is" },
    "Discard");
  keep.addEventListener("click", () => actions.keep());
  discard.addEventListener("click", () => actions.discard());
  const stats = h(
    "span",
    { class: "hn-pending-stats", "aria-label": `${diff.added} lines added, ${diff.removed} removed` },
    `+${diff.added} −${diff.removed}`,
  );
  return h(
    "section",
    {
      class: "hn-pending",
      role: "region",
      "aria-label": title,
      "data-change-id": change.id,
      "data-kind": change.kind,
      "data-lm-suppress-shortcuts": true,
      tabindex: "-1",
    },
    h("div", { class: "hn-pending-head" }, h("span", { class: "hn-pending-title" }, title), stats),
    stale
      ? h("p", { class: "hn-pending-note" }, "You changed this cell after Hermes proposed this; Keep replaces it with the version below.")
      : null,
    h("div", { class: "hn-pending-diff", role: "group", "aria-label": "Proposed change, line by line" },
      ...diff.rows.map(diffLine)),
    h("div", { class: "hn-pending-actions" }, keep, discard),
  );
}

function keepHint(change: PendingChange): string {
  if (change.kind === "insert") return "Add this cell to the notebook (it does not run)";
  if (change.kind === "edit") return "Replace the cell's source with this version (it does not run)";
  return "Delete the cell";
}

const SIGNS: Record<string, string> = { add: "+", del: "−", same: " " };
const SPOKEN: Record<string, string> = { add: "added: ", del: "removed: ", same: "" };

function diffLine(row: DiffRow): HTMLElement {
  if (row.kind === "skip") {
    const n = row.count ?? 0;
    return h("div", { class: "hn-pending-line", "data-kind": "skip" }, `… ${n} unchanged line${n === 1 ? "" : "s"}`);
  }
  return h(
    "div",
    { class: "hn-pending-line", "data-kind": row.kind },
    h("span", { class: "hn-pending-sign", "aria-hidden": "true" }, SIGNS[row.kind] ?? " "),
    SPOKEN[row.kind] ? h("span", { class: "hn-pending-spoken" }, SPOKEN[row.kind]) : null,
    h("span", { class: "hn-pending-text" }, row.text),
  );
}
