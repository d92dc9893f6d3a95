// The front end's half of the document comm (hermes_notebook/kernel/document.py is the kernel's): the kernel's
// requests are checked here and answered from the notebook, through `Host`. Replies are bounded; nothing the kernel
// sends is trusted beyond its shape (a source is text, an index a number), and nothing here runs code except `run`,
// which runs a cell only if its source is exactly what the user approved on the Run card, and `restart_run_all`
// (restart_and_run_all, approved on its own card). `outputs` writes into a
// cell what the kernel ran for it under a waiting %hermes cell (kernel/cells.py): text and PNG only, checked here.

import { splitLines } from "./diff";
import { CELL_TYPES, CHANGE_KINDS, type ChangeKind, type PendingChanges } from "./pending";
import { cellVersion, parseExpectation, staleCell, type StaleCell } from "./versions";

export const TARGET = "hermes_notebook.document";
export const PROTOCOL = 1;
/** Characters of a proposed source accepted (the kernel sends at most 20,000). */
export const MAX_SOURCE_CHARS = 100_000;
/** Characters of each cell's source an outline carries (the kernel shows the first line). */
export const OUTLINE_SOURCE_CHARS = 1_000;
/** Characters of each output's text a run reply carries. */
export const OUTPUT_TEXT_CHARS = 4_000;
/** Outputs a run reply carries at most. */
export const MAX_OUTPUTS = 20;

export interface Request {
  id: string;
  op: string;
  fields: Record<string, unknown>;
}

/** A cell as the host reads it from the notebook model (outputs as nbformat JSON). */
export interface HostCell {
  id: string;
  type: string;
  source: string;
  execution_count: number | null;
  outputs: unknown[];
}

export interface RunOutcome {
  execution_count: number | null;
  outputs: unknown[];
}

/** What answering needs from the notebook (JupyterLab's, in labextension.ts). */
export interface Host {
  readonly store: PendingChanges;
  path(): string;
  cells(): HostCell[];
  /** Run cell `cellId` in the notebook and resolve once it finished; rejects with a reason for the agent. */
  run(cellId: string, source: string): Promise<RunOutcome>;
  /** Replace cell `cellId`'s outputs (already checked: stream, display_data, execute_result, error). */
  setOutputs(cellId: string, outputs: Record<string, unknown>[]): void;
  /** Restart the kernel, then run every cell (stopping at the first error); returns at once: the kernel that
   * asked goes with the restart, so nothing waits for it. */
  restartAndRunAll(): void;
}

export type Reply = { ok: true } & Record<string, unknown>;
export type Refusal = { ok: false; error: string; stale?: StaleCell; path?: string };

/** The request in a kernel message if it is addressed to `client`, else null (another page's, or not a request). */
export function requestFor(data: unknown, client: string): Request | null {
  if (!isRecord(data) || data.type !== "request" || data.to !== client) return null;
  if (typeof data.id !== "string" || typeof data.op !== "string") return null;
  const { type: _type, id, to: _to, op, ...fields } = data;
  return { id, op, fields };
}

/** Answer one request (never throws: a failure is a refusal the agent reads). */
export async function answer(request: Request, host: Host): Promise<Reply | Refusal> {
  try {
    switch (request.op) {
      case "outline":
        return outline(host);
      case "propose":
        return propose(request.fields.change, host);
      case "cell":
        return cellAt(request.fields.index, host);
      case "run":
        return await run(request.fields, host);
      case "outputs":
        return writeOutputs(request.fields, host);
      case "restart_run_all":
        host.restartAndRunAll();
        return { ok: true };
      default:
        return refuse(`this notebook does not know the request ${JSON.stringify(request.op).slice(0, 40)}`);
    }
  } catch (error) {
    return refuse(error instanceof Error ? error.message : String(error));
  }
}

function outline(host: Host): Reply {
  const cells = host.cells().map((cell) => ({
    id: cell.id,
    type: cell.type,
    source: cell.source.slice(0, OUTLINE_SOURCE_CHARS),
    version: cellVersion(cell.source),
    lines: splitLines(cell.source).length,
    execution_count: cell.execution_count,
    outputs: outputKinds(cell.outputs),
  }));
  const store = host.store;
  const pending = store.all().map((change) => ({ id: change.id, kind: change.kind, index: store.indexOf(change) }));
  return { ok: true, path: host.path(), cells, pending };
}

