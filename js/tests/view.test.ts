import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";

import chat from "../src/chat";
import { createChatView, sessionLabel } from "../src/chat/view";
import type { Change, Message } from "../src/types/turns";

import type { ChatState } from "../src/types/chat";
import { FakeModel } from "./fake-model";
import { chatState, indexEntry, message, part, textPart, toolPart, userMessage } from "./fixtures";

const A = "assistant:t1";

/** A scheduler the test drives: frames run only when the test says so. */
function manualFrames() {
  const queue: (() => void)[] = [];
  return {
    schedule: (callback: () => void) => {
      queue.push(callback);
      return () => {
        const i = queue.indexOf(callback);
        if (i >= 0) queue.splice(i, 1);
      };
    },
    pending: () => queue.length,
    run() {
      for (const callback of queue.splice(0)) callback();
    },
  };
}

function setup(state: Partial<ChatState> = {}) {
  const model = new FakeModel<ChatState>(chatState(state));
  const host = document.createElement("div");
  document.body.append(host);
  const frames = manualFrames();
  const view = createChatView(model, host, { schedule: frames.schedule });
  const changes = (seq: number, ...records: Change[]) => {
    model.kernelSend({ type: "changes", seq, changes: records });
  };
  const snapshot = (seq: number, messages: Message[], revs: Record<string, number> = {}) =>
    model.kernelSend({ type: "snapshot", seq, messages, revs });
  const $ = <E extends Element = HTMLElement>(selector: string) => host.querySelector<E>(selector);
  const $$ = (selector: string) => Array.from(host.querySelectorAll<HTMLElement>(selector));
  return { model, host, frames, view, changes, snapshot, $, $$ };
}

afterEach(() => {
  document.body.replaceChildren();
});

describe("render and snapshot", () => {
  it("asks for a snapshot at once; the index alone shows no content", () => {
    const { model, $$ } = setup();
    expect($$(".hn-message")).toEqual([]);
    expect(model.sent).toEqual([{ type: "snapshot" }, { type: "list_sessions", request: expect.any(String) }, { type: "profiles", request: expect.any(String) }, { type: "subagent_controls", request: expect.any(String) }]);
  });

  it("marks itself live only once a kernel answered, so saved widget state keeps the static transcript", () => {
    const { snapshot, $ } = setup();
    expect($(".hn-chat")!.dataset.live).toBeUndefined();
    snapshot(1, [userMessage("t1", "q")]);
    expect($(".hn-chat")!.dataset.live).toBe("true");
  });

  it("rebuilds from the snapshot answer", () => {
    const { frames, snapshot, $$ } = setup();
    snapshot(3, [userMessage("t1", "q"), message({ id: A, parts: [textPart("text:0", "streaming **now**")] })]);
    expect(frames.pending()).toBe(1);
    frames.run();
    expect($$(".hn-message").map((m) => m.dataset.messageId)).toEqual(["user:t1", A]);
    expect($$(".hn-part[data-kind=text] strong").map((s) => s.textContent)).toEqual(["now"]);
  });

  it("recovers a view created mid-stream: snapshot, then only newer deltas", () => {
    const { frames, changes, snapshot, $ } = setup();
    // Deltas already in flight before the snapshot answer; the first two are part of the snapshot.
    changes(7, { op: "append", message_id: A, part_id: "text:0", text: "Hel" });
    changes(8, { op: "append", message_id: A, part_id: "text:0", text: "lo" });
    snapshot(8, [userMessage("t1", "q"), message({ id: A, parts: [textPart("text:0", "Hello")] })]);
    changes(8, { op: "append", message_id: A, part_id: "text:0", text: " (duplicate)" });
    changes(9, { op: "append", message_id: A, part_id: "text:0", text: " world" });
    changes(10, { op: "finish", message_id: A, status: "complete", usage: { input_tokens: 1200, output_tokens: 34 }, error: null });
    frames.run();
    const m = $(`.hn-message[data-message-id="${A}"]`)!;
    expect(m.querySelector(".hn-part[data-part-id='text:0']")!.textContent!.trim()).toBe("Hello world");
    expect(m.dataset.status).toBe("complete");
    expect(m.querySelector(".hn-usage")!.textContent).toBe("1,200 in · 34 out tokens");
    expect(m.querySelector(".hn-usage")!.hasAttribute("title")).toBe(false);
  });

  it("asks for a new snapshot when a change refers to something it doesn't have", () => {
    const { model, snapshot, changes } = setup();
    snapshot(1, []);
    model.sent.length = 0;
    changes(2, { op: "append", message_id: "assistant:lost", part_id: "text:0", text: "x" });
    expect(model.sent).toEqual([{ type: "snapshot" }]);
  });
});

