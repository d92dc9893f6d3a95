// DOM for one message: a role label, its parts (each a stable PartView), usage and error.

import { h, setAttr, setText } from "../dom";
import type { Message, Part, Usage } from "../types";
import { createPartView, type PartContext, type PartView } from "./parts";
import { reconcile } from "./reconcile";
import type { InteractionContext } from "./interactions";

export interface MessageView {
  readonly el: HTMLElement;
  update(message: Message): void;
}

const STATUS_LABELS: Record<Message["status"], string> = {
  streaming: "responding…",
  queued: "queued",
  complete: "",
  interrupted: "interrupted",
  error: "error",
  cancelled: "stopped",
};

export function createMessageView(message: Message, ctx: InteractionContext): MessageView {
  const role = h("span", { class: "hn-role" }, message.role === "user" ? "You" : "Hermes");
  const status = h("span", { class: "hn-message-status" });
  const parts = h("div", { class: "hn-parts" });
  const usage = h("div", { class: "hn-usage" });
  const error = h("div", { class: "hn-message-error" });
  const el = h(
    "div",
    { class: `hn-message hn-${message.role}`, "data-message-id": message.id, "data-role": message.role },
    h("div", { class: "hn-message-header" }, role, status),
    parts,
    error,
    usage,
  );
  const partCtx: PartContext = { ...ctx, send: ctx.send, answered: ctx.answered, role: message.role };
  const partViews = new Map<string, { view: PartView; item: Part }>();

  const update = (next: Message): void => {
    setAttr(el, "data-status", next.status);
    setText(status, STATUS_LABELS[next.status] ?? next.status);
    reconcile(parts, next.parts, partViews, (part) => createPartView(part, next.id, partCtx));
    if (next.status !== "streaming") for (const { view } of partViews.values()) view.settle?.();
    setText(error, next.error ?? "");
    if (error.hidden !== !next.error) error.hidden = !next.error; // an unchanged write still restyles
    const used = formatUsage(next.usage);
    setText(usage, used);
    if (usage.hidden !== (used === "")) usage.hidden = used === "";
  };
  update(message);
  return { el, update };
}

const USAGE_KEYS: [label: string, keys: string[]][] = [
  ["in", ["input_tokens", "prompt_tokens"]],
  ["out", ["output_tokens", "completion_tokens"]],
  ["reasoning", ["reasoning_tokens"]],
  ["total", ["total_tokens"]],
];

/** "1,200 in · 340 out · 1,540 total tokens" from whichever usage fields are present. */
export function formatUsage(usage: Usage | null): string {
  if (usage === null || typeof usage !== "object") return "";
  const bits: string[] = [];
  for (const [label, keys] of USAGE_KEYS) {
    const key = keys.find((k) => typeof usage[k] === "number");
    if (key !== undefined) bits.push(`${(usage[key] as number).toLocaleString("en-US")} ${label}`);
  }
  if (bits.length === 0) {
    // Unknown shape: show its numeric fields as they are named.
    for (const [key, value] of Object.entries(usage)) {
      if (typeof value === "number") bits.push(`${key} ${value.toLocaleString("en-US")}`);
    }
    return bits.length === 0 ? "" : `Usage: ${bits.join(" · ")}`;
  }
  return `${bits.join(" · ")} tokens`;
}
