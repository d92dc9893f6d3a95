// The composer: prompt textarea, image and file attachments (button, paste, drop), send / stop, queued indicator.
// Ctrl+Enter (Cmd+Enter on macOS) sends; Enter alone is a newline; Esc stops a running turn. Sending while Hermes is busy is
// allowed: the kernel queues the prompt and reports the count in the `queued` traitlet.
// A text starting with `/name` (and no images) is a Hermes command: it goes as `{type: "command"}`, and `/` opens
// the menu of the server's commands (slash.ts). Start with a space to send such a text as a prompt.
// While a turn runs, `select.hn-send-mode` offers Queue (the default, as above) or Steer: the text goes into the
// running turn instead (steer.ts); the choice goes back to Queue when the turn ends.

import { h } from "../dom";
import type { CommandEntry, FileAttachment, ImageAttachment, ChatOutgoing } from "../types/chat";
import { FILE_ACCEPT, MAX_FILE_BYTES, MAX_FILES, acceptDrops, isDocument, readFile, toBase64 } from "./files";
import { createSlashMenu } from "./slash";
import { outgoing } from "./steer";

/** Largest image accepted, before base64 (which adds a third). The kernel checks again (widgets/inbound.py). */
export const MAX_IMAGE_BYTES = 10 * 1024 * 1024;
/** Image types the kernel accepts, and how many per prompt (widgets/inbound.py: IMAGE_TYPES, MAX_IMAGES). */
export const IMAGE_TYPES = ["image/png", "image/jpeg", "image/gif", "image/webp"];
export const MAX_IMAGES = 8;

export interface Composer {
  readonly el: HTMLElement;
  setBusy(busy: boolean): void;
  setQueued(count: number): void;
  /** Hermes' command catalog arrived (the `/` menu lists it). */
  setCommands(entries: readonly CommandEntry[]): void;
  /** Put a text in the textarea for the user to edit and send (a command's suggested prompt). */
  prefill(text: string): void;
  /** Resolves when the current send (including reading attachments) is done. */
  submit(): Promise<void>;
}

interface Pending {
  name: string;
  image?: Promise<ImageAttachment>;
  file?: Promise<FileAttachment>;
}