describe("index entries and stale copies", () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  const done = (text: string) => message({ id: A, status: "complete", parts: [textPart("text:0", text)] });
  const stream = (changes: (seq: number, ...records: Change[]) => void) => {
    changes(1, { op: "message", message: message({ id: A }) }, { op: "part", message_id: A, part: textPart("text:0", "") });
    changes(2, { op: "append", message_id: A, part_id: "text:0", text: "Hel" }, { op: "append", message_id: A, part_id: "text:0", text: "lo" });
    changes(3, { op: "finish", message_id: A, status: "complete", usage: null, error: null });
  };

  it("a finished message that arrived through changes is not asked for again", () => {
    const { model, frames, snapshot, changes, $ } = setup();
    snapshot(0, []);
    stream(changes);
    model.kernelSend({ type: "index", index: [indexEntry(done("Hello"), 2 + 5 + 1)] });
    vi.advanceTimersByTime(1000);
    expect(model.sentOfType("snapshot")).toHaveLength(1); // only the one at creation
    frames.run();
    expect($(`.hn-message[data-message-id="${A}"]`)!.dataset.status).toBe("complete");
  });

  it("a stale rev triggers exactly one snapshot request, debounced", () => {
    const { model, frames, snapshot, changes, $ } = setup();
    snapshot(0, []);
    stream(changes);
    // The kernel's copy went further than what reached this view (rev 9, ours is 8).
    model.kernelSend({ type: "index", index: [indexEntry(done("Hello!"), 9)] });
    model.kernelSend({ type: "index", index: [indexEntry(done("Hello!"), 9)] });
    expect(model.sentOfType("snapshot")).toHaveLength(1);
    vi.advanceTimersByTime(200);
    expect(model.sentOfType("snapshot")).toHaveLength(2);
    // While that request is in flight, more index updates don't add requests.
    model.kernelSend({ type: "index", index: [indexEntry(done("Hello!"), 9), indexEntry(userMessage("t2", "next"), 1)] });
    vi.advanceTimersByTime(1000);
    expect(model.sentOfType("snapshot")).toHaveLength(2);
    snapshot(3, [done("Hello!"), userMessage("t2", "next")], { [A]: 9, "user:t2": 1 });
    vi.advanceTimersByTime(1000);
    expect(model.sentOfType("snapshot")).toHaveLength(2);
    frames.run();
    expect($(`.hn-message[data-message-id="${A}"]`)!.textContent).toContain("Hello!");
  });

  it("a finished message the view lacks triggers one request; one that a snapshot can't fix is not asked for in a loop", () => {
    const { model, snapshot } = setup();
    snapshot(0, []);
    model.kernelSend({ type: "index", index: [indexEntry(userMessage("t1", "q"), 1)] });
    vi.advanceTimersByTime(200);
    expect(model.sentOfType("snapshot")).toHaveLength(2);
    snapshot(0, [userMessage("t1", "q")], { "user:t1": 7 }); // disagrees with the index (a kernel bug)
    vi.advanceTimersByTime(1000);
    model.kernelSend({ type: "index", index: [indexEntry(userMessage("t1", "q"), 1)] });
    vi.advanceTimersByTime(1000);
    expect(model.sentOfType("snapshot")).toHaveLength(2);
  });

  it("a late batch after the snapshot does not duplicate text", () => {
    const { model, frames, snapshot, changes, $ } = setup();
    // Reload: the index says A is complete; the kernel flushed batch 3 before answering with seq 3.
    snapshot(3, [done("Hello")], { [A]: 8 });
    changes(3, { op: "append", message_id: A, part_id: "text:0", text: "lo" }, { op: "finish", message_id: A, status: "complete", usage: null, error: null });
    changes(2, { op: "append", message_id: A, part_id: "text:0", text: "Hel" });
    vi.advanceTimersByTime(1000);
    frames.run();
    expect($(`.hn-part[data-part-id="text:0"]`)!.textContent!.trim()).toBe("Hello");
    expect(model.sentOfType("snapshot")).toHaveLength(1);
  });

  it("a reset (session switch) arrives as one snapshot and replaces the conversation", () => {
    const { model, frames, snapshot, $$ } = setup();
    snapshot(2, [userMessage("t1", "old session"), done("old answer")], { "user:t1": 1, [A]: 1 });
    frames.run();
    // reset(): the kernel sends the new content once as a snapshot, then the index follows.
    snapshot(2, [userMessage("t7", "new session")], { "user:t7": 1 });
    model.kernelSend({ type: "index", index: [indexEntry(userMessage("t7", "new session"), 1)] });
    vi.advanceTimersByTime(1000);
    frames.run();
    expect($$(".hn-message").map((m) => m.dataset.messageId)).toEqual(["user:t7"]);
    expect(model.sentOfType("snapshot")).toHaveLength(1);
  });

  it("index entries riding in a batch are checked like the others", () => {
    const { model, snapshot, changes } = setup();
    snapshot(0, []);
    model.sent.length = 0;
    changes(1, { op: "message", message: userMessage("t1", "q") });
    model.kernelSend({ type: "changes", seq: 2, changes: [], index: [indexEntry(userMessage("t1", "q"), 1), indexEntry(done("x"), 3)] });
    vi.advanceTimersByTime(1000);
    expect(model.sentOfType("snapshot")).toHaveLength(1); // user:t1 matches; the assistant message is missing
  });

  it("a gap in batch seqs (a lost batch) triggers a snapshot request", () => {
    const { model, snapshot, changes } = setup();
    snapshot(0, [userMessage("t1", "q")], { "user:t1": 1 });
    changes(1, { op: "message", message: message({ id: A }) });
    expect(model.sentOfType("snapshot")).toHaveLength(1);
    changes(3, { op: "finish", message_id: A, status: "complete", usage: null, error: null });
    expect(model.sentOfType("snapshot")).toHaveLength(2);
  });

  it("settled_seq ahead of what arrived (the last batch was lost) triggers one snapshot request", () => {
    const { model, snapshot } = setup();
    snapshot(4, [userMessage("t1", "q")], { "user:t1": 1 });
    model.kernelSet("settled_seq", 4);
    vi.advanceTimersByTime(1000);
    expect(model.sentOfType("snapshot")).toHaveLength(1);
    model.kernelSet("settled_seq", 5);
    vi.advanceTimersByTime(1000);
    expect(model.sentOfType("snapshot")).toHaveLength(2);
    snapshot(4, [userMessage("t1", "q")], { "user:t1": 1 }); // can't fix it: asked once, not in a loop
    vi.advanceTimersByTime(1000);
    expect(model.sentOfType("snapshot")).toHaveLength(2);
  });

  it("dispose cancels a pending stale check", () => {
    const { model, view, snapshot } = setup();
    snapshot(0, []);
    model.kernelSend({ type: "index", index: [indexEntry(userMessage("t1", "q"), 1)] });
    view.dispose();
    expect(vi.getTimerCount()).toBe(0);
  });
});

