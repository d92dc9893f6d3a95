// The header's session details: the active model (`model` traitlet) and a gauge of the session's context window
// (`context_usage`), whose hover lists what fills it (system prompt, tool definitions, conversation ...).
// Both are server text shown with textContent / title only (never HTML).
//
// Stable DOM hooks: .hn-model (the label; hidden when unknown), .hn-session-usage (the gauge; its title is the
// breakdown), .hn-session-usage progress.hn-session-gauge (a <progress>: no inline style, nothing to sanitize).

import { h, setAttr, setText } from "../dom";
import type { ContextUsage } from "../types/chat";
import { breakdownText } from "./usage";

export interface SessionHeader {
  readonly el: HTMLElement;
  showModel(model: string | null | undefined): void;
  showContext(context: ContextUsage | null | undefined): void;
}

export function createSessionHeader(): SessionHeader {
  const model = h("span", { class: "hn-model", hidden: true });
  const gauge = h("progress", { class: "hn-session-gauge", max: 100, value: 0, "aria-label": "Session context window used" });
  const percent = h("span", { class: "hn-session-usage-text" });
  const usage = h("span", { class: "hn-session-usage", tabindex: 0, hidden: true }, gauge, percent);
  const el = h("span", { class: "hn-session-info" }, model, usage);
  return {
    el,
    showModel(name) {
      const text = typeof name === "string" ? name.trim() : "";
      setText(model, text === "" ? "" : `model: ${text}`);
      setAttr(model, "title", text === "" ? null : `The session's model: ${text}`);
      model.hidden = text === "";
    },
    showContext(context) {
      const hover = breakdownText(context ?? null);
      usage.hidden = hover === "";
      if (hover === "" || !context) {
        setAttr(usage, "title", null);
        return;
      }
      const pct = Math.max(0, Math.min(100, Number(context.percent) || 0));
      gauge.value = pct;
      setAttr(gauge, "aria-valuetext", hover.split("\n")[0] ?? "");
      setText(percent, `${Math.round(pct)}%`);
      setAttr(usage, "title", hover);
    },
  };
}
