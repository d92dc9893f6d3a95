import { describe, expect, it, vi } from "vitest";

import {
  applyChanges,
  changeWeight,
  initialState,
  receiveChanges,
  receiveSnapshot,
  staleEntries,
  type SyncState,
} from "../src/chat/state";
import type { Change, Message } from "../src/types/turns";
import { indexEntry, interaction, message, part, textPart, toolPart, userMessage } from "./fixtures";

const A = "assistant:t1";

function synced(messages: Message[], seq = 0, revs: Record<string, number> = {}): SyncState {
  return receiveSnapshot(initialState(), seq, messages, revs);
}

describe("applyChanges", () => {
  it("adds a message, then parts, appends text and finishes", () => {
    const changes: Change[] = [
      { op: "message", message: message({ id: A }) },
      { op: "part", message_id: A, part: part({ id: "reasoning:0", kind: "reasoning" }) },
      { op: "append", message_id: A, part_id: "reasoning:0", text: "think" },
      { op: "part", message_id: A, part: toolPart("tool:c1") },
      { op: "patch", message_id: A, part_id: "tool:c1", fields: { status: "completed", result: "ok", duration: 0.5 } },
      { op: "part", message_id: A, part: textPart("text:1", "") },
      { op: "append", message_id: A, part_id: "text:1", text: "Hel" },
      { op: "append", message_id: A, part_id: "text:1", text: "lo" },
      { op: "finish", message_id: A, status: "complete", usage: { total_tokens: 12 }, error: null },
    ];
    const { messages, missed } = applyChanges([], changes);
    expect(missed).toBe(0);
    expect(messages).toHaveLength(1);
    const m = messages[0]!;
    expect(m.status).toBe("complete");
    expect(m.usage).toEqual({ total_tokens: 12 });
    expect(m.parts.map((p) => p.id)).toEqual(["reasoning:0", "tool:c1", "text:1"]);
    expect(m.parts[0]!.text).toBe("think");
    expect(m.parts[1]).toMatchObject({ status: "completed", result: "ok", duration: 0.5 });
    expect(m.parts[2]!.text).toBe("Hello");
  });

  it("replaces a message or a part with the same id in place", () => {
    const start = [userMessage("t0", "hi"), message({ id: A, parts: [textPart("text:0", "a"), toolPart("tool:x")] })];
    const { messages } = applyChanges(start, [
      { op: "part", message_id: A, part: textPart("text:0", "b") },
      { op: "message", message: userMessage("t0", "hello") },
    ]);
    expect(messages.map((m) => m.id)).toEqual(["user:t0", A]);
    expect(messages[0]!.parts[0]!.text).toBe("hello");
    expect(messages[1]!.parts.map((p) => [p.id, p.text])).toEqual([
      ["text:0", "b"],
      ["tool:x", ""],
    ]);
  });

  it("shares every object a change does not touch", () => {
    const user = userMessage("t0", "hi");
    const tool = toolPart("tool:x");
    const text = textPart("text:1", "a");
    const start = [user, message({ id: A, parts: [tool, text] })];
    const { messages } = applyChanges(start, [{ op: "append", message_id: A, part_id: "text:1", text: "b" }]);
    expect(messages[0]).toBe(user);
    expect(messages[1]).not.toBe(start[1]);
    expect(messages[1]!.parts[0]).toBe(tool);
    expect(messages[1]!.parts[1]!.text).toBe("ab");
    expect(text.text).toBe("a"); // inputs are never mutated
  });

  it("patches an interaction onto a tool part", () => {
    const start = [message({ id: A, parts: [toolPart("tool:x")] })];
    const ask = interaction({ kind: "approval", request_id: "approval-1", command: "rm -rf /tmp/x" });
    const { messages } = applyChanges(start, [{ op: "patch", message_id: A, part_id: "tool:x", fields: { interaction: ask } }]);
    expect(messages[0]!.parts[0]!.interaction).toEqual(ask);
  });

  it("counts records about unknown messages or parts instead of throwing", () => {
    const start = [message({ id: A, parts: [textPart("text:0", "")] })];
    const { messages, missed } = applyChanges(start, [
      { op: "append", message_id: "assistant:nope", part_id: "text:0", text: "x" },
      { op: "append", message_id: A, part_id: "text:9", text: "x" },
      { op: "patch", message_id: A, part_id: "tool:nope", fields: { status: "error" } },
      { op: "finish", message_id: "assistant:nope", status: "complete", usage: null, error: null },
      { op: "append", message_id: A, part_id: "text:0", text: "ok" },
    ]);
    expect(missed).toBe(4);
    expect(messages[0]!.parts[0]!.text).toBe("ok");
  });

  it("skips an op it doesn't know, with a warning", () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => undefined);
    const start = [message({ id: A })];
    const { messages, missed } = applyChanges(start, [{ op: "rewind", message_id: A } as unknown as Change]);
    expect(messages).toBe(start);
    expect(missed).toBe(0);
    expect(warn).toHaveBeenCalledOnce();
  });
});