describe("the short `more` batch", () => {
  const more = (model: FakeModel<ChatState>, seq: number, text: string) => model.kernelSend({ type: "more", seq, text });

  it("appends to the part the previous batch ended appending to, so the text reads the same", () => {
    const { model, frames, changes, snapshot, $ } = setup();
    snapshot(1, [message({ id: A, parts: [textPart("text:0", ""), textPart("text:1", "")] })]);
    changes(2, { op: "append", message_id: A, part_id: "text:1", text: "Hello" });
    more(model, 3, ", wor");
    more(model, 4, "ld");
    frames.run();
    expect($(".hn-part[data-part-id='text:1']")!.textContent!.trim()).toBe("Hello, world");
    expect($(".hn-part[data-part-id='text:0']")!.textContent!.trim()).toBe("");
    expect(model.sentOfType("snapshot")).toHaveLength(1); // only the first request: every batch was placed
  });

  it("after a lost batch, a snapshot, or a batch not ending in an append, it is not placed: the view resyncs", () => {
    const { model, frames, changes, snapshot, $ } = setup();
    snapshot(1, [message({ id: A, parts: [textPart("text:0", "")] })]);
    changes(2, { op: "append", message_id: A, part_id: "text:0", text: "a" });
    more(model, 4, "lost-3"); // seq 3 never came: nothing to follow
    expect(model.sentOfType("snapshot")).toHaveLength(2);
    snapshot(4, [message({ id: A, parts: [textPart("text:0", "a+b")] })], { [A]: 3 });
    more(model, 5, "after-snapshot"); // the kernel names the part again after every snapshot
    expect(model.sentOfType("snapshot")).toHaveLength(3);
    snapshot(5, [message({ id: A, parts: [textPart("text:0", "a+b")] })], { [A]: 3 });
    changes(6, { op: "finish", message_id: A, status: "complete", usage: null, error: null });
    more(model, 7, "after-finish");
    expect(model.sentOfType("snapshot")).toHaveLength(4);
    frames.run();
    expect($(".hn-part[data-part-id='text:0']")!.textContent).not.toContain("lost-3");
    expect($(".hn-part[data-part-id='text:0']")!.textContent).not.toContain("after-");
  });

  it("a view still waiting for its first snapshot drops one it cannot place (the snapshot holds it)", () => {
    const { model, frames, snapshot, $ } = setup();
    more(model, 6, " tail"); // sent before this view existed's snapshot answer
    expect(model.sentOfType("snapshot")).toHaveLength(1);
    snapshot(6, [message({ id: A, parts: [textPart("text:0", "head tail")] })]);
    frames.run();
    expect($(".hn-part[data-part-id='text:0']")!.textContent!.trim()).toBe("head tail");
  });
});

