// Buttons on messages: Edit on your last prompt, Regenerate / Undo on the last reply, Branch on any reply.
// Which ones show is CSS on `data-latest` (markLatest); the kernel checks again which message each may act on
// (widgets/chat_actions.py). All are real buttons (Tab reaches them) and disabled while a turn runs
// (setActionsDisabled, and `busy()` for buttons created meanwhile). Edit opens an inline editor: Ctrl+Enter
// saves, Esc cancels. After an undo or a branch the kernel re-sends the conversation (a reset snapshot).
// Undo with files: where the kernel's `turn_files` answer named files the last reply's turn changed (Hermes took
// a checkpoint before), that reply also gets "Undo with files"; it opens a list of those files (server text, set
// as textContent) with "Undo and put files back" / Cancel (Esc). Without an answer (0.19.0) it never shows.
// Branch with files shows on earlier replies only where that answer said Hermes takes checkpoints (CSS on the
// chat's `data-checkpoints`); it asks the kernel which files it would put back (`branch_files`), lists them and
// asks, as Undo with files does, saying the files as they are now are kept in a checkpoint (files_panel.ts).

import { h } from "../dom";
import type { Message } from "../types/turns";
import { openFilesPanel } from "./files_panel";

import type { ChatOutgoing, TurnFileEntry } from "../types/chat";

export interface ActionContext {
  send(message: ChatOutgoing): void;
  /** true while a turn runs: buttons made now start disabled */
  busy?: () => boolean;
  /** the files each reply's turn changed, where the kernel named some (Undo with files is offered for those) */
  turnFiles?: ReadonlyMap<string, readonly TurnFileEntry[]>;
  /** ask which files a branch with files at a message would put back (`files`), or why it cannot (`refused`) */
  branchFiles?(messageId: string, files: (files: readonly TurnFileEntry[]) => void, refused: (why: string) => void): void;
}

export interface MessageActions {
  readonly el: HTMLElement;
  update(message: Message): void;
}

// Each button is named by its visible label (WCAG 2.5.3: what a screen reader or a script asks for is what it
// reads); the second string is its description (the title), never its name.
const LABELS = {
  edit: ["Edit", "Edit this prompt and send it again"],
  regenerate: ["Regenerate", "Ask again: a new reply to the same prompt, in place of this one"],
  branch: ["Branch", "Continue in a copy of the conversation up to this reply"],
  "branch-files": ["Branch with files", "Branch here and put back the files changed after this reply"],
  undo: ["Undo", "Remove this exchange (your prompt and this reply)"],
  "undo-files": ["Undo with files", "Remove this exchange and put back the files its turn changed"],
} as const;

type Kind = keyof typeof LABELS;

function promptText(message: Message): string {
  return message.parts.filter((p) => p.kind === "text").map((p) => p.text).join("");
}

export function createMessageActions(message: Message, ctx: ActionContext): MessageActions {
  const el = h("div", { class: "hn-msg-actions", role: "group", "aria-label": "Message actions" });
  let current = message;
  const button = (kind: Kind): HTMLButtonElement => {
    const [label, title] = LABELS[kind];
    const b = h("button", { type: "button", class: `hn-msg-action hn-act-${kind}`, title }, label);
    b.disabled = ctx.busy?.() ?? false;
    return b;
  };
  if (message.role === "user") {
    const edit = button("edit");
    edit.addEventListener("click", () => openEditor(el, current, ctx));
    el.append(edit);
  } else {
    const clicks = {
      regenerate: () => ctx.send({ type: "regenerate", message_id: current.id }),
      branch: () => ctx.send({ type: "branch", message_id: current.id }),
      "branch-files": () => openBranchFiles(el, current.id, ctx),
      undo: () => ctx.send({ type: "undo", message_id: current.id }),
    };
    for (const kind of ["regenerate", "branch", "branch-files", "undo"] as const) {
      const b = button(kind);
      b.addEventListener("click", clicks[kind]);
      el.append(b);
    }
  }
  const files = ctx.turnFiles?.get(message.id);
  if (message.role !== "user" && files && files.length > 0) offerUndoWithFiles(el, message.id, files, ctx);
  const update = (next: Message): void => {
    current = next;
    const hide = next.status === "streaming" || next.status === "queued";
    if (el.hidden !== hide) el.hidden = hide;
  };
  update(message);
  return { el, update };
}