describe("snapshot and seq", () => {
  const streaming = message({ id: A, parts: [textPart("text:0", "Hello")] });
  const append = (seq: number, text: string) => ({
    seq,
    changes: [{ op: "append", message_id: A, part_id: "text:0", text } as Change],
  });

  it("ignores batches whose seq is not above the snapshot's", () => {
    let state = synced([streaming], 5);
    state = receiveChanges(state, append(4, " old"));
    state = receiveChanges(state, append(5, " old"));
    state = receiveChanges(state, append(6, " world"));
    expect(state.messages[0]!.parts[0]!.text).toBe("Hello world");
    expect(state.seq).toBe(6);
    state = receiveChanges(state, append(6, " again"));
    expect(state.messages[0]!.parts[0]!.text).toBe("Hello world");
  });

  it("buffers batches that arrive before the snapshot answer and replays only newer ones, in seq order", () => {
    let state = initialState();
    expect(state.seq).toBeNull();
    // The view's snapshot request crossed with batches 3..6 in flight; they arrive first, 6 before 5.
    state = receiveChanges(state, append(3, " (in snapshot)"));
    state = receiveChanges(state, append(4, " (in snapshot)"));
    state = receiveChanges(state, append(6, "!"));
    state = receiveChanges(state, append(5, " world"));
    expect(state.buffer).toHaveLength(4);
    state = receiveSnapshot(state, 4, [streaming]);
    expect(state.seq).toBe(6);
    expect(state.buffer).toEqual([]);
    expect(state.messages[0]!.parts[0]!.text).toBe("Hello world!");
  });

  it("applies buffered batches provisionally while the snapshot is delayed", () => {
    let state = initialState([userMessage("t0", "shown before the snapshot")]);
    state = receiveChanges(state, { seq: 1, changes: [{ op: "message", message: message({ id: A, parts: [textPart("text:0", "")] }) }] });
    state = receiveChanges(state, append(2, "live"));
    expect(state.messages.map((m) => m.id)).toEqual(["user:t0", A]);
    expect(state.messages[1]!.parts[0]!.text).toBe("live");
    expect(state.seq).toBeNull();
  });

  it("a snapshot replaces the whole state", () => {
    let state = synced([userMessage("old", "gone"), streaming], 2);
    state = receiveSnapshot(state, 10, [userMessage("t9", "new")]);
    expect(state.messages.map((m) => m.id)).toEqual(["user:t9"]);
    expect(state.seq).toBe(10);
  });

  it("keeps the objects of messages a snapshot didn't change", () => {
    const user = userMessage("t0", "hi");
    let state = synced([user, streaming], 1);
    const before = state.messages;
    state = receiveSnapshot(state, 2, [structuredClone(user), message({ id: A, parts: [textPart("text:0", "Hello!")] })]);
    expect(state.messages[0]).toBe(before[0]);
    expect(state.messages[1]).not.toBe(before[1]);
  });

  it("counts misses only once synced", () => {
    const lost = { seq: 1, changes: [{ op: "append", message_id: "assistant:x", part_id: "text:0", text: "x" } as Change] };
    expect(receiveChanges(initialState(), lost).missed).toBe(0);
    expect(receiveChanges(synced([], 0), lost).missed).toBe(1);
  });
});

