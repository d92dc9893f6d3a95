// @vitest-environment jsdom
// The "kernel is busy" note (../src/delivery.ts): shown when the kernel has not acknowledged a message within a
// second, gone once it has; in the chat and jobs views.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";

import { createChatView } from "../src/chat/view";
import { ACK_TIMEOUT_MS, busyText, createDelivery } from "../src/delivery";
import jobs, { type JobsState } from "../src/jobs";
import type { ChatState } from "../src/types/chat";
import { FakeModel } from "./fake-model";
import { chatState, userMessage } from "./fixtures";

beforeEach(() => {
  vi.useFakeTimers();
});

afterEach(() => {
  vi.useRealTimers();
  document.body.replaceChildren();
});

const BUSY = "The kernel is busy running a cell; your prompt is queued and will be sent when it finishes.";

describe("delivery", () => {
  it("says nothing while the kernel acknowledges within the delay", () => {
    const model = new FakeModel<object>({});
    const delivery = createDelivery(model);
    delivery.send({ type: "send", text: "hi", images: [] });
    expect(model.sent).toEqual([{ type: "send", text: "hi", images: [] }]);
    vi.advanceTimersByTime(ACK_TIMEOUT_MS - 10);
    model.kernelStatus(0);
    vi.advanceTimersByTime(100);
    expect(delivery.el.hidden).toBe(true);
    expect(delivery.pending).toBe(0);
  });

  it("shows a queued prompt's text after a second without an acknowledgement, and clears when it comes", () => {
    const model = new FakeModel<object>({});
    const delivery = createDelivery(model);
    delivery.send({ type: "send", text: "what is the loss curve doing?", images: [] });
    vi.advanceTimersByTime(ACK_TIMEOUT_MS - 1);
    expect(delivery.el.hidden).toBe(true);
    vi.advanceTimersByTime(1);
    expect(delivery.el.hidden).toBe(false);
    expect(delivery.el.getAttribute("role")).toBe("status");
    expect(delivery.el.querySelector(".hn-kernel-busy-text")!.textContent).toBe(BUSY);
    expect(delivery.el.querySelector(".hn-kernel-busy-prompt")!.textContent).toBe("what is the loss curve doing?");
    model.kernelStatus(0, "busy"); // the cell finished; the kernel took the prompt
    expect(delivery.el.hidden).toBe(true);
    expect(delivery.el.textContent).toBe("");
  });

  it("an acknowledgement covers the messages sent before it; counts and kinds are worded", () => {
    const model = new FakeModel<object>({});
    const delivery = createDelivery(model);
    delivery.send({ type: "respond", message_id: "m", part_id: "p", request_id: "r", response: "once" });
    delivery.send({ type: "send", text: "one", images: [] });
    delivery.send({ type: "send", text: "two", images: [] });
    vi.advanceTimersByTime(ACK_TIMEOUT_MS);
    expect(delivery.el.dataset.waiting).toBe("3");
    expect(delivery.el.querySelector(".hn-kernel-busy-text")!.textContent).toBe(
      "The kernel is busy running a cell; your 2 prompts are queued and will be sent when it finishes.");
    model.kernelStatus(1);
    expect(delivery.el.dataset.waiting).toBe("1");
    expect([...delivery.el.querySelectorAll(".hn-kernel-busy-prompt")].map((e) => e.textContent)).toEqual(["two"]);
    model.kernelStatus(2);
    expect(delivery.el.hidden).toBe(true);
    expect(busyText(["answer"])).toBe("The kernel is busy running a cell; your answer is queued and will be sent when it finishes.");
    expect(busyText(["request", "request"])).toBe(
      "The kernel is busy running a cell; your 2 requests are queued and will be handled when it finishes.");
  });

  it("a recognised reply acknowledges too; a front end that reports no status never shows the note", () => {
    const model = new FakeModel<object>({});
    const delivery = createDelivery(model);
    delivery.send({ type: "snapshot" });
    delivery.answered("snapshot"); // replied, but no status callback ever: this front end may never report one
    delivery.send({ type: "respond", message_id: "m", part_id: "p", request_id: "r", response: "deny" });
    vi.advanceTimersByTime(5 * ACK_TIMEOUT_MS);
    expect(delivery.el.hidden).toBe(true);
    expect(delivery.pending).toBe(1);
    model.kernelStatus(1); // it does report status after all: the note is trusted again
    delivery.send({ type: "stop" });
    vi.advanceTimersByTime(ACK_TIMEOUT_MS);
    expect(delivery.el.hidden).toBe(false);
  });

  it("never keeps or shows a sudo/secret value", () => {
    const model = new FakeModel<object>({});
    const delivery = createDelivery(model);
    delivery.send({ type: "secret", message_id: "m", part_id: "p", request_id: "r", kind: "sudo", value: "hunter2" });
    expect(model.sent[0]).toMatchObject({ value: "hunter2" }); // the kernel gets it
    vi.advanceTimersByTime(ACK_TIMEOUT_MS);
    expect(delivery.el.hidden).toBe(false);
    expect(delivery.el.textContent).not.toContain("hunter2");
    expect(delivery.el.textContent).toContain("your answer is queued");
    delivery.dispose();
    expect(delivery.pending).toBe(0);
  });
});

