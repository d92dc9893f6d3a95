// A proposed code cell's Preview (hermes_notebook/kernel/preview/ is the kernel's side): the click goes to the
// kernel, which runs the source in a copy of itself; what comes back is shown under the diff: how it ended and
// how long it took, the card's sentence word for word, the outputs (bounded, figures as images), the error and
// the variables table. Everything the kernel sends is checked for shape and bounded here; text goes in as text,
// an image only as a data: URL of checked base64 PNG.

import { h } from "../dom";

/** Outputs shown at most, and characters of each output's text. */
export const MAX_SHOWN_OUTPUTS = 20;
export const SHOWN_TEXT_CHARS = 4_000;
/** Variables rows shown at most. */
export const MAX_ROWS = 100;
/** The sentence every preview says (the kernel sends it too: kernel/preview/report.py CARD_SENTENCE). */
export const CARD_SENTENCE =
  "Ran in a copy of your kernel: your variables are untouched. Files, network and databases are real.";

export interface PreviewOutput {
  kind: "text" | "image" | "error";
  text: string;
}

export interface PreviewVariable {
  name: string;
  change: string;
  type: string;
  shape: string;
}

export interface PreviewReportData {
  ended: string;
  reason: string;
  outputs: PreviewOutput[];
  error: string;
  variables: PreviewVariable[];
  seconds: number;
}

export type PreviewState =
  | { status: "running"; click: string }
  | { status: "done"; click: string; report: PreviewReportData };

const ENDINGS = new Set(["finished", "error", "time limit", "memory budget", "stopped", "interrupted", "failed",
  "refused"]);
const CHANGES = new Set(["created", "changed in place", "rebound", "deleted", "not checked"]);
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function text(value: unknown, limit = SHOWN_TEXT_CHARS): string {
  if (Array.isArray(value)) value = value.filter((part) => typeof part === "string").join("");
  if (typeof value !== "string") return "";
  return value.length > limit ? `${value.slice(0, limit)}… [cut]` : value;
}

function output(value: unknown): PreviewOutput[] {
  if (!isRecord(value)) return [];
  if (value.output_type === "stream") return [{ kind: "text", text: text(value.text) }];
  if (value.output_type === "error") return [];
  const data = isRecord(value.data) ? value.data : {};
  const png = typeof data["image/png"] === "string" ? data["image/png"].replace(/\s+/g, "") : "";
  if (png && png.length <= 2_000_000 && BASE64.test(png)) return [{ kind: "image", text: png }];
  const plain = text(data["text/plain"]);
  return plain ? [{ kind: "text", text: plain }] : [];
}

/** The report in a kernel message, checked and bounded; null when it is not one. */
export function parseReport(value: unknown): PreviewReportData | null {
  if (!isRecord(value) || typeof value.ended !== "string" || !ENDINGS.has(value.ended)) return null;
  const outputs = (Array.isArray(value.outputs) ? value.outputs : []).flatMap(output).slice(0, MAX_SHOWN_OUTPUTS);
  const variables = (Array.isArray(value.variables) ? value.variables : [])
    .filter(isRecord)
    .filter((row) => typeof row.change === "string" && CHANGES.has(row.change))
    .slice(0, MAX_ROWS)
    .map((row) => ({ name: text(row.name, 200), change: String(row.change), type: text(row.type, 200),
      shape: text(row.shape, 100) }));
  const seconds = typeof value.seconds === "number" && Number.isFinite(value.seconds) ? value.seconds : 0;
  return { ended: value.ended, reason: text(value.reason, 500), outputs, error: text(value.error), variables,
    seconds };
}

/** One line: how the preview ended and how long it took. */
export function previewHeadline(report: PreviewReportData): string {
  const took = `${report.seconds.toFixed(2)} s`;
  switch (report.ended) {
    case "finished":
      return `Preview finished in ${took}.`;
    case "error":
      return `Preview raised an error after ${took}.`;
    case "time limit":
      return `Preview stopped at its time limit (${report.reason}).`;
    case "memory budget":
      return `Preview stopped at its memory budget (${report.reason || "memory limit"}).`;
    case "stopped":
      return `Preview stopped after ${took}.`;
    case "interrupted":
      return `Preview ended by the kernel's Interrupt after ${took}.`;
    case "refused":
      return `Preview refused: ${report.reason}`;
    default:
      return `Preview failed: ${report.reason}`;
  }
}

function variablesTable(rows: PreviewVariable[]): HTMLElement {
  if (rows.length === 0) return h("p", { class: "hn-preview-none" }, "No variable was created, changed or deleted.");
  return h(
    "table",
    { class: "hn-preview-vars", "aria-label": "Variables in the copy" },
    h("thead", {}, h("tr", {}, ...["Name", "Change", "Type", "Shape"].map((label) => h("th", { scope: "col" }, label)))),
    h("tbody", {}, ...rows.map((row) =>
      h("tr", { "data-change": row.change },
        h("td", {}, row.name), h("td", {}, row.change), h("td", {}, row.type), h("td", {}, row.shape)))),
  );
}

function shownOutput(item: PreviewOutput, n: number): HTMLElement {
  if (item.kind === "image") {
    return h("img", { class: "hn-preview-image", src: `data:image/png;base64,${item.text}`,
      alt: `Figure ${n} drawn by the preview` });
  }
  return h("pre", { class: "hn-preview-text" }, item.text);
}

/** The panel under the diff: running (with Stop), or the report. */
export function previewPanel(state: PreviewState, stop: () => void): HTMLElement {
  if (state.status === "running") {
    const button = h("button", { type: "button", class: "hn-preview-stop" }, "Stop");
    button.addEventListener("click", stop);
    return h("div", { class: "hn-preview", role: "status", "data-status": "running" },
      h("p", { class: "hn-preview-headline" }, "Running in a copy of your kernel…"), button);
  }
  const report = state.report;
  let figures = 0;
  const refused = report.ended === "refused" || report.ended === "failed";
  return h(
    "div",
    { class: "hn-preview", role: "status", "data-status": report.ended, "aria-label": "Preview" },
    h("p", { class: "hn-preview-headline" }, previewHeadline(report)),
    refused ? null : h("p", { class: "hn-preview-sentence" }, CARD_SENTENCE),
    ...report.outputs.map((item) => shownOutput(item, item.kind === "image" ? ++figures : 0)),
    report.error ? h("pre", { class: "hn-preview-error", role: "alert" }, report.error) : null,
    refused ? null : variablesTable(report.variables),
  );
}