describe("revisions and the index", () => {
  const appendTo = (text: string): Change => ({ op: "append", message_id: A, part_id: "text:0", text });

  it("counts 1 per record and the UTF-16 length of appended text, whatever the coalescing", () => {
    const start: Change[] = [
      { op: "message", message: message({ id: A }) },
      { op: "part", message_id: A, part: textPart("text:0", "") },
    ];
    const deltas = ["Hel", "lo ", "wörld ", "🙂", ""];
    const apart = applyChanges([], [...start, ...deltas.map(appendTo)]);
    const merged = applyChanges([], [...start, appendTo(deltas.join(""))]);
    expect(apart.revs.get(A)).toBe(2 + 3 + 3 + 6 + 2);
    expect(merged.revs.get(A)).toBe(apart.revs.get(A));
    expect(changeWeight(appendTo("🙂"))).toBe(2); // one code point, two UTF-16 units: what Python counts too
    const finished = applyChanges(merged.messages, [{ op: "finish", message_id: A, status: "complete", usage: null, error: null }], merged.revs);
    expect(finished.revs.get(A)).toBe(17);
    expect(merged.revs.get(A)).toBe(16); // inputs are never mutated
  });

  it("applies a splice (a text patch sent without the text it keeps) and weighs it 1", () => {
    const start = [message({ id: A, parts: [textPart("text:0", "Hello wörld 🙂 \n\n")] })];
    const trimmed = applyChanges(start, [{ op: "splice", message_id: A, part_id: "text:0", keep: 14, text: "" }], new Map([[A, 5]]));
    expect(trimmed.messages[0]!.parts[0]!.text).toBe("Hello wörld 🙂");
    expect(trimmed.revs.get(A)).toBe(6);
    const extended = applyChanges(trimmed.messages, [{ op: "splice", message_id: A, part_id: "text:0", keep: 14, text: "!" }]);
    expect(extended.messages[0]!.parts[0]!.text).toBe("Hello wörld 🙂!");
    // A copy shorter than what the kernel keeps is stale: counted as a miss, so the view resyncs.
    const short = applyChanges([message({ id: A, parts: [textPart("text:0", "Hel")] })], [
      { op: "splice", message_id: A, part_id: "text:0", keep: 14, text: "" },
    ]);
    expect(short.missed).toBe(1);
    expect(short.messages[0]!.parts[0]!.text).toBe("Hel");
  });

  it("doesn't count records it could not apply", () => {
    const { revs, missed } = applyChanges([message({ id: A })], [appendTo("lost")], new Map([[A, 3]]));
    expect(missed).toBe(1);
    expect(revs.get(A)).toBe(3);
  });

  it("takes the kernel's revs from a snapshot and adds replayed batches on top", () => {
    let state = initialState();
    state = receiveChanges(state, { seq: 5, changes: [appendTo("in snapshot")] });
    state = receiveChanges(state, { seq: 6, changes: [appendTo("abc")] });
    state = receiveSnapshot(state, 5, [message({ id: A, parts: [textPart("text:0", "x")] })], { [A]: 40 });
    expect(state.revs.get(A)).toBe(43);
    expect(state.messages[0]!.parts[0]!.text).toBe("xabc");
  });

  it("lists settled index entries this copy lacks or holds at another rev or status", () => {
    const done = message({ id: A, status: "complete", parts: [textPart("text:0", "Hello")] });
    const live = message({ id: "assistant:t2", parts: [textPart("text:0", "typ")] });
    const state = synced([userMessage("t1", "q"), done, live], 3, { "user:t1": 1, [A]: 9, "assistant:t2": 4 });
    expect(staleEntries(state, [indexEntry(userMessage("t1", "q"), 1), indexEntry(done, 9), indexEntry(live, 1)])).toEqual([]);
    // A streaming message's entry is as old as the last boundary: never compared.
    expect(staleEntries(state, [indexEntry({ ...live, status: "streaming" }, 99)])).toEqual([]);
    const lacking = indexEntry(userMessage("t9", "elsewhere"), 1);
    const otherRev = indexEntry(done, 12);
    const otherStatus = indexEntry({ ...live, status: "interrupted" }, 4);
    expect(staleEntries(state, [lacking, indexEntry(done, 9), otherRev, otherStatus])).toEqual([lacking, otherRev, otherStatus]);
  });

  it("a late batch for a message the snapshot already holds complete changes nothing", () => {
    let state = initialState();
    // The view asked for a snapshot; the kernel flushed batch 8 (last delta + finish) before answering.
    const whole = message({ id: A, status: "complete", parts: [textPart("text:0", "Hello")] });
    state = receiveSnapshot(state, 8, [whole], { [A]: 8 });
    state = receiveChanges(state, {
      seq: 8,
      changes: [appendTo("llo"), { op: "finish", message_id: A, status: "complete", usage: null, error: null }],
    });
    state = receiveChanges(state, { seq: 7, changes: [appendTo("He")] });
    expect(state.messages[0]!.parts[0]!.text).toBe("Hello");
    expect(state.revs.get(A)).toBe(8);
    expect(staleEntries(state, [indexEntry(whole, 8)])).toEqual([]);
  });

  it("ignores a snapshot older than what it has applied", () => {
    let state = synced([message({ id: A, parts: [textPart("text:0", "new")] })], 9, { [A]: 3 });
    state = receiveSnapshot(state, 4, [message({ id: A, parts: [textPart("text:0", "old")] })], { [A]: 1 });
    expect(state.messages[0]!.parts[0]!.text).toBe("new");
    expect(state.seq).toBe(9);
  });

  it("a snapshot replaces a whole conversation (session switch), revs included", () => {
    let state = synced([userMessage("t1", "old session")], 1, { "user:t1": 1 });
    state = receiveSnapshot(state, 1, [userMessage("t7", "new session")], { "user:t7": 1 });
    expect(state.messages.map((m) => m.id)).toEqual(["user:t7"]);
    expect([...state.revs]).toEqual([["user:t7", 1]]);
  });
});