function openEditor(el: HTMLElement, message: Message, ctx: ActionContext): void {
  if (el.querySelector(".hn-edit-form")) return;
  const area = h("textarea", { class: "hn-edit-input", rows: 3, "aria-label": "Edited prompt" });
  area.value = promptText(message);
  const save = h("button", { type: "button", class: "hn-edit-save", title: "Send the edited prompt (Ctrl+Enter)" }, "Send edit");
  const cancel = h("button", { type: "button", class: "hn-edit-cancel", title: "Cancel (Esc)" }, "Cancel");
  const form = h("div", { class: "hn-edit-form" }, area, h("div", { class: "hn-edit-actions" }, save, cancel));
  const close = (): void => {
    form.remove();
    (el.querySelector(".hn-act-edit") as HTMLButtonElement | null)?.focus();
  };
  const submit = (): void => {
    if (save.disabled || area.value.trim() === "") return;
    ctx.send({ type: "edit", message_id: message.id, text: area.value });
    close();
  };
  save.addEventListener("click", submit);
  cancel.addEventListener("click", close);
  area.addEventListener("keydown", (event) => {
    if (event.key === "Escape") {
      event.preventDefault();
      event.stopPropagation(); // Esc here closes the editor, not the running turn
      close();
    } else if (event.key === "Enter" && (event.ctrlKey || event.metaKey) && !event.isComposing) {
      event.preventDefault();
      submit();
    }
  });
  save.disabled = ctx.busy?.() ?? false;
  el.append(form);
  area.focus();
}

/** Add "Undo with files" to a reply's button group (once): it lists `files` and asks before it undoes. */
export function offerUndoWithFiles(
  el: HTMLElement, messageId: string, files: readonly TurnFileEntry[], ctx: ActionContext,
): void {
  if (files.length === 0 || el.querySelector(".hn-act-undo-files")) return;
  const [label, title] = LABELS["undo-files"];
  const b = h("button", { type: "button", class: "hn-msg-action hn-act-undo-files", title }, label);
  b.disabled = ctx.busy?.() ?? false;
  b.addEventListener("click", () => openUndoFiles(el, messageId, files, ctx));
  el.append(b);
}

function openUndoFiles(el: HTMLElement, messageId: string, files: readonly TurnFileEntry[], ctx: ActionContext): void {
  openFilesPanel(el, {
    kind: "undo",
    heading: `This turn changed ${files.length} file${files.length === 1 ? "" : "s"}:`,
    files,
    confirm: "Undo and put files back",
    onConfirm: () => ctx.send({ type: "undo", message_id: messageId, files: true }),
    opener: ".hn-act-undo-files",
  }, ctx.busy?.() ?? false);
}

/** Branch with files: ask the kernel which files it would put back, list them and ask before branching. */
function openBranchFiles(el: HTMLElement, messageId: string, ctx: ActionContext): void {
  const branch = (): void => ctx.send({ type: "branch", message_id: messageId, files: true });
  const opener = ".hn-act-branch-files";
  const busy = ctx.busy?.() ?? false;
  if (ctx.branchFiles === undefined) return branch();
  ctx.branchFiles(messageId, (files) => {
    const n = files.length;
    openFilesPanel(el, {
      kind: "branch",
      heading: n === 0
        ? "No file changed after this reply: the branch puts nothing back."
        : `Branch here and put back ${n} file${n === 1 ? "" : "s"} as they were after this reply:`,
      files,
      note: n === 0 ? undefined
        : "The files as they are now are kept in a checkpoint first (hermes.rollback() lists it), so this can be undone.",
      confirm: n === 0 ? "Branch" : "Branch and put files back",
      onConfirm: branch,
      opener,
    }, busy);
  }, (why) => openFilesPanel(el, {
    kind: "branch", heading: `Branch with files is not possible here: ${why}`, files: [], confirm: null,
    onConfirm: () => undefined, opener,
  }, busy));
}

/** Enable or disable every message button and editor under `root` (on `busy` changes only). */
export function setActionsDisabled(root: HTMLElement, busy: boolean): void {
  for (const b of root.querySelectorAll<HTMLButtonElement>(".hn-msg-action, .hn-edit-save, .hn-undo-files-confirm")) b.disabled = busy;
}

/** Mark the last prompt and the last reply `data-latest` (CSS shows Edit / Regenerate / Undo only there). */
export function markLatest(root: HTMLElement, messages: readonly Message[]): void {
  const ids = new Set<string>();
  for (const role of ["user", "assistant"] as const) {
    for (let i = messages.length - 1; i >= 0; i--) {
      if (messages[i]!.role === role) {
        ids.add(messages[i]!.id);
        break;
      }
    }
  }
  const key = [...ids].join("\u0000");
  const last = marked.get(root);
  // unchanged (same ids, same elements still shown): no DOM query per streamed batch
  if (last && last.key === key && last.els.length === ids.size && last.els.every((el) => el.isConnected)) return;
  for (const el of root.querySelectorAll<HTMLElement>(".hn-message[data-latest]")) delete el.dataset.latest;
  const els: HTMLElement[] = [];
  for (const el of root.querySelectorAll<HTMLElement>(".hn-message")) {
    if (!ids.has(el.dataset.messageId ?? "")) continue;
    el.dataset.latest = "true";
    els.push(el);
  }
  marked.set(root, { key, els });
}

const marked = new WeakMap<HTMLElement, { key: string; els: HTMLElement[] }>();