describe("incremental rendering", () => {
  it("renders many coalesced appends once per frame and leaves other parts' DOM alone", () => {
    const { frames, changes, snapshot, $ } = setup();
    snapshot(0, [
      userMessage("t1", "q"),
      message({
        id: A,
        parts: [
          part({ id: "reasoning:0", kind: "reasoning", text: "thinking" }),
          toolPart("tool:c1", { status: "completed", result: "ok" }),
          textPart("text:1", ""),
        ],
      }),
    ]);
    frames.run();
    const before = {
      user: $(".hn-message[data-message-id='user:t1']"),
      reasoning: $(".hn-part[data-part-id='reasoning:0']"),
      reasoningDetails: $(".hn-reasoning"),
      tool: $(".hn-part[data-part-id='tool:c1']"),
      toolCard: $(".hn-tool"),
      toolName: $(".hn-tool-name"),
      text: $(".hn-part[data-part-id='text:1']"),
    };
    const words = Array.from({ length: 200 }, (_, i) => `w${i} `);
    let seq = 1;
    for (let i = 0; i < words.length; i += 10) {
      changes(
        seq++,
        ...words.slice(i, i + 10).map((text): Change => ({ op: "append", message_id: A, part_id: "text:1", text })),
      );
    }
    expect(frames.pending()).toBe(1); // 20 batches, one scheduled frame
    frames.run();
    expect($(".hn-part[data-part-id='text:1']")!.textContent!.trim()).toBe(words.join("").trim());
    expect($(".hn-message[data-message-id='user:t1']")).toBe(before.user);
    expect($(".hn-part[data-part-id='reasoning:0']")).toBe(before.reasoning);
    expect($(".hn-reasoning")).toBe(before.reasoningDetails);
    expect($(".hn-part[data-part-id='tool:c1']")).toBe(before.tool);
    expect($(".hn-tool")).toBe(before.toolCard);
    expect($(".hn-tool-name")).toBe(before.toolName);
    expect($(".hn-part[data-part-id='text:1']")).toBe(before.text);
  });

  it("throttles to requestAnimationFrame by default", () => {
    vi.useFakeTimers({ toFake: ["requestAnimationFrame", "cancelAnimationFrame", "setTimeout", "setInterval"] });
    try {
      const model = new FakeModel<ChatState>(chatState());
      const host = document.createElement("div");
      const view = chat.render({ model, el: host });
      model.kernelSend({ type: "snapshot", seq: 0, messages: [message({ id: A, parts: [textPart("text:0", "")] })] });
      model.kernelSend({ type: "changes", seq: 1, changes: [{ op: "append", message_id: A, part_id: "text:0", text: "hi" }] });
      expect(host.querySelector(".hn-part")).toBeNull();
      vi.advanceTimersToNextFrame();
      expect(host.querySelector(".hn-part")!.textContent!.trim()).toBe("hi");
      view();
    } finally {
      vi.useRealTimers();
    }
  });

  it("patches a tool card in place through its statuses", () => {
    const { frames, changes, snapshot, $ } = setup();
    snapshot(0, [message({ id: A, parts: [toolPart("tool:c1", { name: "terminal", preview: "ls -la" })] })]);
    frames.run();
    const card = $(".hn-tool")!;
    expect(card.dataset.status).toBe("running");
    expect($(".hn-tool-preview")!.textContent).toBe("ls -la");
    changes(1, { op: "patch", message_id: A, part_id: "tool:c1", fields: { status: "error", result: "boom", duration: 1.25 } });
    frames.run();
    expect($(".hn-tool")).toBe(card);
    expect(card.dataset.status).toBe("error");
    expect($(".hn-tool-status")!.textContent).toBe("Error");
    expect($(".hn-tool-duration")!.textContent).toBe("1.3 s");
  });
});

