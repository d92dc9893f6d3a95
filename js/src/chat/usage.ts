// How a reply's usage reads: "10 in · 5 out tokens", a context gauge, the cost when the server reports it,
// and everything else on hover. Hermes names the same counts differently per surface (API Server: OpenAI's
// *_tokens; Dashboard: input/output/context_used/...). Twin of hermes_notebook/formatting.py.

import type { Usage } from "../types";

const IN_KEYS = ["input_tokens", "prompt_tokens", "input", "prompt"];
const OUT_KEYS = ["output_tokens", "completion_tokens", "output", "completion"];
const REASONING_KEYS = ["reasoning_tokens", "reasoning"];
const COST_KEYS = ["cost_usd", "actual_cost_usd", "estimated_cost_usd", "cost"];
const SHOWN = new Set([...IN_KEYS, ...OUT_KEYS, ...REASONING_KEYS, ...COST_KEYS, "context_used", "context_max", "context_percent"]);

export interface UsageSummary {
  /** "10 in · 5 out tokens" (empty when no token counts were reported). */
  tokens: string;
  /** The context window fill, when the server reports it. */
  context: { used: number; max: number; percent: number; text: string } | null;
  /** "$0.0042", when the server reports a cost. */
  cost: string;
  /** The other fields, for the hover title: "model fake-model, calls 1, ...". */
  details: string;
}

function numberOf(usage: Usage, keys: string[]): number | null {
  for (const key of keys) {
    const value = usage[key];
    if (typeof value === "number" && Number.isFinite(value)) return value;
  }
  return null;
}

const count = (n: number): string => Math.round(n).toLocaleString("en-US");

export function costText(value: number): string {
  return value >= 0.01 || value === 0 ? `$${value.toFixed(2)}` : `$${value.toFixed(4)}`;
}

export function summarizeUsage(usage: Usage | null): UsageSummary | null {
  if (usage === null || typeof usage !== "object") return null;
  const bits: string[] = [];
  const tokensIn = numberOf(usage, IN_KEYS);
  const tokensOut = numberOf(usage, OUT_KEYS);
  const reasoning = numberOf(usage, REASONING_KEYS);
  if (tokensIn !== null) bits.push(`${count(tokensIn)} in`);
  if (tokensOut !== null) bits.push(`${count(tokensOut)} out`);
  if (reasoning) bits.push(`${count(reasoning)} reasoning`);
  const used = numberOf(usage, ["context_used"]);
  const max = numberOf(usage, ["context_max"]);
  let context: UsageSummary["context"] = null;
  if (used !== null && max) {
    const percent = numberOf(usage, ["context_percent"]) ?? (100 * used) / max;
    context = { used, max, percent, text: `context ${count(used)} / ${count(max)} (${Math.round(percent)}%)` };
  }
  const costValue = numberOf(usage, COST_KEYS);
  const details = Object.entries(usage)
    .filter(([key, value]) => !SHOWN.has(key) && value !== null && (typeof value !== "object"))
    .map(([key, value]) => `${key.replace(/_/g, " ")} ${typeof value === "number" ? value.toLocaleString("en-US") : String(value)}`)
    .join(", ");
  const summary = { tokens: bits.length ? `${bits.join(" · ")} tokens` : "", context, cost: costValue === null ? "" : costText(costValue), details };
  return summary.tokens || summary.context || summary.cost || summary.details ? summary : null;
}

/** The usage line as one string: "10 in · 5 out tokens · context 10 / 200,000 (0%) · $0.01". */
export function formatUsage(usage: Usage | null): string {
  const s = summarizeUsage(usage);
  if (s === null) return "";
  return [s.tokens, s.context?.text ?? "", s.cost].filter((t) => t !== "").join(" · ");
}
