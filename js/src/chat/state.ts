// Python-synced transcript state, as a pure reducer (no DOM, no model).
//
// Content arrives only as custom messages (docs/architecture.md, "Widget comm protocol"):
// - `changes` batches `{seq, changes}`: change records applied in order;
// - the `snapshot` answer `{seq, messages, revs}`: replaces everything, after which only batches with
//   a larger `seq` apply (so a late batch never duplicates text the snapshot already holds).
// Until the first snapshot answer arrives, batches are buffered for replay on top of it, and also
// applied provisionally so a view stays live while the kernel's shell channel is busy (a blocking
// cell delays the snapshot answer but not the change stream).
//
// Every message carries a revision (`revs`): the sum of `changeWeight` over the records applied to
// it, which the kernel computes the same way. The compact `index` traitlet lists each message's
// status and rev; `staleEntries` says which finished messages this copy lacks or holds at another
// rev, and the view then asks for a snapshot instead of trusting what it has.
//
// Structural sharing: a change replaces only the message and part objects it touches. Views compare
// by identity to re-render exactly what changed.

import type { Message, Part, WireChange } from "../types/turns";

import type { IndexEntry } from "../types/chat";

export interface Batch {
  seq: number;
  changes: WireChange[];
}

export type Revs = ReadonlyMap<string, number>;

export interface SyncState {
  /** seq of the snapshot (and batches) applied so far; null while waiting for a snapshot answer */
  seq: number | null;
  messages: readonly Message[];
  /** revision of each message, as the kernel counts it */
  revs: Revs;
  /** batches received while waiting, replayed on top of the snapshot */
  buffer: Batch[];
  /** changes that referred to a message or part we don't have (a resync is due) */
  missed: number;
}

export function initialState(messages: readonly Message[] = [], revs: Revs = new Map()): SyncState {
  return { seq: null, messages, revs, buffer: [], missed: 0 };
}

/** A batch of change records arrived. */
export function receiveChanges(state: SyncState, batch: Batch): SyncState {
  if (state.seq === null) {
    const applied = applyChanges(state.messages, batch.changes, state.revs);
    // Misses while waiting don't count: the snapshot will bring the missing messages.
    return { ...state, messages: applied.messages, revs: applied.revs, buffer: [...state.buffer, batch] };
  }
  if (batch.seq <= state.seq) return state; // already contained in the snapshot
  const applied = applyChanges(state.messages, batch.changes, state.revs);
  return {
    ...state,
    seq: batch.seq,
    messages: applied.messages,
    revs: applied.revs,
    missed: state.missed + applied.missed,
  };
}

/**
 * The snapshot answer arrived: replace the state, then replay newer buffered batches in seq order.
 * `revs` are the kernel's revisions at the snapshot (absent from an older kernel: then unknown).
 * A snapshot older than what this state already applied is ignored.
 */
export function receiveSnapshot(
  state: SyncState,
  seq: number,
  messages: readonly Message[],
  revs: Readonly<Record<string, number>> = {},
): SyncState {
  if (state.seq !== null && seq < state.seq) return state;
  const newer = state.buffer.filter((b) => b.seq > seq).sort((a, b) => a.seq - b.seq);
  let current: readonly Message[] = messages;
  let currentRevs: Revs = new Map(Object.entries(revs));
  let last = seq;
  let missed = 0;
  for (const batch of newer) {
    const applied = applyChanges(current, batch.changes, currentRevs);
    current = applied.messages;
    currentRevs = applied.revs;
    missed += applied.missed;
    last = batch.seq;
  }
  return { ...state, seq: last, messages: keepIdentical(state.messages, current), revs: currentRevs, buffer: [], missed };
}

/**
 * A page of older messages arrived (answering a request for those before `before`, the oldest held then): put it
 * in front. The kernel took it at `seq` after sending every batch up to it, so it fits a state at that very seq;
 * a page that doesn't fit (a batch was lost, a snapshot came in between or is awaited, the first message
 * changed) is dropped (null).
 */
export function prependOlder(
  state: SyncState,
  seq: number,
  before: string,
  messages: readonly Message[],
  revs: Readonly<Record<string, number>>,
): SyncState | null {
  if (state.seq === null || seq !== state.seq || state.messages[0]?.id !== before) return null;
  const held = new Set(state.messages.map((m) => m.id));
  const page = messages.filter((m) => !held.has(m.id));
  const nextRevs = new Map(state.revs);
  for (const m of page) nextRevs.set(m.id, revs[m.id] ?? 0);
  return { ...state, messages: [...page, ...state.messages], revs: nextRevs };
}

/** Start waiting for a fresh snapshot answer (e.g. after a resync request). */
export function awaitSnapshot(state: SyncState): SyncState {
  return { ...state, seq: null, buffer: [], missed: 0 };
}

/**
 * The index entries of settled (not streaming) messages that this state lacks, or holds at another
 * status or revision: content that will not arrive by itself, so a snapshot is due. A streaming
 * message's index entry is only as fresh as the last boundary, so it is never compared.
 */
export function staleEntries(state: SyncState, index: readonly IndexEntry[]): IndexEntry[] {
  const byId = new Map(state.messages.map((m) => [m.id, m]));
  return index.filter((entry) => {
    if (entry.status === "streaming") return false;
    const message = byId.get(entry.id);
    return message === undefined || message.status !== entry.status || state.revs.get(entry.id) !== entry.rev;
  });
}

/**
 * How much one change record adds to its message's revision: 1, or for `append` the length of its
 * text (UTF-16 code units). Merging consecutive appends (the kernel's coalescer does) keeps the sum.
 */