function propose(raw: unknown, host: Host): Reply | Refusal {
  if (!isRecord(raw)) return refuse("a proposal needs a change");
  const { id, kind, index, source, cell_type: cellType } = raw;
  if (typeof id !== "string" || id === "" || id.length > 40) return refuse("a change needs an id");
  if (!CHANGE_KINDS.includes(kind as ChangeKind)) return refuse("a change is an insert, an edit or a delete");
  if (typeof index !== "number" || !Number.isInteger(index)) return refuse("a change needs a cell index");
  const text = kind === "delete" ? "" : source;
  if (typeof text !== "string") return refuse("an insert or an edit needs the source");
  if (text.length > MAX_SOURCE_CHARS) return refuse(`the source is over ${MAX_SOURCE_CHARS} characters`);
  if (cellType !== undefined && cellType !== null && !CELL_TYPES.includes(cellType as string)) {
    return refuse("cell_type must be code, markdown or raw");
  }
  if (raw.notebook !== undefined && raw.notebook !== null && raw.notebook !== host.path()) {
    return refuse(`this is ${host.path()}, not ${String(raw.notebook).slice(0, 200)}: the cell tools act only on the notebook whose chat or %hermes turn called them`);
  }
  const target = kind === "insert" ? undefined : host.cells()[index];
  if (target !== undefined) {
    // Read before write: a cell changed since the agent read it is refused before anything is shown.
    const stale = staleCell(parseExpectation(raw.expect), index, target);
    if (stale !== null) return { ok: false, error: "the cell changed since Hermes read it", stale, path: host.path() };
  }
  const result = host.store.propose({
    id,
    kind: kind as ChangeKind,
    index,
    source: text,
    cellType: kind === "insert" ? ((cellType as string | undefined) ?? "code") : null,
    unverified: raw.unverified === true,
  });
  if (!result.ok) return refuse(result.error);
  const { added, removed } = host.store.diff(result.change);
  const based = target === undefined ? {} : { cell: target.id, version: cellVersion(target.source) };
  const replaced = result.change.replaced === true;
  return { ok: true, added, removed, cell_type: result.change.cellType, path: host.path(), replaced, ...based };
}

function cellAt(index: unknown, host: Host): Reply | Refusal {
  const cells = host.cells();
  if (typeof index !== "number" || !Number.isInteger(index) || index < 0 || index >= cells.length) {
    return refuse(`there is no cell ${String(index).slice(0, 20)}; the notebook has ${cells.length} cells`);
  }
  const cell = cells[index]!;
  return { ok: true, cell: { id: cell.id, type: cell.type, source: cell.source, execution_count: cell.execution_count } };
}

async function run(fields: Record<string, unknown>, host: Host): Promise<Reply | Refusal> {
  const { cell: cellId, source } = fields;
  if (typeof cellId !== "string" || typeof source !== "string") return refuse("a run needs the cell and its source");
  const cell = host.cells().find((c) => c.id === cellId);
  if (cell === undefined) return refuse("the cell is gone");
  if (cell.type !== "code") return refuse("only code cells run");
  if (cell.source !== source) return refuse("the cell changed after the user approved it, so it was not run");
  const outcome = await host.run(cellId, source);
  return { ok: true, execution_count: outcome.execution_count, outputs: summarizeOutputs(outcome.outputs) };
}

/** Output kinds and mime types `outputs` accepts; the rest is dropped. */
const WRITABLE_MIMES = ["text/plain", "image/png"];
const BASE64 = /^[A-Za-z0-9+/\s]*={0,2}\s*$/;

function writeOutputs(fields: Record<string, unknown>, host: Host): Reply | Refusal {
  const { cell: cellId, source, outputs } = fields;
  if (typeof cellId !== "string" || typeof source !== "string" || !Array.isArray(outputs)) {
    return refuse("outputs need the cell, its source and the outputs");
  }
  const cell = host.cells().find((c) => c.id === cellId);
  if (cell === undefined) return refuse("the cell is gone");
  if (cell.source !== source) return refuse("the cell changed after it ran, so its outputs were not written");
  host.setOutputs(cellId, checkedOutputs(outputs));
  return { ok: true };
}

