import { afterEach, describe, expect, it } from "vitest";

import { createChatView } from "../src/chat/view";
import type { Message } from "../src/types/turns";

import type { ChatState } from "../src/types/chat";
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

describe("undo with files", () => {
  it("asks which files the settled last reply's turn changed, offers them inert, and undoes with files on confirm", () => {
    const { model, snapshot, inMessage } = setup();
    snapshot(conversation());
    const asked = model.sentOfType("turn_files");
    expect(asked).toEqual([{ type: "turn_files", message_id: "assistant:t2", request: expect.any(String) }]);
    expect(inMessage("assistant:t2", ".hn-act-undo-files")).toBeNull(); // nothing offered before the answer
    const evil = '<img src=x onerror="alert(1)">.txt';
    model.kernelSend({ type: "turn_files", request: asked[0]!.request, message_id: "assistant:t2",
      files: [{ path: "data.csv", status: "modified", added: 2, removed: 1 }, { path: evil, status: "added", added: 1, removed: 0 }], checkpoints: true });
    inMessage("assistant:t2", ".hn-act-undo-files")!.click();
    const items = Array.from(document.querySelectorAll(".hn-undo-files-list li")).map((li) => li.textContent);
    expect(items).toEqual(["data.csv (+2 \u22121)", `${evil} (added +1)`]);
    expect(document.querySelector(".hn-undo-files img")).toBeNull();
    const confirm = inMessage("assistant:t2", ".hn-undo-files-confirm") as HTMLButtonElement;
    expect(document.activeElement).toBe(confirm);
    confirm.dispatchEvent(new KeyboardEvent("keydown", { key: "Escape", bubbles: true, cancelable: true }));
    expect(inMessage("assistant:t2", ".hn-undo-files")).toBeNull();
    expect(model.sentOfType("undo")).toEqual([]);
    inMessage("assistant:t2", ".hn-act-undo-files")!.click();
    (inMessage("assistant:t2", ".hn-undo-files-confirm") as HTMLButtonElement).click();
    expect(model.sent.at(-1)).toEqual({ type: "undo", message_id: "assistant:t2", files: true });
    // Hermes takes checkpoints here: Branch with files (on earlier replies, by CSS) lists the files it will put
    // back and asks first, saying the files as they are now are kept in a checkpoint.
    expect(document.querySelector<HTMLElement>(".hn-chat")!.dataset.checkpoints).toBe("true");
    inMessage("assistant:t1", ".hn-act-branch-files")!.click();
    const [branchAsk] = model.sentOfType("branch_files");
    expect(branchAsk).toEqual({ type: "branch_files", message_id: "assistant:t1", request: expect.any(String) });
    expect(model.sentOfType("branch")).toEqual([]);
    model.kernelSend({ type: "branch_files", request: branchAsk!.request, message_id: "assistant:t1",
      files: [{ path: evil, status: "modified", added: 1, removed: 3 }] });
    const panel = inMessage("assistant:t1", ".hn-branch-files") as HTMLElement;
    expect(panel.querySelector(".hn-undo-files-heading")!.textContent).toBe(
      "Branch here and put back 1 file as they were after this reply:");
    expect(Array.from(panel.querySelectorAll("li")).map((li) => li.textContent)).toEqual([`${evil} (+1 \u22123)`]);
    expect(panel.querySelector("img")).toBeNull();
    expect(panel.querySelector(".hn-undo-files-note")!.textContent).toContain("as they are now are kept in a checkpoint");
    (panel.querySelector(".hn-branch-files-confirm") as HTMLButtonElement).click();
    expect(model.sent.at(-1)).toEqual({ type: "branch", message_id: "assistant:t1", files: true });
    expect(inMessage("assistant:t1", ".hn-branch-files")).toBeNull();
    // Where the kernel refuses (no checkpoint for those turns): the reason, and no way to confirm.
    inMessage("assistant:t1", ".hn-act-branch-files")!.click();
    const refusedAsk = model.sentOfType("branch_files")[1]!;
    model.kernelSend({ type: "error", request: refusedAsk.request, message: "the turns after that message did not all run here" });
    const refused = inMessage("assistant:t1", ".hn-branch-files") as HTMLElement;
    expect(refused.textContent).toContain("did not all run here");
    expect(refused.querySelector(".hn-branch-files-confirm")).toBeNull();
    expect(model.sentOfType("branch")).toHaveLength(1);
  });

  it("offers nothing where the kernel refuses the question (0.19.0) or names no files, and never asks while busy", () => {
    const { model, snapshot, inMessage } = setup({ busy: true });
    snapshot(conversation());
    expect(model.sentOfType("turn_files")).toEqual([]);
    model.set("busy", false);
    const [question] = model.sentOfType("turn_files");
    model.kernelSend({ type: "error", request: question!.request, message: "undo is not offered by this Hermes" });
    expect(inMessage("assistant:t2", ".hn-act-undo-files")).toBeNull();
    expect(document.querySelector(".hn-notice")?.textContent ?? "").toBe("");
    snapshot([...conversation(), userMessage("t3", "third"), reply("t3", "three")]);
    const second = model.sentOfType("turn_files")[1]!;
    expect(second.message_id).toBe("assistant:t3");
    model.kernelSend({ type: "turn_files", request: second.request, message_id: "assistant:t3", files: [], checkpoints: false });
    expect(inMessage("assistant:t3", ".hn-act-undo-files")).toBeNull();
    expect(document.querySelector<HTMLElement>(".hn-chat")!.dataset.checkpoints).toBeUndefined(); // no Branch with files
  });
});
