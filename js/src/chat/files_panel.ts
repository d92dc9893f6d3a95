// The panel Undo with files and Branch with files open under a reply's buttons: the files that will be put back
// (server text, set as textContent), what happens to them, and a confirm button with Cancel (Esc). Nothing is sent
// until the confirm button is clicked.

import { h } from "../dom";
import type { TurnFileEntry } from "../types/chat";

export interface FilesPanel {
  /** the group's accessible name and class suffix: "undo" or "branch" */
  kind: "undo" | "branch";
  heading: string;
  files: readonly TurnFileEntry[];
  /** a sentence under the list (what happens to the files as they are now) */
  note?: string;
  /** the confirm button's label; null: nothing to confirm (a refusal), Cancel only */
  confirm: string | null;
  onConfirm(): void;
  /** the button that opened it: focus goes back there on close */
  opener: string;
}

const NAMES = { undo: "Undo with files", branch: "Branch with files" } as const;

/** One line per file: its path (inert text) and what changed. */
export function fileLine(file: TurnFileEntry): string {
  const counts = [file.added ? `+${file.added}` : "", file.removed ? `\u2212${file.removed}` : ""].filter(Boolean);
  const status = file.status && file.status !== "modified" ? file.status : "";
  const detail = [status, ...counts].filter(Boolean).join(" ");
  return detail ? `${String(file.path)} (${detail})` : String(file.path);
}

/** Open the panel in `el` (once); `busy` disables the confirm button while a turn runs. */
export function openFilesPanel(el: HTMLElement, panel: FilesPanel, busy: boolean): void {
  if (el.querySelector(`.hn-${panel.kind}-files`)) return;
  const list = h("ul", { class: "hn-undo-files-list" });
  for (const file of panel.files) list.append(h("li", {}, fileLine(file)));
  const confirm = panel.confirm === null ? null
    : h("button", { type: "button", class: `hn-undo-files-confirm hn-${panel.kind}-files-confirm` }, panel.confirm);
  const cancel = h("button", { type: "button", class: "hn-undo-files-cancel", title: "Cancel (Esc)" }, "Cancel");
  const node = h("div", { class: `hn-undo-files hn-${panel.kind}-files`, role: "group", "aria-label": NAMES[panel.kind] },
    h("div", { class: "hn-undo-files-heading" }, panel.heading),
    panel.files.length > 0 ? list : null,
    panel.note ? h("div", { class: "hn-undo-files-note" }, panel.note) : null,
    h("div", { class: "hn-edit-actions" }, confirm, cancel));
  const close = (): void => {
    node.remove();
    (el.querySelector(panel.opener) as HTMLButtonElement | null)?.focus();
  };
  confirm?.addEventListener("click", () => {
    if (confirm.disabled) return;
    panel.onConfirm();
    close();
  });
  cancel.addEventListener("click", close);
  node.addEventListener("keydown", (event) => {
    if (event.key !== "Escape") return;
    event.preventDefault();
    event.stopPropagation(); // Esc here closes the list, not the running turn
    close();
  });
  if (confirm !== null) confirm.disabled = busy;
  el.append(node);
  (confirm ?? cancel).focus();
}
