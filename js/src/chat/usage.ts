// How a reply's usage reads: "10 in · 5 out tokens", a context gauge, the cost when the server reports it,
// and everything else on hover. Hermes names the same counts differently per surface (API Server: OpenAI's
// *_tokens; Dashboard: input/output/context_used/...). Twin of hermes_notebook/formatting.py.

import type { Usage } from "../types/turns";

import type { ContextCategory, ContextUsage } from "../types/chat";

const IN_KEYS = ["input_tokens", "prompt_tokens", "input", "prompt"];
const OUT_KEYS = ["output_tokens", "completion_tokens", "output", "completion"];
const REASONING_KEYS = ["reasoning_tokens", "reasoning"];
const COST_KEYS = ["cost_usd", "actual_cost_usd", "estimated_cost_usd", "cost"];
// Prompt caching: the Dashboard says cache_read/cache_write (+ cache_hit_pct), API runs cache_*_tokens.
const CACHE_READ_KEYS = ["cache_read", "cache_read_tokens"];
const CACHE_WRITE_KEYS = ["cache_write", "cache_write_tokens"];
const SHOWN = new Set([
  ...IN_KEYS, ...OUT_KEYS, ...REASONING_KEYS, ...COST_KEYS, ...CACHE_READ_KEYS, ...CACHE_WRITE_KEYS,
  "cache_hit_pct", "context_used", "context_max", "context_percent",
]);

export interface UsageSummary {
  /** "10 in · 5 out tokens" (empty when no token counts were reported). */
  tokens: string;
  /** The context window fill, when the server reports it. */
  context: { used: number; max: number; percent: number; text: string } | null;
  /** "cache 1,200 read · 300 written (45% hit)", when the server reports prompt caching. */
  cache: string;
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

/** Twin of formatting.cache_text: "cache 1,200 read · 300 written (45% hit)", or "". */
export function cacheText(usage: Usage): string {
  const read = numberOf(usage, CACHE_READ_KEYS);
  const written = numberOf(usage, CACHE_WRITE_KEYS);
  const hit = numberOf(usage, ["cache_hit_pct"]);
  if (!read && !written) return hit ? `cache ${Math.round(hit)}% hit` : "";
  const bits = [read ? `${count(read)} read` : "", written ? `${count(written)} written` : ""].filter((b) => b !== "");
  return `cache ${bits.join(" · ")}${hit !== null ? ` (${Math.round(hit)}% hit)` : ""}`;
}

/** A category's name for a reader: its label, or its id when the label is an untranslated message key. */
export function categoryLabel(c: ContextCategory): string {
  const label = (c.label || "").trim();
  if (label !== "" && !/^[a-z0-9_]+(\.[a-z0-9_]+)+$/.test(label)) return label;
  return (c.id || "other").replace(/_/g, " ");
}

/** The hover text of the session gauge: the fill, then one line per category ("System prompt: 1,551 tokens"). */
export function breakdownText(context: ContextUsage | null): string {
  if (context === null || typeof context !== "object" || !(context.max > 0)) return "";
  const head = `context ${count(context.used)} / ${count(context.max)} (${Math.round(context.percent)}%)`;
  const lines = (Array.isArray(context.categories) ? context.categories : [])
    .filter((c) => typeof c?.tokens === "number")
    .map((c) => `${categoryLabel(c)}: ${count(c.tokens)} tokens`);
  return [head, ...lines].join("\n");
}

/** The reply's own tokens (`turn`, turns/usage.py) where known; the Dashboard's running totals (they carry `calls`)
 *  otherwise, and then the line says "session" so no one reads them as the reply's. Twin of formatting.usage_line. */
export function summarizeUsage(usage: Usage | null): UsageSummary | null {
  if (usage === null || typeof usage !== "object") return null;
  const bits: string[] = [];
  const own = usage.turn;
  const counted = own !== null && typeof own === "object" && !Array.isArray(own) ? (own as Usage) : usage;
  const tokensIn = numberOf(counted, IN_KEYS);
  const tokensOut = numberOf(counted, OUT_KEYS);
  const reasoning = numberOf(counted, REASONING_KEYS);
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
  const cache = cacheText(usage);
  const session = counted === usage && "calls" in usage ? "session: " : "";
  const summary = { tokens: bits.length ? `${session}${bits.join(" · ")} tokens` : "", context, cache, cost: costValue === null ? "" : costText(costValue), details };
  return summary.tokens || summary.context || summary.cache || summary.cost || summary.details ? summary : null;
}

/** The usage line as one string: "10 in · 5 out tokens · context 10 / 200,000 (0%) · $0.01". */
export function formatUsage(usage: Usage | null): string {
  const s = summarizeUsage(usage);
  if (s === null) return "";
  return [s.tokens, s.cache, s.context?.text ?? "", s.cost].filter((t) => t !== "").join(" · ");
}