/** The kernel's outputs reduced to what a cell may show from it: bounded text, PNGs only, nothing executable. */
export function checkedOutputs(outputs: unknown[]): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const output of outputs.filter(isRecord).slice(0, MAX_OUTPUTS)) {
    const kind = output.output_type;
    if (kind === "stream") {
      const name = output.name === "stderr" ? "stderr" : "stdout";
      out.push({ output_type: "stream", name, text: text(output.text, OUTPUT_TEXT_CHARS * 4) });
    } else if (kind === "error") {
      const traceback = Array.isArray(output.traceback) ? output.traceback.filter((l) => typeof l === "string") : [];
      out.push({ output_type: "error", ename: text(output.ename, 200), evalue: text(output.evalue, 2_000),
                 traceback: traceback.slice(-40).map((l) => (l as string).slice(0, 2_000)) });
    } else if (kind === "display_data" || kind === "execute_result") {
      const data = isRecord(output.data) ? output.data : {};
      const kept: Record<string, string> = {};
      for (const mime of WRITABLE_MIMES) {
        const value = data[mime];
        if (typeof value !== "string") continue;
        if (mime === "image/png" && (!BASE64.test(value) || value.length > 1_000_000)) continue;
        kept[mime] = mime === "text/plain" ? value.slice(0, OUTPUT_TEXT_CHARS * 4) : value;
      }
      if (Object.keys(kept).length === 0) continue;
      out.push(kind === "execute_result"
        ? { output_type: kind, data: kept, metadata: {}, execution_count: null }
        : { output_type: kind, data: kept, metadata: {} });
    }
  }
  return out;
}

/** One short label per output: `stream stdout`, `error ValueError`, `display_data image/png, text/plain`. */
export function outputKinds(outputs: unknown[]): string[] {
  return outputs.filter(isRecord).map((output) => {
    const kind = text(output.output_type, 40);
    if (kind === "stream") return `stream ${text(output.name, 10)}`.trim();
    if (kind === "error") return `error ${text(output.ename, 80)}`.trim();
    const data = isRecord(output.data) ? Object.keys(output.data).slice(0, 4).join(", ") : "";
    return data ? `${kind} ${data}` : kind;
  });
}

/** Outputs as the agent gets them after a run: text kept (bounded), other data named by its mime types. */
export function summarizeOutputs(outputs: unknown[]): Record<string, unknown>[] {
  return outputs
    .filter(isRecord)
    .slice(0, MAX_OUTPUTS)
    .map((output) => {
      const kind = text(output.output_type, 40);
      if (kind === "stream") return { output_type: kind, name: text(output.name, 10), text: joined(output.text) };
      if (kind === "error") {
        const lines = Array.isArray(output.traceback) ? output.traceback.filter((l) => typeof l === "string") : [];
        const traceback = lines.slice(-40).map((l) => (l as string).replace(ANSI, "").slice(0, 2_000));
        return { output_type: kind, ename: text(output.ename, 200), evalue: text(output.evalue, 2_000), traceback };
      }
      const data = isRecord(output.data) ? output.data : {};
      return { output_type: kind, mimes: Object.keys(data).slice(0, 10), text: joined(data["text/plain"]) };
    });
}

/** Terminal colour codes in a traceback (IPython colours them); the agent reads the text. */
const ANSI = /\x1b\[[0-9;]*[A-Za-z]/g;

function joined(value: unknown): string {
  const full = Array.isArray(value) ? value.filter((v) => typeof v === "string").join("") : text(value, Infinity);
  return full.length > OUTPUT_TEXT_CHARS ? `${full.slice(0, OUTPUT_TEXT_CHARS)}…` : full;
}

function text(value: unknown, limit: number): string {
  return typeof value === "string" ? value.slice(0, limit) : "";
}

function refuse(error: string): Refusal {
  return { ok: false, error };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
