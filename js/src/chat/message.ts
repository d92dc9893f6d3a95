// DOM for one message: a role label, its parts (each a stable PartView), usage and error.

import { h, setAttr, setText } from "../dom";
import type { Message, Part, Usage } from "../types/turns";
import { createPartView } from "./parts";
import type { PartContext, PartView } from "./part_view";
import { reconcile } from "./reconcile";
import { formatUsage, summarizeUsage } from "./usage";
import type { InteractionContext } from "./interactions";
import { createMessageActions, type ActionContext } from "./actions";

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

export function createMessageView(message: Message, ctx: InteractionContext & ActionContext): MessageView {
  const role = h("span", { class: "hn-role" }, message.role === "user" ? "You" : "Hermes");
  const status = h("span", { class: "hn-message-status" });
  const parts = h("div", { class: "hn-parts" });
  const usage = h("div", { class: "hn-usage" });
  const error = h("div", { class: "hn-message-error" });
  const actions = createMessageActions(message, ctx); // edit / regenerate / branch / undo (actions.ts)
  const el = h(
    "div",
    { class: `hn-message hn-${message.role}`, "data-message-id": message.id, "data-role": message.role },
    h("div", { class: "hn-message-header" }, role, status),
    parts,
    error,
    usage,
    actions.el,
  );
  const partCtx: PartContext = { ...ctx, send: ctx.send, answered: ctx.answered, role: message.role };
  const partViews = new Map<string, { view: PartView; item: Part }>();

  const update = (next: Message): void => {
    setAttr(el, "data-status", next.status);
    setText(status, STATUS_LABELS[next.status] ?? next.status);
    const settled = next.status !== "streaming";
    reconcile(parts, next.parts, partViews, (part) => createPartView(part, next.id, partCtx, settled));
    if (next.status !== "streaming") for (const { view } of partViews.values()) view.settle?.();
    setText(error, next.error ?? "");
    if (error.hidden !== !next.error) error.hidden = !next.error; // an unchanged write still restyles
    renderUsage(usage, next.usage);
    actions.update(next);
  };
  update(message);
  return { el, update };
}

/** The usage line: tokens in/out, a context gauge and the cost, with the other fields on hover. */
function renderUsage(el: HTMLElement, usage: Usage | null): void {
  const s = summarizeUsage(usage);
  const text = formatUsage(usage);
  const hide = s === null || text === "";
  if (el.hidden !== hide) el.hidden = hide; // an unchanged write still restyles
  if (s === null || text === "") {
    el.replaceChildren();
    setAttr(el, "title", null);
    return;
  }
  const key = JSON.stringify([text, s.details]);
  if (el.dataset.key === key) return; // unchanged: keep the nodes
  el.dataset.key = key;
  const children: (Node | string)[] = [];
  if (s.tokens) children.push(h("span", { class: "hn-usage-tokens" }, s.tokens));
  if (s.cache) children.push(h("span", { class: "hn-usage-cache" }, s.cache));
  if (s.context) {
    const pct = Math.max(0, Math.min(100, s.context.percent));
    const fill = h("span", { class: "hn-gauge-fill" });
    fill.style.width = `${pct}%`;
    children.push(
      h(
        "span",
        { class: "hn-usage-context" },
        h("span", {
          class: "hn-gauge",
          role: "meter",
          "aria-label": "Context window used",
          "aria-valuemin": 0,
          "aria-valuemax": s.context.max,
          "aria-valuenow": s.context.used,
          "aria-valuetext": s.context.text,
        }, fill),
        s.context.text,
      ),
    );
  }
  if (s.cost) children.push(h("span", { class: "hn-usage-cost" }, s.cost));
  el.replaceChildren(...children.flatMap((c, i) => (i === 0 ? [c] : [" · ", c])));
  setAttr(el, "title", s.details || null);
}

export { formatUsage };
