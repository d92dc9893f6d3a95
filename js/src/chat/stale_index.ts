// The conversation in brief, as the kernel settled it: one index entry per message (status, rev), which rides in
// change batches and is implied by snapshots and older pages. A view whose copy of a settled message is missing or
// at another rev, or that is behind `settled_seq` (a batch carrying entries was lost: custom messages are not
// replayed), asks for a snapshot. The kernel sends entries only after the batch that settled their messages, so a
// mismatch is normally real; the check waits `delay` ms so a burst of entries (and a straggling batch) settles
// first. Each (message, rev), and each settled_seq, is asked for once: if a snapshot cannot fix it, asking again
// won't. Owns: the entries, what was asked for, the debounce timer.

import type { IndexEntry } from "../types/chat";
import type { Message } from "../types/turns";
import { staleEntries, type SyncState } from "./state";

/** How long the view waits, after the index changed, before asking for a snapshot for stale messages. */
export const STALE_DEBOUNCE_MS = 150;

export interface StaleIndex {
  /** Entries from a batch (or an `index` message): check soon. */
  receive(entries: readonly IndexEntry[] | undefined): void;
  /** A snapshot holds every entry there is: replace them all, then check soon. */
  replace(messages: readonly Message[], revOf: (id: string) => number): void;
  /** An older page implies its messages' entries. */
  add(messages: readonly Message[], revOf: (id: string) => number): void;
  /** Check soon (e.g. `settled_seq` moved). */
  schedule(): void;
  dispose(): void;
}

export interface IndexSource {
  state(): SyncState;
  /** A snapshot request is in flight: its answer will settle what is stale (the check runs again then). */
  waiting(): boolean;
  /** The kernel's `settled_seq` traitlet. */
  settledSeq(): number;
  /** Ask for a snapshot. */
  resync(): void;
}

export function createStaleIndex(source: IndexSource, delay: number = STALE_DEBOUNCE_MS): StaleIndex {
  const index = new Map<string, IndexEntry>();
  const askedFor = new Map<string, number>();
  let askedForSeq = 0;
  let timer: ReturnType<typeof setTimeout> | null = null;

  const check = (): void => {
    timer = null;
    if (source.waiting()) return; // checked again when the answer lands
    const state = source.state();
    const settledSeq = source.settledSeq();
    const behind = state.seq !== null && settledSeq > state.seq && askedForSeq !== settledSeq;
    const stale = staleEntries(state, [...index.values()]).filter((e) => askedFor.get(e.id) !== e.rev);
    if (stale.length === 0 && !behind) return;
    for (const entry of stale) askedFor.set(entry.id, entry.rev);
    if (behind) askedForSeq = settledSeq;
    source.resync();
  };
  const schedule = (): void => {
    timer ??= setTimeout(check, delay);
  };
  const add = (messages: readonly Message[], revOf: (id: string) => number): void => {
    for (const { id, role, status, usage, error } of messages) index.set(id, { id, role, status, usage, error, rev: revOf(id) });
  };

  return {
    receive(entries) {
      if (!Array.isArray(entries) || entries.length === 0) return;
      for (const entry of entries) index.set(entry.id, entry);
      schedule();
    },
    replace(messages, revOf) {
      index.clear();
      add(messages, revOf);
      schedule();
    },
    add,
    schedule,
    dispose() {
      if (timer !== null) clearTimeout(timer);
      timer = null;
    },
  };
}
