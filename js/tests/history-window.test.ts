import { afterEach, describe, expect, it, vi } from "vitest";

import { followScroll } from "../src/chat/scroll";
import { createChatView, HISTORY_WINDOW } from "../src/chat/view";
import type { Message } from "../src/types/turns";

import type { ChatState } from "../src/types/chat";
import { FakeModel } from "./fake-model";
import { chatState, message, textPart, userMessage } from "./fixtures";

afterEach(() => {
  document.body.replaceChildren();
  vi.unstubAllGlobals();
});

function history(n: number): Message[] {
  return Array.from({ length: n }, (_, i) =>
    i % 2 === 0
      ? userMessage(`t${i}`, `question ${i}`)
      : message({ id: `assistant:${i}`, status: "complete", parts: [textPart("text:0", `answer **${i}**`)] }),
  );
}

function setup() {
  const model = new FakeModel<ChatState>(chatState());
  const host = document.createElement("div");
  document.body.append(host);
  const frames: (() => void)[] = [];
  const view = createChatView(model, host, { schedule: (cb) => (frames.push(cb), () => undefined) });
  const run = () => frames.splice(0).forEach((cb) => cb());
  const ids = () => Array.from(host.querySelectorAll<HTMLElement>(".hn-message")).map((m) => m.dataset.messageId);
  return { model, host, view, run, ids };
}

describe("long histories", () => {
  it("render the newest messages first and older ones on demand, keeping the window as messages arrive", () => {
    const { model, host, run, ids } = setup();
    const all = history(1_000);
    model.kernelSend({ type: "snapshot", seq: 0, messages: all, revs: {} });
    run();
    expect(ids()).toEqual(all.slice(-HISTORY_WINDOW).map((m) => m.id));
    const earlier = host.querySelector<HTMLButtonElement>(".hn-earlier")!;
    expect(earlier.hidden).toBe(false);
    // New messages extend the window instead of sliding it (the first shown stays).
    model.kernelSend({ type: "changes", seq: 1, changes: [{ op: "message", message: userMessage("new", "more?") }] });
    run();
    expect(ids()).toHaveLength(HISTORY_WINDOW + 1);
    expect(ids()[0]).toBe(all[all.length - HISTORY_WINDOW]!.id);
    // Reaching the top (or the button, by keyboard) renders the previous slice, before the first one shown.
    const first = host.querySelector(".hn-message")!;
    earlier.click();
    run();
    expect(ids()).toHaveLength(2 * HISTORY_WINDOW + 1);
    expect(ids()[0]).toBe(all[all.length - 2 * HISTORY_WINDOW]!.id);
    expect(host.querySelectorAll(".hn-message")[HISTORY_WINDOW]).toBe(first);
    expect(host.querySelector(".hn-messages")!.firstElementChild).toBe(earlier);
  });

  it("a short conversation shows everything and no button", () => {
    const { model, host, run, ids } = setup();
    model.kernelSend({ type: "snapshot", seq: 0, messages: history(10), revs: {} });
    run();
    expect(ids()).toHaveLength(10);
    expect(host.querySelector<HTMLButtonElement>(".hn-earlier")!.hidden).toBe(true);
  });
});

