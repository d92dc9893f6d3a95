// The short wire form of a streaming batch (docs/architecture.md, "Widget comm protocol").
//
// While a reply streams, nearly every batch is one `append` to the part the previous batch ended appending to;
// the kernel sends it as `{type: "more", seq, text}` (ids and keys would cost about a third of the text again).
// This decoder remembers where the last batch ended appending, and turns `more` back into the `changes` batch it
// stands for. It places a `more` only right after the batch that named the part (consecutive seqs): after a lost
// batch, a snapshot, or in a view that started mid-run, it says so (null), and the view resyncs from a snapshot.

import type { KernelMsg } from "../types/chat";

type ChangesMsg = Extract<KernelMsg, { type: "changes" }>;
type MoreMsg = Extract<KernelMsg, { type: "more" }>;

export interface WireDecoder {
  /** The `changes` batch a `more` stands for; null when it can't be placed (the view should resync). */
  expand(msg: MoreMsg): ChangesMsg | null;
  /** Note a batch (or a snapshot) as received, so the next `more` is placed after it. */
  seen(msg: KernelMsg): void;
}

export function createWireDecoder(): WireDecoder {
  let target: { seq: number; message_id: string; part_id: string } | null = null;
  return {
    expand(msg) {
      if (target === null || msg.seq !== target.seq + 1 || typeof msg.text !== "string") return null;
      const { message_id, part_id } = target;
      return { type: "changes", seq: msg.seq, changes: [{ op: "append", message_id, part_id, text: msg.text }] };
    },
    seen(msg) {
      if (msg.type === "snapshot") {
        target = null; // the kernel names the part again after every snapshot
      } else if (msg.type === "changes") {
        const last = msg.changes[msg.changes.length - 1];
        target = last?.op === "append" ? { seq: msg.seq, message_id: last.message_id, part_id: last.part_id } : null;
      }
    },
  };
}
