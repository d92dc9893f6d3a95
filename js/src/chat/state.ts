// Python-synced transcript state, as a pure reducer (no DOM, no model).
//
// Two inputs feed it (docs/architecture.md, "Widget comm protocol"):
// - `changes` batches `{seq, changes}`: change records applied in order;
// - the `snapshot` answer `{seq, messages}`: replaces everything, after which only batches with a
//   larger `seq` apply.
// Until the first snapshot answer arrives, batches are buffered for replay on top of it, and also
// applied provisionally so a view stays live while the kernel's shell channel is busy (a blocking
// cell delays the snapshot answer but not the change stream).
//
// The `messages` traitlet (finished messages) is authoritative for the finished ids it holds. Traitlet updates
// and coalesced change batches travel separately, so a batch may arrive after the traitlet already
// carries the finished message; change records for those ids are therefore dropped, never re-applied.
//
// Structural sharing: a change replaces only the message and part objects it touches. Views compare
// by identity to re-render exactly what changed.

import type { Change, Message, Part } from "../types";

export interface Batch {
  seq: number;
  changes: Change[];
}

export interface SyncState {
  /** seq of the snapshot (and batches) applied so far; null while waiting for a snapshot answer */
  seq: number | null;
  messages: readonly Message[];
  /** batches received while waiting, replayed on top of the snapshot */
  buffer: Batch[];
  /** changes that referred to a message or part we don't have (a resync is due) */
  missed: number;
  /** ids of the finished messages in the `messages` traitlet; changes to them are dropped */
  finalized: ReadonlySet<string>;
}

export function initialState(messages: readonly Message[] = []): SyncState {
  return { seq: null, messages, buffer: [], missed: 0, finalized: finishedIds(messages) };
}

const TERMINAL = new Set<Message["status"]>(["complete", "interrupted", "error", "cancelled"]);

/** Ids of the messages that can't change any more (the traitlet may also hold queued user prompts). */
function finishedIds(messages: readonly Message[]): ReadonlySet<string> {
  return new Set(messages.filter((m) => TERMINAL.has(m.status)).map((m) => m.id));
}

/** A batch of change records arrived. */
export function receiveChanges(state: SyncState, batch: Batch): SyncState {
  batch = { seq: batch.seq, changes: batch.changes.filter((c) => !state.finalized.has(targetOf(c))) };
  if (state.seq === null) {
    const applied = applyChanges(state.messages, batch.changes);
    // Misses while waiting don't count: the snapshot will bring the missing messages.
    return { ...state, messages: applied.messages, buffer: [...state.buffer, batch] };
  }
  if (batch.seq <= state.seq) return state; // already contained in the snapshot
  const applied = applyChanges(state.messages, batch.changes);
  return { ...state, seq: batch.seq, messages: applied.messages, missed: state.missed + applied.missed };
}

/** The snapshot answer arrived: replace the state, then replay newer buffered batches in seq order. */
export function receiveSnapshot(state: SyncState, seq: number, messages: readonly Message[]): SyncState {
  const newer = state.buffer.filter((b) => b.seq > seq).sort((a, b) => a.seq - b.seq);
  // A finished message from the traitlet beats an older copy in the snapshot.
  const known = new Map(state.messages.map((m) => [m.id, m]));
  let current: readonly Message[] = messages.map((m) =>
    state.finalized.has(m.id) ? (known.get(m.id) ?? m) : m,
  );
  let last = seq;
  let missed = 0;
  for (const batch of newer) {
    const applied = applyChanges(current, batch.changes);
    current = applied.messages;
    missed += applied.missed;
    last = batch.seq;
  }
  return { ...state, seq: last, messages: keepIdentical(state.messages, current), buffer: [], missed };
}

/** Start waiting for a fresh snapshot answer (e.g. after a resync request). */
export function awaitSnapshot(state: SyncState): SyncState {
  return { ...state, seq: null, buffer: [], missed: 0 };
}

/**
 * The `messages` traitlet changed (a message boundary). It holds the finished messages, which are
 * authoritative; live messages (streaming/queued) that it doesn't contain yet stay, after them.
 */
export function receiveFinished(state: SyncState, finished: readonly Message[]): SyncState {
  const ids = new Set(finished.map((m) => m.id));
  const live = state.messages.filter(
    (m) => !ids.has(m.id) && (m.status === "streaming" || m.status === "queued"),
  );
  return { ...state, messages: keepIdentical(state.messages, [...finished, ...live]), finalized: finishedIds(finished) };
}

export interface Applied {
  messages: readonly Message[];
  missed: number;
}

/** Apply change records in order. Records about unknown messages/parts are counted, not thrown. */
export function applyChanges(messages: readonly Message[], changes: readonly Change[]): Applied {
  let current = messages;
  let missed = 0;
  for (const change of changes) {
    const next = applyChange(current, change);
    if (next === null) missed += 1;
    else current = next;
  }
  return { messages: current, missed };
}

/** Apply one change record; null when it refers to a message or part that isn't there. */
export function applyChange(messages: readonly Message[], change: Change): readonly Message[] | null {
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
      return updatePart(messages, change.message_id, change.part_id, (p) => ({ ...p, text: p.text + change.text }));
    case "patch":
      return updatePart(messages, change.message_id, change.part_id, (p) => ({ ...p, ...change.fields }));
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
  update: (part: Part) => Part,
): readonly Message[] | null {
  return updateMessage(messages, messageId, (message) => {
    const at = message.parts.findIndex((p) => p.id === partId);
    const part = message.parts[at];
    if (part === undefined) return null;
    return { ...message, parts: replaceAt(message.parts, at, update(part)) };
  });
}

/** The id of the message a change record is about. */
export function targetOf(change: Change): string {
  return change.op === "message" ? change.message.id : change.message_id;
}

function replaceAt<T>(items: readonly T[], index: number, item: T): T[] {
  const copy = items.slice();
  copy[index] = item;
  return copy;
}

/**
 * Reuse the previous object for every message that is deeply equal to its replacement, so a
 * snapshot or traitlet rebuild re-renders only what actually differs.
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
