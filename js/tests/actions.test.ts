import { afterEach, describe, expect, it } from "vitest";

import { createChatView } from "../src/chat/view";
import type { ChatState, Message } from "../src/types";
import { FakeModel } from "./fake-model";
import { chatState, message, textPart, userMessage } from "./fixtures";

function setup(state: Partial<ChatState> = {}) {
  const model = new FakeModel<ChatState>(chatState(state));
  const host = document.createElement("div");
  document.body.append(host);
  const frames: (() => void)[] = [];
  createChatView(model, host, { schedule: (callback) => (frames.push(callback), () => undefined) });
  const run = () => {
    for (const callback of frames.splice(0)) callback();
  };
  const send = (content: unknown) => {
    model.kernelSend(content);
    run();
  };
  const snapshot = (messages: Message[]) => send({ type: "snapshot", seq: 1, messages, revs: {} });
  const inMessage = (id: string, selector: string) =>
    host.querySelector<HTMLElement>(`.hn-message[data-message-id="${id}"] ${selector}`);
  return { model, host, snapshot, inMessage, send };
}

const reply = (turn: string, text: string, status: Message["status"] = "complete") =>
  message({ id: `assistant:${turn}`, status, parts: [textPart("text:0", text)] });
const conversation = () => [userMessage("t1", "first"), reply("t1", "one"), userMessage("t2", "second"), reply("t2", "two")];

afterEach(() => {
  document.body.replaceChildren();
});

describe("message buttons", () => {
  it("marks only the last prompt and the last reply as the ones to edit, regenerate or undo", () => {
    const { host, snapshot } = setup();
    snapshot(conversation());
    const latest = Array.from(host.querySelectorAll<HTMLElement>(".hn-message[data-latest]")).map((e) => e.dataset.messageId);
    expect(latest).toEqual(["user:t2", "assistant:t2"]);
    expect(host.querySelectorAll(".hn-user .hn-act-edit")).toHaveLength(2);
    expect(host.querySelectorAll(".hn-assistant .hn-act-branch")).toHaveLength(2);
  });

  it("sends regenerate, branch and undo for the reply they sit on", () => {
    const { model, snapshot, inMessage } = setup();
    snapshot(conversation());
    inMessage("assistant:t2", ".hn-act-regenerate")!.click();
    inMessage("assistant:t1", ".hn-act-branch")!.click();
    inMessage("assistant:t2", ".hn-act-undo")!.click();
    expect(model.sent.slice(-3)).toEqual([
      { type: "regenerate", message_id: "assistant:t2" },
      { type: "branch", message_id: "assistant:t1" },
      { type: "undo", message_id: "assistant:t2" },
    ]);
  });

  it("edits the last prompt inline: prefilled, Ctrl+Enter sends, Esc cancels and returns focus", () => {
    const { model, snapshot, inMessage } = setup();
    snapshot(conversation());
    inMessage("user:t2", ".hn-act-edit")!.click();
    const area = inMessage("user:t2", ".hn-edit-input") as HTMLTextAreaElement;
    expect(area.value).toBe("second");
    expect(document.activeElement).toBe(area);
    area.dispatchEvent(new KeyboardEvent("keydown", { key: "Escape", cancelable: true }));
    expect(inMessage("user:t2", ".hn-edit-form")).toBeNull();
    expect(document.activeElement).toBe(inMessage("user:t2", ".hn-act-edit"));
    inMessage("user:t2", ".hn-act-edit")!.click();
    const again = inMessage("user:t2", ".hn-edit-input") as HTMLTextAreaElement;
    again.value = "second, better";
    again.dispatchEvent(new KeyboardEvent("keydown", { key: "Enter", ctrlKey: true, cancelable: true }));
    expect(model.sent.at(-1)).toEqual({ type: "edit", message_id: "user:t2", text: "second, better" });
    expect(inMessage("user:t2", ".hn-edit-form")).toBeNull();
  });

  it("disables every button while a turn runs, including ones drawn meanwhile, and hides them on a streaming reply", () => {
    const { model, snapshot, inMessage, host, send } = setup();
    snapshot(conversation());
    model.set("busy", true);
    const buttons = () => Array.from(host.querySelectorAll<HTMLButtonElement>(".hn-msg-action"));
    expect(buttons().every((b) => b.disabled)).toBe(true);
    send({ type: "snapshot", seq: 2, revs: {}, reset: true, messages: [...conversation(), userMessage("t3", "third"), reply("t3", "", "streaming")] });
    expect(buttons().every((b) => b.disabled)).toBe(true);
    expect(inMessage("assistant:t3", ".hn-msg-actions")!.hidden).toBe(true);
    model.set("busy", false);
    expect(buttons().some((b) => b.disabled)).toBe(false);
  });
});