describe("partial snapshot (the newest messages first)", () => {
  it("paints the newest messages, and asks for older pages only when scrolled up to the oldest one held", () => {
    const { model, host, run, ids } = setup();
    const all = history(300);
    const newest = all.slice(-100);
    model.kernelSend({ type: "snapshot", seq: 5, messages: newest, revs: {}, partial: true, older: 200 });
    run();
    expect(ids()).toEqual(newest.slice(-HISTORY_WINDOW).map((m) => m.id));
    const last = all[all.length - 1]!;
    // The partial snapshot is the view's state: batches apply on it at once, nothing else is awaited.
    model.kernelSend({ type: "changes", seq: 6, changes: [{ op: "append", message_id: last.id, part_id: "text:0", text: " more" }] });
    run();
    expect(model.sent).toEqual([{ type: "snapshot" }, { type: "list_sessions", request: expect.any(String) }, { type: "profiles", request: expect.any(String) }, { type: "subagent_controls", request: expect.any(String) }, { type: "turn_files", request: expect.any(String), message_id: last.id }]); // only those at creation (and Undo with files' question)
    const earlier = host.querySelector<HTMLButtonElement>(".hn-earlier")!;
    earlier.click(); // the rest of what is held, and (the next slice would reach past it) ask for the page before
    run();
    expect(ids()).toEqual(newest.map((m) => m.id));
    expect(earlier.hidden).toBe(false); // the kernel holds 200 more
    earlier.click(); // at the oldest held, the page already asked for: nothing more to ask
    expect(model.sent).toEqual([{ type: "snapshot" }, { type: "list_sessions", request: expect.any(String) }, { type: "profiles", request: expect.any(String) }, { type: "subagent_controls", request: expect.any(String) }, { type: "turn_files", request: expect.any(String), message_id: last.id }, { type: "older", before: newest[0]!.id }]);
    // The page (as of the seq the view is at) goes in front; the slice the reader asked for is shown at once.
    const page = all.slice(50, 200);
    model.kernelSend({ type: "older", seq: 6, before: newest[0]!.id, messages: page, revs: { [page[0]!.id]: 7 }, older: 50 });
    run();
    expect(ids()).toEqual(all.slice(200 - HISTORY_WINDOW).map((m) => m.id));
    expect(earlier.hidden).toBe(false);
    const text = document.querySelector(`.hn-message[data-message-id="${last.id}"] .hn-part`)!.textContent!;
    expect(text.match(/more/g)).toHaveLength(1); // the newest messages were kept as they were
    // A page that does not fit what the view holds (another first message, another seq) is dropped.
    model.kernelSend({ type: "older", seq: 6, before: "someone-else", messages: all.slice(0, 10), revs: {}, older: 0 });
    model.kernelSend({ type: "older", seq: 5, before: page[0]!.id, messages: all.slice(0, 50), revs: {}, older: 0 });
    for (let i = 0; i < 4; i++) {
      earlier.click();
      run();
    }
    expect(ids()[0]).toBe(page[0]!.id);
    expect(model.sent.at(-1)).toEqual({ type: "older", before: page[0]!.id });
    model.kernelSend({ type: "older", seq: 6, before: page[0]!.id, messages: all.slice(0, 50), revs: {}, older: 0 });
    run();
    expect(ids()).toEqual(all.map((m) => m.id));
    expect(earlier.hidden).toBe(true);
  });

  it("ignores another view's partial answer, but a reset's replaces the conversation", () => {
    const { model, host, run, ids } = setup();
    const all = history(300);
    model.kernelSend({ type: "snapshot", seq: 5, messages: all, revs: {} });
    run();
    model.kernelSend({ type: "snapshot", seq: 5, messages: all.slice(-100), revs: {}, partial: true, older: 200 });
    run();
    expect(ids()).toEqual(all.slice(-HISTORY_WINDOW).map((m) => m.id));
    for (let i = 0; i < 300 / HISTORY_WINDOW; i++) {
      host.querySelector<HTMLButtonElement>(".hn-earlier")!.click();
      run();
    }
    expect(ids()).toEqual(all.map((m) => m.id)); // it still holds everything: nothing asked again
    expect(model.sentOfType("snapshot")).toEqual([{ type: "snapshot" }]);
    const other = history(150).map((m) => ({ ...m, id: `other-${m.id}` }));
    model.kernelSend({ type: "snapshot", seq: 6, messages: other.slice(-100), revs: {}, partial: true, older: 50, reset: true });
    run();
    expect(ids()).toEqual(other.slice(-HISTORY_WINDOW).map((m) => m.id));
  });
});

describe("scroll-follow with ResizeObserver", () => {
  it("never reads geometry right after an update; scrolls from the observer callback", () => {
    const observed: Element[] = [];
    let callback: (() => void) | null = null;
    vi.stubGlobal(
      "ResizeObserver",
      class {
        constructor(cb: () => void) {
          callback = cb;
        }
        observe(el: Element) {
          observed.push(el);
        }
        unobserve() {}
        disconnect() {}
      },
    );
    // The notebook scrolls, not the chat: list inside a scrolling panel, the composer below it.
    const panel = document.createElement("div");
    panel.style.overflowY = "auto";
    Object.defineProperty(panel, "clientHeight", { configurable: true, get: () => 600 });
    Object.defineProperty(panel, "scrollHeight", { configurable: true, get: () => 1200 });
    const list = document.createElement("div");
    const composer = document.createElement("div");
    panel.append(list, composer);
    document.body.append(panel);
    let reads = 0;
    const box = (top: number, bottom: number) => ({ top, bottom, left: 0, right: 0, width: 0, height: bottom - top, x: 0, y: top, toJSON() {} }) as DOMRect;
    panel.getBoundingClientRect = () => box(0, 600);
    composer.getBoundingClientRect = () => (reads++, box(1000, 1100));
    composer.getClientRects = () => [box(1000, 1100)] as unknown as DOMRectList;
    const follower = followScroll(list, { composer });
    const a = document.createElement("div");
    follower.afterUpdate(a);
    follower.afterUpdate(a);
    expect(reads).toBe(0); // no forced layout per update
    expect(observed).toEqual([a]);
    callback!();
    expect(panel.scrollTop).toBe(500); // the chat's end (the composer, 500 px below the view) scrolled into view
    follower.dispose();
  });
});
