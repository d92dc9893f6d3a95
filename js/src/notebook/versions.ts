// Read before write, the page's half (hermes_notebook/kernel/versions.py is the kernel's): a cell's version is a
// short hash of its source, and an edit or deletion carries what the agent last saw at its index (`expect`). The
// page checks it against the cell as it is now, in the same step as it takes the proposal, so a cell the user typed
// in since, or an index that now names another cell, is refused before anything is shown, with the cell as it is.

/** A cell's version: 8 hex digits of FNV-1a (32 bits) over its UTF-16 code units (`cell_version` in Python). */
export function cellVersion(source: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < source.length; i++) {
    hash ^= source.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash.toString(16).padStart(8, "0");
}

/** What the kernel expects at an edit's index: that cell (by id) at one of these versions. */
export interface Expectation {
  cell: string | null;
  versions: string[];
}

/** The cell as it is now, sent back with a refused stale edit so the agent can re-read it. */
export interface StaleCell {
  index: number;
  id: string;
  type: string;
  source: string;
  version: string;
  /** the index now names another cell than the one the agent read */
  moved: boolean;
}

const VERSION = /^[0-9a-f]{8}$/;

/** The `expect` field of a proposal, checked (null: nothing expected, or not in the shape the kernel sends). */
export function parseExpectation(raw: unknown): Expectation | null {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) return null;
  const { cell, versions } = raw as Record<string, unknown>;
  const id = typeof cell === "string" && cell.length > 0 && cell.length <= 100 ? cell : null;
  const list = Array.isArray(versions) ? versions.filter((v): v is string => typeof v === "string" && VERSION.test(v)) : [];
  return id === null && list.length === 0 ? null : { cell: id, versions: list.slice(0, 20) };
}

/** The cell at the index if it is not what the agent expects (a refusal carries it), else null. */
export function staleCell(
  expect: Expectation | null,
  index: number,
  cell: { id: string; type: string; source: string },
): StaleCell | null {
  if (expect === null) return null;
  const version = cellVersion(cell.source);
  const moved = expect.cell !== null && expect.cell !== cell.id;
  if (!moved && (expect.versions.length === 0 || expect.versions.includes(version))) return null;
  return { index, id: cell.id, type: cell.type, source: cell.source, version, moved };
}
