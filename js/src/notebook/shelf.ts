// Pending changes outlive a page reload in the browser tab's sessionStorage, keyed by the notebook's path and saved
// with the ids of its cells: a reload, or closing and reopening the notebook in the same tab, finds them waiting on
// their cells again, and another file later opened at the same path (other cell ids) finds none. They are
// never written into the notebook file and never sent anywhere, and they go when the tab closes. Storage that is
// full or disabled only means they do not outlive the page (as before); nothing else depends on it. A duplicated tab
// copies the storage: each entry names the page holding it (notebook/tab_claim.ts), and a copy whose holder is still
// open takes nothing back, so one change is never offered for Keep in two tabs.

import {
  CELL_TYPES, CHANGE_KINDS, MAX_PENDING, type ChangeKind, type PendingChange, type PendingShelf, type Shelved,
} from "./pending";
import { CLAIM_WAIT_MS, LOCK_PREFIX, newHolder, type TabLocks } from "./tab_claim";

export const SHELF_PREFIX = "hermes-notebook:pending:";
/** Longest change id or cell id taken back from storage (the kernel's are a few characters; JupyterLab's 36). */
const MAX_ID = 100;
/** Longest source taken back: the most the kernel proposes (MAX_SOURCE_CHARS in kernel/cells.py). */
const MAX_SOURCE = 20_000;
/** Cell ids kept with the changes at most (enough to know the notebook again). */
const MAX_CELLS = 10_000;

/** The pending changes of the notebook at `path()`, in `storage` (the tab's sessionStorage in the extension). */
export class TabShelf implements PendingShelf {
  /** The page holding this shelf's changes (its lock's name, in every entry saved). */
  private holder = newHolder();
  /** What the tab kept belongs to a page still open in another tab (this one is its duplicate). */
  private foreign = false;

  constructor(
    private readonly path: () => string,
    private readonly storage: Pick<Storage, "getItem" | "setItem" | "removeItem"> | null = tabStorage(),
  ) {}

  /** Before load(): take the lock of the page that saved what the tab kept. A reloaded page gets it (that page is
   * gone) and holds the changes on; a duplicated tab does not (the first tab still shows them), so it loads nothing
   * and its own changes go under a new holder. Without locks every page takes its shelf back. */
  async claim(locks: TabLocks | null, waitMs: number = CLAIM_WAIT_MS): Promise<void> {
    if (locks === null) return;
    const stored = this.storedHolder();
    if (stored !== null) {
      if (await locks.hold(LOCK_PREFIX + stored, waitMs)) {
        this.holder = stored;
        return;
      }
      this.foreign = true;
    }
    await locks.hold(LOCK_PREFIX + this.holder, 0);
  }

  load(): Shelved {
    if (this.foreign) return { cells: [], changes: [] };
    try {
      const text = this.storage?.getItem(SHELF_PREFIX + this.path()) ?? null;
      return text === null ? { cells: [], changes: [] } : parseShelved(JSON.parse(text));
    } catch {
      return { cells: [], changes: [] }; // unreadable or not JSON: nothing to take back
    }
  }

  save(changes: readonly PendingChange[], cells: readonly string[]): void {
    try {
      if (changes.length === 0) this.storage?.removeItem(SHELF_PREFIX + this.path());
      else {
        const entry = { holder: this.holder, cells: cells.slice(0, MAX_CELLS), changes };
        this.storage?.setItem(SHELF_PREFIX + this.path(), JSON.stringify(entry));
      }
    } catch {
      // full or disabled: the changes still wait in this page, they just do not outlive it
    }
  }

  private storedHolder(): string | null {
    try {
      const value: unknown = JSON.parse(this.storage?.getItem(SHELF_PREFIX + this.path()) ?? "null");
      const holder = typeof value === "object" && value !== null ? (value as Record<string, unknown>).holder : null;
      return isId(holder) ? holder : null;
    } catch {
      return null;
    }
  }

  /** The notebook was renamed from `oldPath`: forget what was kept under that name (the store saves again). */
  forget(oldPath: string): void {
    try {
      this.storage?.removeItem(SHELF_PREFIX + oldPath);
    } catch {
      // as in save
    }
  }
}

/** What the shelf kept, from its JSON: the cells' ids and the changes (anything else: nothing kept). */
export function parseShelved(value: unknown): Shelved {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return { cells: [], changes: [] };
  const { cells, changes } = value as Record<string, unknown>;
  const ids = Array.isArray(cells) ? cells.filter(isId).slice(0, MAX_CELLS) : [];
  return { cells: ids, changes: parseChanges(changes) };
}

/** The changes in `value` that have every field a pending change needs, with the right types (others dropped). */
export function parseChanges(value: unknown): PendingChange[] {
  if (!Array.isArray(value)) return [];
  const out: PendingChange[] = [];
  for (const item of value.slice(0, MAX_PENDING)) {
    const change = parseChange(item);
    if (change !== null) out.push(change);
  }
  return out;
}

function parseChange(item: unknown): PendingChange | null {
  if (typeof item !== "object" || item === null) return null;
  const { id, kind, cellType, cellId, base, source, replaced, unverified } = item as Record<string, unknown>;
  if (!isId(id) || !CHANGE_KINDS.includes(kind as ChangeKind) || !CELL_TYPES.includes(cellType as string)) return null;
  if (!(cellId === null || isId(cellId)) || !isSource(base) || !isSource(source)) return null;
  if (kind !== "insert" && cellId === null) return null; // an edit or deletion names its cell
  return { id, kind: kind as ChangeKind, cellType: cellType as string, cellId, base, source, replaced: replaced === true,
    unverified: unverified === true };
}

function isId(value: unknown): value is string {
  return typeof value === "string" && value.length > 0 && value.length <= MAX_ID;
}

function isSource(value: unknown): value is string {
  return typeof value === "string" && value.length <= MAX_SOURCE;
}

function tabStorage(): Storage | null {
  try {
    return globalThis.sessionStorage ?? null;
  } catch {
    return null; // a sandboxed frame may forbid it
  }
}

/** Which view of each notebook (by path) keeps its pending changes on the tab's shelf: the first one opened in the
 * page. A second view of the same notebook (JupyterLab's New View) keeps none, so after a reload each change comes
 * back once, and a change kept in one view cannot come back from the other's copy. */
export class ShelfOwners {
  private readonly owners = new Map<string, object>();

  /** True when `view` now keeps the shelf of the notebook at `path` (no other view does). */
  claim(path: string, view: object): boolean {
    if (this.owners.has(path)) return false;
    this.owners.set(path, view);
    return true;
  }

  /** The notebook `view` keeps was renamed. */
  moved(from: string, to: string, view: object): void {
    if (this.owners.get(from) !== view) return;
    this.owners.delete(from);
    this.owners.set(to, view);
  }

  /** `view` closed: the next view opened on that notebook keeps its shelf. */
  release(path: string, view: object): void {
    if (this.owners.get(path) === view) this.owners.delete(path);
  }
}