describe("scroll-follow", () => {
  it("scrolls the notebook to new output only while the reader is at the chat's end; the chat itself never scrolls", () => {
    const { frames, changes, snapshot, $, host } = setup();
    // The notebook panel scrolls (jsdom has no layout: geometry is given here, in the panel's viewport 0-600).
    let end = 1000; // where the chat (its composer) ends, in the panel's content
    const panel = document.createElement("div");
    panel.style.overflowY = "auto";
    Object.defineProperty(panel, "clientHeight", { configurable: true, get: () => 600 });
    Object.defineProperty(panel, "scrollHeight", { configurable: true, get: () => end + 100 });
    host.before(panel);
    panel.append(host);
    const composer = $(".hn-composer")!;
    const box = (top: number, bottom: number) => ({ top, bottom, left: 0, right: 0, width: 0, height: bottom - top, x: 0, y: top, toJSON() {} }) as DOMRect;
    panel.getBoundingClientRect = () => box(0, 600);
    composer.getBoundingClientRect = () => box(end - 100 - panel.scrollTop, end - panel.scrollTop);
    composer.getClientRects = () => [box(0, 100)] as unknown as DOMRectList;
    snapshot(0, [message({ id: A, parts: [textPart("text:0", "")] })]);
    frames.run();
    expect(panel.scrollTop).toBe(400); // followed: the composer's bottom sits on the view's
    expect(getComputedStyle($(".hn-messages")!).overflowY).not.toBe("auto");

    // The reader scrolls up to read: new output must not move the view.
    panel.scrollTop = 100;
    panel.dispatchEvent(new Event("scroll"));
    end = 1500;
    changes(1, { op: "append", message_id: A, part_id: "text:0", text: "more" });
    frames.run();
    expect(panel.scrollTop).toBe(100);

    // Back near the end (within the threshold): following resumes.
    panel.scrollTop = 1500 - 600 - 20;
    panel.dispatchEvent(new Event("scroll"));
    end = 2000;
    changes(2, { op: "append", message_id: A, part_id: "text:0", text: " and more" });
    frames.run();
    expect(panel.scrollTop).toBe(1400);
  });
});

