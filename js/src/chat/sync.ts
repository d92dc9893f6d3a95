// The conversation as this view holds it, kept in step with the kernel (docs/architecture.md, "Widget comm
// protocol"): content comes only from `changes` (and their compact `more` form), `snapshot` and `older` messages,
// applied by the pure reducer in state.ts; index entries (what exists, settled, at which rev) ride in them and go to
// the stale index. Owns: the state, the one snapshot request in flight, the one older-page request in flight, the
// wire decoder. A view that missed something (a batch seq gap, a change about a message it lacks, a `more` it
// cannot place, a stale index entry) asks for a snapshot; the kernel sends every custom message to every view, so
// any snapshot answer (ours, another view's, a reset's) settles the request.

import type { ChatModel, KernelMsg, OlderMsg, SnapshotMsg } from "../types/chat";
import type { Messenger } from "../messenger";
import type { HistoryWindow } from "./history_window";
import { createStaleIndex, type StaleIndex } from "./stale_index";
import { awaitSnapshot, initialState, prependOlder, receiveChanges, receiveSnapshot, type SyncState } from "./state";
import { createWireDecoder } from "./wire";

export interface ConversationSync {
  readonly state: SyncState;
  /** Ask the kernel for a whole snapshot (at most one request in flight). */
  requestSnapshot(): void;
  /** Ask for the page before the oldest message held (at most one request in flight). */
  askOlder(): void;
  dispose(): void;
}

export interface SyncOptions {
  /** Which messages are rendered; told of snapshots and older pages. */
  window: HistoryWindow;
  /** The state changed: render again. */
  changed(): void;
  /** The first content from a kernel arrived (the static transcript beside the view can go). */
  live(): void;
  /** Debounce of the stale-index check, in ms. */
  staleDelay?: number;
}

export function createConversationSync(model: ChatModel, messenger: Messenger, options: SyncOptions): ConversationSync {
  let state: SyncState = initialState();
  let inFlight = false;
  let olderInFlight = false;
  const wire = createWireDecoder();
  const requestSnapshot = (): void => {
    if (inFlight) return;
    inFlight = true;
    state = awaitSnapshot(state);
    messenger.command({ type: "snapshot" });
  };
  const index: StaleIndex = createStaleIndex(
    { state: () => state, waiting: () => inFlight, settledSeq: () => model.get("settled_seq") ?? 0, resync: requestSnapshot },
    options.staleDelay,
  );

  const receiveSnapshotMsg = (msg: SnapshotMsg): boolean => {
    // Another view's first answer, only the newest messages: this view, not waiting, holds them already.
    if (msg.partial === true && msg.reset !== true && !inFlight && state.seq !== null) return false;
    inFlight = false;
    state = receiveSnapshot(state, msg.seq, msg.messages, msg.revs);
    index.replace(msg.messages, (id) => msg.revs?.[id] ?? state.revs.get(id) ?? 0);
    options.live();
    const older = msg.partial === true && typeof msg.older === "number" ? Math.max(0, msg.older) : 0;
    options.window.snapshotArrived(older, msg.reset === true);
    return true;
  };
  const receiveOlder = (msg: OlderMsg): boolean => {
    olderInFlight = false;
    const next = prependOlder(state, msg.seq, msg.before, msg.messages, msg.revs);
    // A page that no longer fits is dropped; a resync's snapshot (or the reader's next scroll) asks again.
    if (next === null) return false;
    state = next;
    index.add(msg.messages, (id) => msg.revs[id] ?? 0);
    options.window.olderArrived(Math.max(0, msg.older));
    return true;
  };
  const receive = (msg: KernelMsg): boolean => {
    if (msg.type === "changes") {
      // Batches go to every view with consecutive seqs: a gap means one was lost.
      const gap = state.seq !== null && msg.seq > state.seq + 1;
      state = receiveChanges(state, { seq: msg.seq, changes: msg.changes });
      // A change about a message we don't have means we missed something: resync.
      if ((state.missed > 0 || gap) && state.seq !== null) requestSnapshot();
      index.receive(msg.index);
      return true;
    }
    if (msg.type === "index") index.receive(msg.index);
    else if (msg.type === "snapshot") return receiveSnapshotMsg(msg);
    else if (msg.type === "older") return receiveOlder(msg);
    return false;
  };
  // Replies that show the kernel handled a command (where the front end reports no kernel status for it).
  const acknowledge = (msg: KernelMsg): void => {
    if (msg.type === "changes") {
      for (const change of msg.changes) {
        if (change.op !== "message" || change.message.role !== "user") continue;
        const text = change.message.parts[0]?.text ?? "";
        messenger.answered("send", (sent) => sent.text === text);
        messenger.answered("send_files", (sent) => typeof sent.text === "string" && text.startsWith(sent.text));
      }
    } else if (msg.type === "snapshot") {
      if (msg.reset !== true) messenger.answered("snapshot"); // a reset's snapshot answers no request
    } else if (msg.type === "older") {
      messenger.answered("older");
    }
  };
  messenger.listen("msg:custom", (received: KernelMsg | null) => {
    let msg: KernelMsg | null = received;
    if (msg?.type === "more") {
      msg = wire.expand(msg);
      // Its part was named in a batch this view never got: rebuild from a snapshot (unless one is due anyway).
      if (msg === null && state.seq !== null) requestSnapshot();
      if (msg === null) return;
    }
    if (msg === null || typeof msg !== "object") return;
    wire.seen(msg);
    acknowledge(msg);
    if (receive(msg)) options.changed();
  });
  messenger.listen("change:settled_seq", () => index.schedule());

  return {
    get state() {
      return state;
    },
    requestSnapshot,
    askOlder() {
      const first = state.messages[0];
      if (olderInFlight || state.seq === null || first === undefined) return;
      olderInFlight = true;
      messenger.command({ type: "older", before: first.id });
    },
    dispose() {
      index.dispose();
    },
  };
}
