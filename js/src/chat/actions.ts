// Buttons on messages: Edit on your last prompt, Regenerate / Undo on the last reply, Branch on any reply.
// Which ones show is CSS on `data-latest` (markLatest); the kernel checks again which message each may act on
// (widgets/chat_actions.py). All are real buttons (Tab reaches them) and disabled while a turn runs
// (setActionsDisabled, and `busy()` for buttons created meanwhile). Edit opens an inline editor: Ctrl+Enter
// saves, Esc cancels. After an undo or a branch the kernel re-sends the conversation (a reset snapshot).

import { h } from "../dom";
import type { Message, ChatOutgoing } from "../types";

export interface ActionContext {
  send(message: ChatOutgoing): void;
  /** true while a turn runs: buttons made now start disabled */
  busy?: () => boolean;
}

export interface MessageActions {
  readonly el: HTMLElement;
  update(message: Message): void;
}

const LABELS = {
  edit: ["Edit", "Edit this prompt and send it again"],
  regenerate: ["Regenerate", "Ask again: undo this reply and send the same prompt"],
  branch: ["Branch", "Continue in a copy of the conversation up to this reply"],
  undo: ["Undo", "Remove this exchange (your prompt and this reply)"],
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
    const b = h("button", { type: "button", class: `hn-msg-action hn-act-${kind}`, title, "aria-label": title }, label);
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
      undo: () => ctx.send({ type: "undo", message_id: current.id }),
    };
    for (const kind of ["regenerate", "branch", "undo"] as const) {
      const b = button(kind);
      b.addEventListener("click", clicks[kind]);
      el.append(b);
    }
  }
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

/** Enable or disable every message button and editor under `root` (on `busy` changes only). */
export function setActionsDisabled(root: HTMLElement, busy: boolean): void {
  for (const b of root.querySelectorAll<HTMLButtonElement>(".hn-msg-action, .hn-edit-save")) b.disabled = busy;
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
