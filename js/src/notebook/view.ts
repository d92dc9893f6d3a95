// What a pending change looks like on its cell: a heading that says what Hermes proposes, the diff (every line as
// text: the model wrote it; revealed as a Run card reveals a command, notebook/diff_marks.ts), and Keep / Discard.
// Plain buttons, so Tab and Enter work; JupyterLab's notebook shortcuts are suppressed inside
// (data-lm-suppress-shortcuts), so Enter or "D D" there never acts on the cell. The buttons ignore clicks for
// CLICK_DELAY_MS after the content under them changed (a click meant for what was there must not act on what
// replaced it), and Keep over lines the user typed since asks first.

import { armed, holdClicks, now } from "../click_guard";
import { h } from "../dom";
import type { LineDiff } from "./diff";
import { remoteImageHosts, shownRows, type ShownRow } from "./diff_marks";
import type { PendingChange } from "./pending";

export interface PendingActions {
  keep(): void;
  discard(): void;
  /** Try a proposed code cell in a copy of the kernel (notebook/preview.ts shows what came back). */
  preview?(): void;
}

/** The heading of a pending change (also its region's accessible name). */
export function pendingTitle(change: PendingChange): string {
  if (change.kind === "insert") return `Hermes proposes a new ${change.cellType} cell here`;
  if (change.kind === "edit") return "Hermes proposes an edit of this cell";
  return "Hermes proposes deleting this cell";
}

/** The element shown on the cell for `change`; `stale`: the user changed the cell after Hermes proposed this.
 * `shownAt`: when it is shown (performance.now()), clicks before `shownAt + CLICK_DELAY_MS` are ignored. */
export function pendingView(
  change: PendingChange,
  diff: LineDiff,
  stale: boolean,
  actions: PendingActions,
  shownAt: number = now(),
  previewed: HTMLElement | null = null,
): HTMLElement {
  const title = pendingTitle(change);
  const keep = h("button", { type: "button", class: "hn-pending-keep", title: keepHint(change) }, "Keep");
  const discard = h("button", { type: "button", class: "hn-pending-discard", title: "Leave the notebook as it is" },
    "Discard");
  const preview = actions.preview && change.kind !== "delete" && change.cellType === "code"
    ? h("button", { type: "button", class: "hn-pending-preview",
      title: "Run it in a copy of your kernel first: your variables stay untouched" }, "Preview")
    : null;
  const row = h("div", { class: "hn-pending-actions" }, keep, discard, preview);
  holdClicks(preview ? [keep, discard, preview] : [keep, discard], shownAt);
  preview?.addEventListener("click", () => {
    if (armed(shownAt)) actions.preview?.();
  });
  keep.addEventListener("click", () => {
    if (!armed(shownAt)) return;
    if (stale) row.replaceChildren(...confirmKeep(row, keep, discard, actions));
    else actions.keep();
  });
  discard.addEventListener("click", () => {
    if (armed(shownAt)) actions.discard();
  });
  const stats = h(
    "span",
    { class: "hn-pending-stats", "aria-label": `${diff.added} lines added, ${diff.removed} removed` },
    `+${diff.added} −${diff.removed}`,
  );
  const rows = shownRows(diff.rows);
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
    ...notes(change, stale, rows),
    h("div", { class: "hn-pending-diff", role: "group", "aria-label": "Proposed change, line by line" },
      ...rows.map(diffLine)),
    previewed,
    row,
  );
}

/** Keep over the user's own lines: say so, and Keep again (Replace) or Cancel. */
function confirmKeep(row: HTMLElement, keep: HTMLElement, discard: HTMLElement, actions: PendingActions): HTMLElement[] {
  const replace = h("button", { type: "button", class: "hn-pending-keep hn-pending-replace" }, "Replace my changes");
  const cancel = h("button", { type: "button", class: "hn-pending-cancel" }, "Cancel");
  replace.addEventListener("click", () => actions.keep());
  cancel.addEventListener("click", () => {
    row.replaceChildren(keep, discard);
    keep.focus();
  });
  queueMicrotask(() => cancel.focus()); // the safe choice has the keyboard
  const ask = h("span", { class: "hn-pending-ask", role: "alert" },
    "Keep replaces the lines you typed in this cell since Hermes proposed this.");
  return [ask, replace, cancel];
}

function notes(change: PendingChange, stale: boolean, rows: ShownRow[]): (HTMLElement | null)[] {
  const lookalikes = rows.filter((row) => row.lookalike).length;
  const hosts = change.kind !== "delete" && change.cellType === "markdown" ? remoteImageHosts(change.source) : [];
  return [
    change.replaced ? note("replaced", "Hermes replaced its earlier proposal for this cell.") : null,
    change.unverified
      ? note("unverified", "This Hermes does not say which session proposed this, so it could not be verified " +
        "that this notebook's own conversation asked for it.")
      : null,
    stale
      ? note("stale", "You changed this cell after Hermes proposed this; Keep replaces it with the version below.")
      : null,
    lookalikes > 0
      ? note("lookalike", `${lookalikes === 1 ? "A changed line looks" : `${lookalikes} changed lines look`} the same ` +
        "as the line it replaces: it differs in characters that look alike or draw nothing (marked ≈).")
      : null,
    hosts.length > 0
      ? note("images", `When rendered, this markdown loads images from other sites: ${hosts.join(", ")}.`)
      : null,
  ];
}

function note(kind: string, text: string): HTMLElement {
  return h("p", { class: "hn-pending-note", "data-note": kind }, text);
}

function keepHint(change: PendingChange): string {
  if (change.kind === "insert") return "Add this cell to the notebook (it does not run)";
  if (change.kind === "edit") return "Replace the cell's source with this version (it does not run)";
  return "Delete the cell";
}

const SIGNS: Record<string, string> = { add: "+", del: "−", same: " " };
const SPOKEN: Record<string, string> = { add: "added: ", del: "removed: ", same: "" };

function diffLine(row: ShownRow): HTMLElement {
  if (row.kind === "skip") {
    const n = row.count ?? 0;
    return h("div", { class: "hn-pending-line", "data-kind": "skip" }, `… ${n} unchanged line${n === 1 ? "" : "s"}`);
  }
  const sign = row.lookalike ? "≈" : (SIGNS[row.kind] ?? " ");
  const spoken = row.lookalike ? "added, looks the same as the removed line: " : SPOKEN[row.kind];
  return h(
    "div",
    { class: "hn-pending-line", "data-kind": row.kind, "data-lookalike": row.lookalike ? "true" : null },
    h("span", { class: "hn-pending-sign", "aria-hidden": "true" }, sign),
    spoken ? h("span", { class: "hn-pending-spoken" }, spoken) : null,
    h("span", { class: "hn-pending-text" }, row.shown),
  );
}
