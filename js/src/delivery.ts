// Did the kernel take what this view sent? If not within a second, say why: it is busy running a cell.
//
// Where the front end and kernel run widget messages on a subshell (JupyterLab >= 4.4 / Notebook >= 7.4 with
// ipykernel >= 7, see hermes_notebook/widgets/subshells.py), the kernel starts on a message at once, even while a
// cell runs. Elsewhere (ipykernel 6, commsOverSubshells disabled, an older Lab, other front ends) the message waits
// in the kernel's queue until the running cell ends. Nothing is lost then, but a view that shows nothing looks
// frozen: so a message not acknowledged within ACK_TIMEOUT_MS shows a plain note (and, for a prompt, its text),
// which goes away once the kernel acknowledges it.
//
// Acknowledged means: the kernel published its `busy` status for that message (the iopub `status` callback of
// ipywidgets' `model.send(content, callbacks)`), or a reply shows it was handled (`answered`: the view calls it
// for replies it recognises). Messages run in the order sent, so an acknowledgement also covers older messages.
// A front end that never reports status for widget messages would show the note forever: once a reply arrived
// for a message no status callback covered, and no callback was ever seen, the note stays hidden.
//
// Kept apart from the views' messaging on purpose: one `send` in, one element out.

import { h, setAttr, setText } from "./dom";

/** How long a sent message may wait for the kernel before the view says the kernel is busy. */
export const ACK_TIMEOUT_MS = 1000;

/** What the note calls a waiting message: a prompt (its text is shown), an answer to a card, anything else. */
export type Waiting = "prompt" | "answer" | "request";

/** The message types whose waiting copy the note names, and how (anything else is a "request"). */
const KINDS: Record<string, Waiting> = {
  send: "prompt",
  send_files: "prompt",
  command: "prompt",
  edit: "prompt",
  respond: "answer",
  secret: "answer",
};

type Message = { type?: unknown; text?: unknown; line?: unknown; [key: string]: unknown };

/** The part of a widget model this needs: ipywidgets' `send(content, callbacks, buffers)`. */
export interface Sender {
  send(content: unknown, callbacks?: unknown, buffers?: ArrayBuffer[] | ArrayBufferView[]): void;
}

export interface DeliveryOptions {
  /** Default ACK_TIMEOUT_MS. */
  delayMs?: number;
  /** Timer functions (tests pass fakes); default setTimeout / clearTimeout. */
  setTimer?: (callback: () => void, ms: number) => unknown;
  clearTimer?: (handle: unknown) => void;
}

export interface Delivery {
  /** The note (role=status); hidden while nothing has waited longer than the delay. */
  readonly el: HTMLElement;
  /** Send a message to the kernel, watching for its acknowledgement. */
  send(message: Message, buffers?: ArrayBuffer[] | ArrayBufferView[]): void;
  /** A reply shows the kernel handled the oldest waiting message of this `type` that `match`es (and all before it). */
  answered(type: string, match?: (sent: Message) => boolean): void;
  /** Messages sent and not acknowledged yet. */
  readonly pending: number;
  dispose(): void;
}

interface Entry {
  id: number;
  message: Message;
  kind: Waiting;
  timer: unknown;
  late: boolean;
}

const NOUNS: Record<Waiting, [string, string, string]> = {
  prompt: ["your prompt is", "prompts are", "sent"],
  answer: ["your answer is", "answers are", "sent"],
  request: ["your request is", "requests are", "handled"],
};

/** The note's sentence for what waits (the most important kind first). */
export function busyText(waiting: readonly Waiting[]): string {
  const kind = (["prompt", "answer", "request"] as const).find((k) => waiting.includes(k)) ?? "request";
  const count = waiting.filter((k) => k === kind).length;
  const [one, many, verb] = NOUNS[kind];
  const what = count === 1 ? one : `your ${count} ${many}`;
  return `The kernel is busy running a cell; ${what} queued and will be ${verb} when it finishes.`;
}

export function createDelivery(model: Sender, options: DeliveryOptions = {}): Delivery {
  const delay = options.delayMs ?? ACK_TIMEOUT_MS;
  const setTimer = options.setTimer ?? ((callback: () => void, ms: number) => setTimeout(callback, ms));
  const clearTimer = options.clearTimer ?? ((handle: unknown) => clearTimeout(handle as ReturnType<typeof setTimeout>));
  const sentence = h("span", { class: "hn-kernel-busy-text" });
  const prompts = h("div", { class: "hn-kernel-busy-prompts" });
  const el = h("div", { class: "hn-kernel-busy", role: "status", "aria-live": "polite", hidden: true }, sentence, prompts);
  let entries: Entry[] = [];
  let nextId = 0;
  let statusSeen = false; // the front end reports the kernel's status for our messages
  let replyOnly = false; // a reply covered a message no status had: maybe this front end never reports status
  let disposed = false;

  const render = (): void => {
    const late = entries.filter((e) => e.late);
    const show = late.length > 0 && !(replyOnly && !statusSeen);
    el.hidden = !show;
    setAttr(el, "data-waiting", show ? String(late.length) : null);
    if (!show) {
      setText(sentence, "");
      if (prompts.firstChild) prompts.replaceChildren();
      return;
    }
    setText(sentence, busyText(late.map((e) => e.kind)));
    // A prompt's text stays in view until the kernel has it: what was typed is never out of sight.
    const texts = late.filter((e) => e.kind === "prompt").map((e) => promptText(e.message));
    if (texts.join("\u0000") !== Array.from(prompts.children, (c) => c.textContent).join("\u0000")) {
      prompts.replaceChildren(...texts.map((t) => h("div", { class: "hn-kernel-busy-prompt" }, t)));
    }
  };

  /** Acknowledge the entry with this id and every older one. */
  const ackThrough = (id: number): void => {
    if (!entries.some((e) => e.id <= id)) return;
    for (const entry of entries) if (entry.id <= id) clearTimer(entry.timer);
    entries = entries.filter((e) => e.id > id);
    render();
  };

  return {
    el,
    get pending() {
      return entries.length;
    },
    send(message, buffers) {
      if (disposed) return;
      const id = ++nextId;
      const type = typeof message.type === "string" ? message.type : "";
      // Kept until acknowledged, without a sudo/secret value (it goes to the kernel once, and nowhere else).
      const { value: _secret, ...kept } = message;
      const entry: Entry = { id, message: kept, kind: KINDS[type] ?? "request", timer: null, late: false };
      entry.timer = setTimer(() => {
        entry.late = true;
        if (entries.includes(entry)) render();
      }, delay);
      entries.push(entry);
      const callbacks = {
        iopub: {
          status: () => {
            statusSeen = true;
            ackThrough(id);
          },
        },
      };
      model.send(message, callbacks, buffers);
    },
    answered(type, match) {
      const entry = entries.find((e) => e.message.type === type && (match === undefined || match(e.message)));
      if (entry === undefined) return;
      if (!statusSeen) replyOnly = true;
      ackThrough(entry.id);
    },
    dispose() {
      disposed = true;
      for (const entry of entries) clearTimer(entry.timer);
      entries = [];
      el.remove();
    },
  };
}

function promptText(message: Message): string {
  const text = typeof message.text === "string" ? message.text : typeof message.line === "string" ? message.line : "";
  return text;
}