export function createComposer(send: (message: ChatOutgoing) => void): Composer {
  const textarea = h("textarea", {
    class: "hn-input",
    rows: 3,
    placeholder: "Message Hermes (Ctrl+Enter to send, Esc to stop)",
    "aria-label": "Message to Hermes",
  });
  const fileInput = h("input", { type: "file", accept: [...IMAGE_TYPES, FILE_ACCEPT].join(","), multiple: true, hidden: true, tabindex: -1 });
  const attach = h("button", { type: "button", class: "hn-attach", "aria-label": "Attach images or files" }, "Attach");
  const sendButton = h("button", { type: "button", class: "hn-send", title: "Send (Ctrl+Enter)" }, "Send");
  const stop = h("button", { type: "button", class: "hn-stop", hidden: true, "aria-label": "Stop the response", title: "Stop (Esc)" }, "Stop");
  const queued = h("span", { class: "hn-queued", role: "status", hidden: true });
  const mode = h("select", { class: "hn-send-mode", "aria-label": "While Hermes works", hidden: true },
    h("option", { value: "queue", title: "Send after the running turn" }, "Queue"),
    h("option", { value: "steer", title: "Guide the running turn now" }, "Steer")) as HTMLSelectElement;
  let busyNow = false;
  const error = h("div", { class: "hn-composer-error", role: "alert", hidden: true });
  const list = h("ul", { class: "hn-attachments", "aria-label": "Attachments" });
  const menu = createSlashMenu(textarea, () => send({ type: "commands" }));
  const el = h(
    "div",
    { class: "hn-composer" },
    menu.el,
    textarea,
    list,
    error,
    h("div", { class: "hn-composer-actions" }, attach, fileInput, queued, h("span", { class: "hn-spacer" }), mode, stop, sendButton),
  );

  let pending: Pending[] = [];

  const showError = (text: string): void => {
    error.textContent = text;
    error.hidden = text === "";
  };

  const addFiles = (all: readonly File[]): void => {
    const image = (f: File): boolean => IMAGE_TYPES.includes(f.type);
    const docs = all.filter((f) => !f.type.startsWith("image/") && isDocument(f));
    const files = all.filter((f) => !docs.includes(f));
    const refused = files.filter((f) => !image(f) && f.type.startsWith("image/"));
    const tooBig = files.filter((f) => image(f) && f.size > MAX_IMAGE_BYTES);
    const fitting = files.filter((f) => image(f) && f.size <= MAX_IMAGE_BYTES);
    const ok = fitting.slice(0, Math.max(0, MAX_IMAGES - pending.filter((p) => p.image).length));
    const problems: string[] = [];
    const others = files.filter((f) => !image(f) && !f.type.startsWith("image/"));
    if (others.length > 0) {
      problems.push(`Only images, PDFs and text files can be attached; refused: ${others.map((f) => f.name || "file").join(", ")}.`);
    }
    const bigDocs = docs.filter((f) => f.size > MAX_FILE_BYTES);
    const okDocs = docs.filter((f) => f.size <= MAX_FILE_BYTES).slice(0, Math.max(0, MAX_FILES - pending.filter((p) => p.file).length));
    if (bigDocs.length > 0) problems.push(`Files must be under ${MAX_FILE_BYTES / 1024 / 1024} MB; refused: ${bigDocs.map((f) => f.name).join(", ")}.`);
    if (okDocs.length < docs.length - bigDocs.length) problems.push(`At most ${MAX_FILES} files per message.`);
    if (refused.length > 0) {
      const names = refused.map((f) => f.name || f.type || "file").join(", ");
      problems.push(`Only PNG, JPEG, GIF and WebP images can be attached; refused: ${names}.`);
    }
    if (ok.length < fitting.length) problems.push(`At most ${MAX_IMAGES} images per message.`);
    if (tooBig.length > 0) {
      problems.push(`Images must be under ${MAX_IMAGE_BYTES / 1024 / 1024} MB; refused: ${tooBig.map((f) => f.name).join(", ")}.`);
    }
    showError(problems.join(" "));
    const entries: Pending[] = [
      ...ok.map((file) => ({ name: file.name || "pasted image", image: readImage(file) })),
      ...okDocs.map((file) => ({ name: file.name || "attachment", file: readFile(file) })),
    ];
    for (const entry of entries) {
      (entry.image ?? entry.file)?.catch(() => undefined); // reported at send time, not as an unhandled rejection
      pending.push(entry);
      const remove = h("button", { type: "button", class: "hn-attachment-remove", "aria-label": `Remove ${entry.name}` }, "×");
      const item = h("li", { class: "hn-attachment" }, h("span", {}, entry.name), remove);
      remove.addEventListener("click", () => {
        pending = pending.filter((p) => p !== entry);
        item.remove();
        textarea.focus();
      });
      list.append(item);
    }
  };

  const submit = async (): Promise<void> => {
    const text = textarea.value;
    const attached = pending;
    if (text.trim() === "" && attached.length === 0) return;
    let images: ImageAttachment[];
    let files: FileAttachment[];
    try {
      images = await Promise.all(attached.flatMap((p) => (p.image ? [p.image] : [])));
      files = await Promise.all(attached.flatMap((p) => (p.file ? [p.file] : [])));
    } catch {
      showError("An attached file could not be read; remove it and try again.");
      return;
    }
    send(outgoing(text, images, files, busyNow && mode.value === "steer"));
    textarea.value = "";
    pending = [];
    list.replaceChildren();
    showError("");
  };

  textarea.addEventListener("keydown", (event) => {
    if (menu.handleKey(event)) return;
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey) && !event.isComposing) {
      event.preventDefault();
      void submit();
    }
  });
  textarea.addEventListener("paste", (event) => {
    const files = Array.from(event.clipboardData?.files ?? []);
    if (files.length === 0) return; // plain text paste: leave it to the textarea
    event.preventDefault();
    addFiles(files);
  });
  attach.addEventListener("click", () => fileInput.click());
  fileInput.addEventListener("change", () => {
    addFiles(Array.from(fileInput.files ?? []));
    fileInput.value = "";
  });
  sendButton.addEventListener("click", () => void submit());
  acceptDrops(el, addFiles); // the composer's own element: its listeners go with it
  stop.addEventListener("click", () => send({ type: "stop" }));

  return {
    el,
    submit,
    setBusy(busy) {
      stop.hidden = !busy;
      busyNow = busy;
      mode.hidden = !busy;
      if (!busy) mode.value = "queue";
      el.dataset.busy = String(busy);
    },
    setCommands(entries) {
      menu.setCatalog(entries);
    },
    prefill(text) {
      textarea.value = text;
      menu.update();
      textarea.focus();
    },
    setQueued(count) {
      queued.hidden = count <= 0;
      queued.textContent = count === 1 ? "1 message queued" : `${count} messages queued`;
    },
  };
}

/** Read an image file as base64 (without the `data:` prefix). */
async function readImage(file: File): Promise<ImageAttachment> {
  return { mime: file.type, data: toBase64(new Uint8Array(await file.arrayBuffer())) };
}
