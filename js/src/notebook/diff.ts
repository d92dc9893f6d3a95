// A line diff for a proposed cell change, shaped for display: added, removed and unchanged lines, with long
// unchanged stretches folded to a count. Computed with jsdiff (`diff`); the text stays text (the view puts it in
// through textContent only: it is the model's, never trusted).

import { diffArrays } from "diff";

export type RowKind = "add" | "del" | "same" | "skip";

export interface DiffRow {
  kind: RowKind;
  /** the line, without its newline ("" for a skip row) */
  text: string;
  /** a skip row: how many unchanged lines it stands for */
  count?: number;
}

export interface LineDiff {
  rows: DiffRow[];
  added: number;
  removed: number;
}

/** Unchanged lines shown around each change; longer unchanged stretches fold into one "skip" row. */
export const CONTEXT_LINES = 3;

/** A cell source's lines ("" has none; a trailing newline does not make an extra empty line). */
export function splitLines(text: string): string[] {
  if (text === "") return [];
  const lines = text.split(/\r\n|\r|\n/);
  if (lines.length > 1 && lines[lines.length - 1] === "") lines.pop();
  return lines;
}

/** The rows that turn `before` into `after`, unchanged stretches longer than 2 × `context` + 1 folded. */
export function lineDiff(before: string, after: string, context: number = CONTEXT_LINES): LineDiff {
  const rows: DiffRow[] = [];
  let added = 0;
  let removed = 0;
  for (const part of diffArrays(splitLines(before), splitLines(after))) {
    const kind: RowKind = part.added ? "add" : part.removed ? "del" : "same";
    if (kind === "add") added += part.value.length;
    if (kind === "del") removed += part.value.length;
    for (const text of part.value) rows.push({ kind, text });
  }
  return { rows: fold(rows, context), added, removed };
}

function fold(rows: DiffRow[], context: number): DiffRow[] {
  const out: DiffRow[] = [];
  let i = 0;
  while (i < rows.length) {
    if (rows[i]!.kind !== "same") {
      out.push(rows[i]!);
      i += 1;
      continue;
    }
    let end = i;
    while (end < rows.length && rows[end]!.kind === "same") end += 1;
    const keepHead = i === 0 ? 0 : context; // after a change
    const keepTail = end === rows.length ? 0 : context; // before a change
    if (end - i > keepHead + keepTail + 1) {
      out.push(...rows.slice(i, i + keepHead));
      out.push({ kind: "skip", text: "", count: end - i - keepHead - keepTail });
      out.push(...rows.slice(end - keepTail, end));
    } else {
      out.push(...rows.slice(i, end));
    }
    i = end;
  }
  return out;
}
