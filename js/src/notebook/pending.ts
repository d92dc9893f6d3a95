// The notebook's pending changes: what Hermes proposed and the user has not yet kept or discarded. A proposal
// changes nothing in the notebook: an edit or a deletion waits on its cell, an insertion waits at its place (before
// a cell, or at the end). Keep applies exactly the proposed change; Discard forgets it, so the cells are as they
// were. Changes are tracked by cell id, never by index, so the user can add, move, delete and type in cells
// meanwhile. Pure logic over `NotebookDoc` (JupyterLab's model in labextension.ts, a fake in the tests); a
// `PendingShelf` (notebook/shelf.ts) keeps them across a page reload.

import { lineDiff, type LineDiff } from "./diff";

export type ChangeKind = "insert" | "edit" | "delete";
export const CHANGE_KINDS: readonly ChangeKind[] = ["insert", "edit", "delete"];
export const CELL_TYPES: readonly string[] = ["code", "markdown", "raw"];
/** Pending changes a notebook holds at most (the agent is told to wait for the user beyond that). */
export const MAX_PENDING = 50;

export interface DocCell {
  readonly id: string;
  readonly type: string;
  readonly source: string;
}

/** The notebook document as the store sees it. */
export interface NotebookDoc {
  cells(): readonly DocCell[];
  insert(index: number, type: string, source: string): void;
  setSource(cellId: string, source: string): void;
  remove(cellId: string): void;
}

/** What the kernel proposes (checked by the protocol before it gets here). */
export interface Proposal {
  id: string;
  kind: ChangeKind;
  index: number;
  source: string;
  cellType: string | null;
  unverified?: boolean;
}

export interface PendingChange {
  readonly id: string;
  readonly kind: ChangeKind;
  readonly cellType: string;
  /** insert: the cell it goes before (null: the end); edit and delete: the cell it changes */
  cellId: string | null;
  /** the cell's source when the change was proposed (edit, delete) */
  readonly base: string;
  /** the proposed source (insert, edit) */
  readonly source: string;
  /** it replaced an earlier proposal for the same cell, still pending then */
  readonly replaced?: boolean;
  /** Hermes (0.19.0) did not say which session proposed it: the caller could not be verified */
  readonly unverified?: boolean;
}

export type Result = { ok: true } | { ok: false; error: string };

/** What a shelf keeps: the pending changes and the ids of the notebook's cells when they were saved (so they come
 * back only into the same notebook, never into another file later opened at the same path). */
export interface Shelved {
  cells: string[];
  changes: PendingChange[];
}

/** Where pending changes outlive the page (notebook/shelf.ts: the tab's sessionStorage); saved on every change. */
export interface PendingShelf {
  load(): Shelved;
  save(changes: readonly PendingChange[], cells: readonly string[]): void;
}

export class PendingChanges {
  private readonly changes = new Map<string, PendingChange>();
  private readonly listeners = new Set<() => void>();
  /** Saving waits for restore(): a change proposed before it must not overwrite what the shelf kept. */
  private restored = false;

  constructor(
    private readonly doc: NotebookDoc,
    private readonly shelf: PendingShelf | null = null,
  ) {}

  /** Take back the changes the shelf kept from before a reload, only into the same notebook (one of the cells it had
   * then is still here, by id; another file at the same path has other ids), and each only where it still fits: an
   * edit or deletion whose cell is still there, an insertion whose place is (or that goes at the end). A change
   * already pending here, or a cell that already has an edit or deletion waiting, keeps what is here. Returns how
   * many came back. */
  restore(): number {
    if (this.shelf === null) return 0;
    const ids = new Set(this.doc.cells().map((cell) => cell.id));
    const busy = new Set([...this.changes.values()].filter((c) => c.kind !== "insert").map((c) => c.cellId));
    const shelved = this.restored ? { cells: [], changes: [] } : this.shelf.load();
    const kept = shelved.cells.some((id) => ids.has(id)) ? shelved.changes : []; // the same notebook only
    this.restored = true;
    let count = 0;
    for (const change of kept) {
      if (this.changes.has(change.id) || this.changes.size >= MAX_PENDING) continue;
      if (change.cellId !== null && !ids.has(change.cellId)) continue;
      if (change.kind !== "insert" && busy.has(change.cellId)) continue;
      if (change.kind !== "insert") busy.add(change.cellId);
      this.changes.set(change.id, { ...change });
      count++;
    }
    this.emit(); // saves what is pending now: what did not fit is not offered again
    return count;
  }

  /** Save the pending changes again (the notebook's name changed, so the shelf keeps them under the new one). */
  persist(): void {
    if (this.restored) this.shelf?.save(this.all(), this.doc.cells().map((cell) => cell.id));
  }

