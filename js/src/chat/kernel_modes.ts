// The header's kernel permission modes (the `kernel_modes` traitlet, widgets/chat_kernel.py): what Hermes may do in
// this notebook's kernel for this chat's connection, read off the kernel's own policy (kernel/grants.py), and
// Revoke when something was allowed for this session (runs without a Run card, or reads a card allowed).
//
// Stable DOM hooks: .hn-kernel-modes (hidden while the kernel is not shared; data-runs, data-reads, data-edits),
// .hn-kernel-modes-text (the line), .hn-kernel-notebook (which notebook the cell tools act on: its path, as text),
// .hn-kernel-revoke (the button). Text only, from a closed set of words and the notebook's path.

import { h, setAttr, setText } from "../dom";
import type { ChatCommand, KernelModes } from "../types/chat";

export interface KernelModesView {
  readonly el: HTMLElement;
  show(modes: KernelModes | null | undefined): void;
}

const RUNS: Record<KernelModes["runs"], string> = {
  ask: "runs ask",
  allow: "runs allowed for this session",
  never: "runs off",
};

/** The modes in words: `kernel: reads on · edits propose · runs ask`. */
export function modesText(modes: KernelModes): string {
  const reads = modes.reads === "on" ? "reads on" : modes.granted ? "reads allowed for this session" : "reads off";
  const edits = modes.edits === "propose" ? "edits proposed" : "edits off";
  return `kernel: ${reads} · ${edits} · ${RUNS[modes.runs] ?? "runs ask"}`;
}

/** Something was allowed for this session only (what Revoke withdraws). */
export function revocable(modes: KernelModes): boolean {
  return modes.runs === "allow" || (modes.reads === "off" && modes.granted);
}

export function createKernelModes(send: (message: ChatCommand) => void): KernelModesView {
  const text = h("span", { class: "hn-kernel-modes-text" });
  const notebook = h("span", { class: "hn-kernel-notebook", hidden: true });
  const revoke = h(
    "button",
    { type: "button", class: "hn-kernel-revoke", hidden: true, title: "Ask again before every run; withdraw reads a Run card allowed" },
    "Revoke",
  );
  const el = h("span", { class: "hn-kernel-modes", hidden: true, role: "status" }, text, notebook, revoke);
  revoke.addEventListener("click", () => {
    revoke.disabled = true; // until the kernel's new modes arrive
    send({ type: "kernel_revoke" });
  });
  return {
    el,
    show(modes) {
      el.hidden = !modes;
      if (!modes) return;
      setText(text, modesText(modes));
      const path = modes.cells && typeof modes.notebook === "string" ? modes.notebook : "";
      notebook.hidden = path === "";
      setText(notebook, path ? `· cell tools act on ${path}` : "");
      setAttr(notebook, "title", path ? `Hermes' cell tools act on the notebook ${path}` : null);
      setAttr(el, "title", `Hermes' tools in this kernel (${modes.server})${modes.cells ? ", cell tools on" : ""}`);
      el.dataset.reads = modes.reads;
      el.dataset.edits = modes.edits;
      el.dataset.runs = modes.runs;
      revoke.hidden = !revocable(modes);
      revoke.disabled = false;
    },
  };
}