export function changeWeight(change: WireChange): number {
  return change.op === "append" ? change.text.length : 1;
}

export interface Applied {
  messages: readonly Message[];
  revs: Revs;
  missed: number;
}

/** Apply change records in order. Records about unknown messages/parts are counted, not thrown. */
export function applyChanges(
  messages: readonly Message[],
  changes: readonly WireChange[],
  revs: Revs = new Map(),
): Applied {
  let current = messages;
  let missed = 0;
  let nextRevs: Map<string, number> | null = null;
  for (const change of changes) {
    const next = applyChange(current, change);
    if (next === null) {
      missed += 1;
      continue;
    }
    // An op this bundle doesn't know changed nothing here: leave the rev behind, so the index shows
    // the message stale once it settles and a snapshot brings the kernel's copy.
    if (next === current) continue;
    current = next;
    nextRevs ??= new Map(revs);
    const id = targetOf(change);
    nextRevs.set(id, (nextRevs.get(id) ?? 0) + changeWeight(change));
  }
  return { messages: current, revs: nextRevs ?? revs, missed };
}

/** Apply one change record; null when it refers to a message or part that isn't there. */
export function applyChange(messages: readonly Message[], change: WireChange): readonly Message[] | null {
  switch (change.op) {
    case "message": {
      const index = messages.findIndex((m) => m.id === change.message.id);
      return index < 0 ? [...messages, change.message] : replaceAt(messages, index, change.message);
    }
    case "finish":
      return updateMessage(messages, change.message_id, (m) => ({
        ...m,
        status: change.status,
        usage: change.usage,
        error: change.error,
      }));
    case "part":
      return updateMessage(messages, change.message_id, (m) => {
        const at = m.parts.findIndex((p) => p.id === change.part.id);
        const parts = at < 0 ? [...m.parts, change.part] : replaceAt(m.parts, at, change.part);
        return { ...m, parts };
      });
    case "append":
      return updatePart(messages, change.message_id, change.part_id, (p) => {
        const grown = { ...p, text: p.text + change.text };
        grownFrom.set(grown, { from: p, text: change.text });
        return grown;
      });
    case "patch":
      return updatePart(messages, change.message_id, change.part_id, (p) => ({ ...p, ...change.fields }));
    case "splice":
      // Keep what we have of the part's text, then the new tail; a shorter copy than `keep` is stale.
      return updatePart(messages, change.message_id, change.part_id, (p) =>
        p.text.length < change.keep ? null : { ...p, text: p.text.slice(0, change.keep) + change.text },
      );
    default: {
      // A newer kernel may send ops this bundle doesn't know: skip them rather than break the view.
      const unknown: never = change;
      console.warn("hermes-notebook: unknown change record", unknown);
      return messages;
    }
  }
}

function updateMessage(
  messages: readonly Message[],
  messageId: string,
  update: (message: Message) => Message | null,
): readonly Message[] | null {
  const index = messages.findIndex((m) => m.id === messageId);
  const message = messages[index];
  if (message === undefined) return null;
  const next = update(message);
  return next === null ? null : replaceAt(messages, index, next);
}

function updatePart(
  messages: readonly Message[],
  messageId: string,
  partId: string,
  update: (part: Part) => Part | null,
): readonly Message[] | null {
  return updateMessage(messages, messageId, (message) => {
    const at = message.parts.findIndex((p) => p.id === partId);
    const part = message.parts[at];
    if (part === undefined) return null;
    const next = update(part);
    return next === null ? null : { ...message, parts: replaceAt(message.parts, at, next) };
  });
}

/**
 * Where a part made by an `append` came from: the part before it and the text added. A view that rendered an
 * earlier part of the same chain then renders only what was added, without reading the whole text (a streamed
 * text is a rope of small appends: comparing or scanning it copies all of it, on every batch).
 */
const grownFrom = new WeakMap<Part, { from: Part; text: string }>();

/**
 * The text appended to `earlier` to make `part`, when `part` came from it by `append` records alone; else null.
 * Taking it forgets the links walked, so a view's old copies of a long text are not kept alive by the chain.
 */
export function takeAppended(part: Part, earlier: Part): string | null {
  const pieces: string[] = [];
  const walked: Part[] = [];
  let current = part;
  while (current !== earlier) {
    const link = grownFrom.get(current);
    if (link === undefined) return null;
    pieces.push(link.text);
    walked.push(current);
    current = link.from;
  }
  for (const p of walked) grownFrom.delete(p);
  return pieces.reverse().join("");
}

/** The id of the message a change record is about. */
export function targetOf(change: WireChange): string {
  return change.op === "message" ? change.message.id : change.message_id;
}

function replaceAt<T>(items: readonly T[], index: number, item: T): T[] {
  const copy = items.slice();
  copy[index] = item;
  return copy;
}

/**
 * Reuse the previous object for every message that is deeply equal to its replacement, so a
 * snapshot re-renders only what actually differs.
 */
function keepIdentical(previous: readonly Message[], next: readonly Message[]): readonly Message[] {
  const byId = new Map(previous.map((m) => [m.id, m]));
  return next.map((message) => {
    const old = byId.get(message.id);
    if (old === undefined || old === message) return message;
    if (JSON.stringify(old) === JSON.stringify(message)) return old;
    const oldParts = new Map(old.parts.map((p) => [p.id, p]));
    const parts = message.parts.map((part) => {
      const prev = oldParts.get(part.id);
      return prev !== undefined && JSON.stringify(prev) === JSON.stringify(part) ? prev : part;
    });
    return { ...message, parts };
  });
}