  /** Take a proposal: it waits, nothing in the notebook changes. A new edit or deletion of a cell replaces the one
   * already waiting there. */
  propose(p: Proposal): { ok: true; change: PendingChange } | { ok: false; error: string } {
    const cells = this.doc.cells();
    if (this.changes.has(p.id)) return { ok: false, error: `change ${p.id} is already pending` };
    const limit = p.kind === "insert" ? cells.length : cells.length - 1;
    if (!Number.isInteger(p.index) || p.index < 0 || p.index > limit) {
      return { ok: false, error: `there is no cell ${p.index}; the notebook has ${count(cells.length)}` };
    }
    let change: PendingChange;
    let replaced = false;
    if (p.kind === "insert") {
      const type = p.cellType ?? "code";
      change = { id: p.id, kind: p.kind, cellType: type, cellId: cells[p.index]?.id ?? null, base: "", source: p.source,
        replaced, unverified: p.unverified === true };
    } else {
      const cell = cells[p.index]!;
      if (p.kind === "edit" && p.source === cell.source) {
        // a card showing +0 −0 would ask the user to decide nothing
        return { ok: false, error: `cell ${p.index} already has exactly this source: nothing to change` };
      }
      for (const other of this.changes.values()) {
        if (other.kind !== "insert" && other.cellId === cell.id) {
          this.changes.delete(other.id); // superseded: the view says so
          replaced = true;
        }
      }
      const source = p.kind === "edit" ? p.source : "";
      change = { id: p.id, kind: p.kind, cellType: cell.type, cellId: cell.id, base: cell.source, source, replaced,
        unverified: p.unverified === true };
    }
    if (this.changes.size >= MAX_PENDING) {
      return { ok: false, error: `${MAX_PENDING} changes are already waiting for the user` };
    }
    this.changes.set(change.id, change);
    this.emit();
    return { ok: true, change };
  }

  /** Apply a pending change exactly as proposed, then forget it. */
  keep(id: string): Result {
    const change = this.changes.get(id);
    if (change === undefined) return { ok: false, error: `no pending change ${id}` };
    const index = this.indexOf(change);
    if (index === null) {
      this.forget(id);
      return { ok: false, error: "the cell it changes is gone" };
    }
    this.changes.delete(id);
    if (change.kind === "insert") this.doc.insert(index, change.cellType, change.source);
    else if (change.kind === "edit") this.doc.setSource(change.cellId!, change.source);
    else this.doc.remove(change.cellId!);
    this.emit();
    return { ok: true };
  }

  /** Forget a pending change: the notebook stays exactly as it is. */
  discard(id: string): boolean {
    return this.forget(id);
  }

  get(id: string): PendingChange | undefined {
    return this.changes.get(id);
  }

  all(): PendingChange[] {
    return [...this.changes.values()];
  }

  /** Where the change applies now: the index of its cell, or where an insertion goes; null when its cell is gone. */
  indexOf(change: PendingChange): number | null {
    const cells = this.doc.cells();
    if (change.cellId === null) return cells.length;
    const index = cells.findIndex((cell) => cell.id === change.cellId);
    return index < 0 ? null : index;
  }

  /** The cell's source now, for an edit or deletion (null for an insertion or a cell that is gone). */
  current(change: PendingChange): string | null {
    if (change.kind === "insert") return null;
    return this.doc.cells().find((cell) => cell.id === change.cellId)?.source ?? null;
  }

  /** What Keep would do, as a diff: from the cell as it is now (edit, delete), or from nothing (insert). */
  diff(change: PendingChange): LineDiff {
    const now = this.current(change) ?? change.base;
    if (change.kind === "insert") return lineDiff("", change.source);
    return lineDiff(now, change.kind === "edit" ? change.source : "");
  }

  /** The user changed the cell after Hermes proposed this (Keep still applies the proposal as shown). */
  stale(change: PendingChange): boolean {
    const now = this.current(change);
    return now !== null && now !== change.base;
  }

  /** The notebook's cells changed: an edit or deletion whose cell is gone is dropped, an insertion whose cell is
   * gone moves to the end. */
  sync(): void {
    const ids = new Set(this.doc.cells().map((cell) => cell.id));
    let changed = false;
    for (const change of [...this.changes.values()]) {
      if (change.cellId === null || ids.has(change.cellId)) continue;
      if (change.kind === "insert") change.cellId = null;
      else this.changes.delete(change.id);
      changed = true;
    }
    if (changed) this.emit();
  }

  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private forget(id: string): boolean {
    const had = this.changes.delete(id);
    if (had) this.emit();
    return had;
  }

  private emit(): void {
    this.persist();
    for (const listener of [...this.listeners]) listener();
  }
}

function count(n: number): string {
  return n === 1 ? "1 cell" : `${n} cells`;
}