describe("in the views", () => {
  it("chat: a prompt sent while the kernel is busy stays in view until the kernel echoes it", async () => {
    const model = new FakeModel<ChatState>(chatState());
    const host = document.createElement("div");
    document.body.append(host);
    const view = createChatView(model, host, { schedule: (cb) => (cb(), () => undefined) });
    model.kernelStatus(0); // the snapshot request at creation: this front end reports status
    const textarea = host.querySelector<HTMLTextAreaElement>(".hn-composer textarea")!;
    textarea.value = "still training?";
    host.querySelector<HTMLButtonElement>(".hn-send")!.click();
    await vi.waitFor(() => expect(model.sentOfType("send")).toHaveLength(1));
    const note = host.querySelector<HTMLElement>(".hn-kernel-busy")!;
    expect(note.hidden).toBe(true);
    vi.advanceTimersByTime(ACK_TIMEOUT_MS);
    expect(note.hidden).toBe(false);
    expect(note.textContent).toBe(BUSY + "still training?");
    expect(textarea.value).toBe(""); // sent: the text now lives in the note until the kernel has it
    model.kernelSend({ type: "changes", seq: 1, changes: [{ op: "message", message: userMessage("t1", "still training?") }] });
    expect(note.hidden).toBe(true);
    view.dispose();
    expect(model.listenerCount()).toBe(0);
  });

  it("jobs: an action waiting for a busy kernel says so until its result comes", () => {
    const model = new FakeModel<JobsState>({
      jobs: [{ id: "0123456789ab", name: "nightly", schedule: "0 2 * * *", schedule_text: "0 2 * * *",
               schedule_kind: "cron", description: "every day at 02:00", state: "scheduled", enabled: true,
               next_run_at: null, last_run_at: null, last_status: null, has_error: false, has_delivery_error: false,
               repeat_times: null, repeat_completed: 0, repeat_text: "", deliver: "local", skills: [], running: false }],
      include_disabled: false, auto_refresh: 0, updated_at: null, loading: false,
      connection: { status: "connected", message: null, url: "" }, notice: {}, presets: [], timezone: "UTC",
    });
    const host = document.createElement("div");
    document.body.append(host);
    const cleanup = jobs.render({ model, el: host });
    model.kernelStatus(0); // job_errors at creation
    host.querySelector<HTMLButtonElement>('[data-testid="job-pause"]')!.click();
    const note = host.querySelector<HTMLElement>(".hn-kernel-busy")!;
    vi.advanceTimersByTime(ACK_TIMEOUT_MS);
    expect(note.hidden).toBe(false);
    expect(note.textContent).toBe("The kernel is busy running a cell; your request is queued and will be handled when it finishes.");
    model.kernelSend({ type: "action_result", request: model.sentOfType("action")[0]!.request, action: "pause",
                       id: "0123456789ab", ok: true, message: "Paused" });
    expect(note.hidden).toBe(true);
    cleanup();
  });
});
