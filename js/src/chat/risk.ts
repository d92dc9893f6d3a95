// A tool part's risk badge: Hermes flagged what the tool returned (`tool.output_risk`: prompt injection, secrets),
// or, from history, the output came from an untrusted source (turns/risk.py). The findings are Hermes' pattern ids,
// server text: shown as textContent, listed. Stable DOM hooks: .hn-risk[data-level] (hidden when none),
// .hn-risk-label, .hn-risk-finding.

import { h } from "../dom";
import type { Risk } from "../types/turns";

// `low` (scanned, nothing found) and `untrusted` (from history) both mean Hermes handed the output to the model
// wrapped as untrusted data: a small note, not a warning (render_media.py says the same).
const LABELS: Record<string, string> = {
  high: "Risky output",
  medium: "Risky output",
  low: "Marked untrusted for the model",
  untrusted: "Marked untrusted for the model",
};
const NOTES = new Set(["low", "untrusted"]);

/** The badge's words: what was flagged, with the findings, for the label and for screen readers. */
export function riskText(risk: Risk): string {
  const label = LABELS[risk.level] ?? "Risky output";
  const findings = Array.isArray(risk.findings) ? risk.findings.map(String) : [];
  const redacted = risk.redacted ? " (Hermes redacted part of it)" : "";
  return findings.length > 0 ? `${label}: ${findings.join(", ")}${redacted}` : `${label}${redacted}`;
}

/** Fill `slot` with the badge for `risk` (hidden when none); rebuilt only when it changes. */
export function renderRisk(slot: HTMLElement, risk: Risk | null | undefined): void {
  const key = risk ? JSON.stringify(risk) : "";
  if (slot.dataset.risk === key) return;
  slot.dataset.risk = key;
  slot.hidden = !risk;
  if (!risk) {
    slot.replaceChildren();
    return;
  }
  slot.dataset.level = String(risk.level);
  slot.setAttribute("aria-label", riskText(risk));
  const findings = (Array.isArray(risk.findings) ? risk.findings : []).map((f) => h("li", { class: "hn-risk-finding" }, String(f)));
  const icon = NOTES.has(risk.level) && findings.length === 0 ? "" : "⚠ ";
  const label = `${icon}${LABELS[risk.level] ?? "Risky output"}${risk.redacted ? " (Hermes redacted part of it)" : ""}`;
  slot.replaceChildren(h("span", { class: "hn-risk-label" }, label), ...(findings.length ? [h("ul", {}, ...findings)] : []));
}