describe("header, banner and composer wiring", () => {
  it("lists sessions and sends switch_session / new_session / refresh", () => {
    const { model, $ } = setup({ session: { id: "s2", title: "Second" } });
    expect(model.sent.slice(0, 2)).toEqual([{ type: "snapshot" }, { type: "list_sessions", request: expect.any(String) }]);
    model.kernelSend({ type: "sessions", sessions: [{ id: "s1", title: "First" }, { id: "s2", title: "Second" }] });
    model.sent.length = 0;
    expect($(".hn-title")!.textContent).toBe("Second");
    const picker = $<HTMLSelectElement>("select.hn-session-picker")!;
    expect(picker.value).toBe("s2");
    picker.value = "s1";
    picker.dispatchEvent(new Event("change"));
    $(".hn-new-session")!.click();
    $(".hn-refresh")!.click();
    expect(model.sent).toEqual([
      { type: "switch_session", session_id: "s1" },
      { type: "new_session" },
      { type: "refresh" },
    ]);
    model.kernelSet("session", { id: "s3", title: "Third" });
    expect($(".hn-title")!.textContent).toBe("Third");
    expect(Array.from(picker.options).map((o) => o.value)).toEqual(["s3", "s1", "s2"]);
  });

  it("asks for the session list when the picker opens, and keeps it out of the widget state", () => {
    const { model, $ } = setup({ session: { id: "s1", title: "First" } });
    const picker = $<HTMLSelectElement>("select.hn-session-picker")!;
    picker.dispatchEvent(new Event("focus"));
    expect(model.sentOfType("list_sessions")).toHaveLength(1); // the first request is still unanswered
    model.kernelSend({ type: "sessions", sessions: [{ id: "s1", title: "First" }, { id: "s9", title: "Other" }] });
    expect(Array.from(picker.options).map((o) => o.textContent)).toEqual(["First", "Other"]);
    picker.dispatchEvent(new Event("focus"));
    picker.dispatchEvent(new Event("pointerdown"));
    expect(model.sentOfType("list_sessions")).toHaveLength(2); // opened again: one fresh request for both events
    expect(Object.keys(model.state)).not.toContain("sessions");
    expect(model.writes).toEqual([]);
  });

  it("labels sessions by title, else their first prompt, never by a stored id", () => {
    const { model, $ } = setup({ session: { id: "20261203_081500_ab12cd", title: null } });
    model.kernelSend({
      type: "sessions",
      sessions: [
        { id: "20261203_081500_ab12cd", title: null, preview: "RUN ls -la in the   project folder" },
        { id: "20261202_101010_ffffff", title: "Yesterday's digest", preview: "Summarise" },
        { id: "20261201_090000_eeeeee", title: null, preview: null },
      ],
    });
    const picker = $<HTMLSelectElement>("select.hn-session-picker")!;
    const labels = () => Array.from(picker.options).map((o) => o.textContent);
    expect(labels()).toEqual(["RUN ls -la in the project folder", "Yesterday's digest", "New session"]);
    expect(Array.from(picker.options).map((o) => o.title)).toEqual([
      "20261203_081500_ab12cd",
      "20261202_101010_ffffff",
      "20261201_090000_eeeeee",
    ]);
    // A brand-new session that is not listed yet has neither title nor preview.
    model.kernelSet("session", { id: "20261203_090000_aaaaaa", title: null });
    expect(labels()[0]).toBe("New session");
    expect(labels().join(" ")).not.toContain("2026");
    expect(sessionLabel({ id: "x", title: "t".repeat(80) })).toBe(`${"t".repeat(59)}…`);
  });

  it("Esc stops a running turn from the prompt box, and only while a turn runs", () => {
    const { model, $ } = setup();
    const input = $<HTMLTextAreaElement>(".hn-composer textarea")!;
    const esc = () => {
      const event = new KeyboardEvent("keydown", { key: "Escape", bubbles: true, cancelable: true });
      input.dispatchEvent(event);
      return event;
    };
    const idle = esc();
    expect(model.sentOfType("stop")).toHaveLength(0);
    expect(idle.defaultPrevented).toBe(false); // left to JupyterLab (command mode)
    model.kernelSet("busy", true);
    const running = esc();
    expect(model.sentOfType("stop")).toHaveLength(1);
    expect(running.defaultPrevented).toBe(true);
    model.kernelSet("busy", false);
    esc();
    expect(model.sentOfType("stop")).toHaveLength(1);
  });

  it("shows the connection banner and counts down while reconnecting", () => {
    vi.useFakeTimers();
    try {
      const { model, $ } = setup();
      const banner = $(".hn-banner")!;
      expect(banner.getAttribute("role")).toBe("status");
      expect(banner.getAttribute("aria-live")).toBe("polite");
      expect(banner.hidden).toBe(true);
      model.kernelSet("connection", { status: "reconnecting", retry_in: 3, message: null });
      expect(banner.dataset.status).toBe("reconnecting");
      expect(banner.textContent).toBe("Connection lost. Reconnecting in 3 s…");
      vi.advanceTimersByTime(1000);
      expect(banner.textContent).toBe("Connection lost. Reconnecting in 2 s…");
      vi.advanceTimersByTime(2000);
      expect(banner.textContent).toBe("Reconnecting…");
      model.kernelSet("connection", { status: "reconnected", retry_in: null, message: "Replayed 12 events." });
      expect(banner.textContent).toBe("Reconnected. Replayed 12 events.");
      model.kernelSet("connection", { status: "disconnected", retry_in: null, message: null });
      expect(banner.dataset.status).toBe("disconnected");
      expect(banner.hidden).toBe(false);
      expect(vi.getTimerCount()).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });

  it("shows stop while busy and the queued count", () => {
    const { model, $ } = setup();
    const stop = $<HTMLButtonElement>(".hn-stop")!;
    expect(stop.hidden).toBe(true);
    model.kernelSet("busy", true);
    model.kernelSet("queued", 2);
    expect(stop.hidden).toBe(false);
    expect($(".hn-queued")!.textContent).toBe("2 messages queued");
    stop.click();
    expect(model.sentOfType("stop")).toHaveLength(1);
    model.kernelSet("busy", false);
    model.kernelSet("queued", 0);
    expect(stop.hidden).toBe(true);
    expect($(".hn-queued")!.hidden).toBe(true);
  });

  it("follows the mode and loading traitlets, and works without the session traitlets (turn view)", () => {
    const model = new FakeModel<ChatState>({ ...chatState({ mode: "turn" }), session: undefined } as unknown as ChatState);
    const host = document.createElement("div");
    const view = createChatView(model, host, { schedule: () => () => undefined });
    const root = host.querySelector<HTMLElement>(".hn-chat")!;
    expect(root.dataset.mode).toBe("turn");
    expect(host.querySelector(".hn-title")!.textContent).toBe("Hermes");
    model.kernelSet("mode", "chat");
    expect(root.dataset.mode).toBe("chat");
    const loading = host.querySelector<HTMLElement>(".hn-loading")!;
    expect(loading.hidden).toBe(true);
    model.kernelSet("loading", true);
    expect(loading.hidden).toBe(false);
    expect(loading.getAttribute("role")).toBe("status");
    view.dispose();
    expect(model.listenerCount()).toBe(0);
  });

  it("announces when a response starts and ends", () => {
    const { frames, snapshot, changes, $ } = setup();
    const announcer = $(".hn-sr-only")!;
    snapshot(0, [message({ id: A })]);
    frames.run();
    expect(announcer.textContent).toBe("Hermes is responding");
    changes(1, { op: "finish", message_id: A, status: "complete", usage: null, error: null });
    frames.run();
    expect(announcer.textContent).toBe("Hermes finished responding");
  });
});

describe("lifecycle", () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("render then dispose leaves no listeners, timers or DOM behind", () => {
    const model = new FakeModel<ChatState>(chatState());
    const host = document.createElement("div");
    const cleanup = chat.render({ model, el: host });
    expect(model.listenerCount()).toBeGreaterThan(0);
    model.kernelSet("connection", { status: "reconnecting", retry_in: 5, message: null });
    model.kernelSend({ type: "changes", seq: 1, changes: [] });
    cleanup();
    expect(model.listenerCount()).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
    expect(host.childElementCount).toBe(0);
  });

  it("two views of one model each clean up only their own listeners", () => {
    const model = new FakeModel<ChatState>(chatState());
    const one = chat.render({ model, el: document.createElement("div") });
    const perView = model.listenerCount();
    const two = chat.render({ model, el: document.createElement("div") });
    expect(model.listenerCount()).toBe(2 * perView);
    one();
    expect(model.listenerCount()).toBe(perView);
    two();
    expect(model.listenerCount()).toBe(0);
  });
});
