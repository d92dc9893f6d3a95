import { afterEach, describe, expect, it, vi } from "vitest";

import { DEFAULT_TIMEOUT_MS, invoke, KernelRefused, KernelTimeout } from "../src/invoke";
import type { ChatQuestion, ChatState } from "../src/types/chat";

import type { JobsQuestion } from "../src/types/jobs";
import { FakeModel } from "./fake-model";
import { chatState } from "./fixtures";

type Commands = Extract<ChatQuestion, { type: "commands" }>;
type Check = Extract<JobsQuestion, { type: "check_schedule" }>;

function model(): FakeModel<ChatState> {
  return new FakeModel<ChatState>(chatState());
}

afterEach(() => vi.useRealTimers());

describe("invoke: one question, one answer, correlated by id", () => {
  it("sends the question with a fresh request id and hands over only the answer carrying it", () => {
    const m = model();
    const answers: unknown[] = [];
    invoke<Commands>(m, { type: "commands" }, { answer: (msg) => answers.push(msg.commands) });
    invoke<Commands>(m, { type: "commands" }, { answer: (msg) => answers.push(msg.commands) });
    const [first, second] = m.sentOfType("commands");
    expect(typeof first!.request).toBe("string");
    expect(first!.request).not.toBe(second!.request);
    m.kernelSend({ type: "commands", commands: ["pushed"] }); // no request: nobody's answer
    m.kernelSend({ type: "commands", request: second!.request, commands: ["second"] });
    m.kernelSend({ type: "commands", request: first!.request, commands: ["first"] });
    m.kernelSend({ type: "commands", request: first!.request, commands: ["again"] }); // answered once only
    expect(answers).toEqual([["second"], ["first"]]);
    expect(m.listenerCount()).toBe(0); // each listener went with its answer
  });

  it("fails with the kernel's refusal, and with a timeout when no answer comes", async () => {
    const m = model();
    const failures: Error[] = [];
    invoke<Check>(m, { type: "check_schedule", schedule: "x" }, { answer: () => undefined, failed: (e) => failures.push(e) });
    m.kernelSend({ type: "error", request: m.sentOfType("check_schedule")[0]!.request, message: "no such form" });
    expect(failures[0]).toBeInstanceOf(KernelRefused);
    expect(failures[0]!.message).toBe("no such form");

    invoke<Check>(m, { type: "check_schedule", schedule: "y" }, { answer: () => undefined, failed: (e) => failures.push(e) },
      { timeout: 20 });
    await vi.waitFor(() => expect(failures).toHaveLength(2));
    expect(failures[1]).toBeInstanceOf(KernelTimeout);
    expect(failures[1]!.message).toContain("did not answer within 0.02 s");
    m.kernelSend({ type: "schedule_check", request: m.sentOfType("check_schedule")[1]!.request, ok: true });
    expect(failures).toHaveLength(2);
    expect(m.listenerCount()).toBe(0);
    expect(DEFAULT_TIMEOUT_MS).toBeGreaterThan(1000);
  });

  it("stops waiting, silently, when the asker aborts (a newer question, a disposed view)", () => {
    const m = model();
    const seen: unknown[] = [];
    const controller = invoke<Commands>(m, { type: "commands" }, { answer: (msg) => seen.push(msg), failed: (e) => seen.push(e) });
    controller.abort();
    m.kernelSend({ type: "commands", request: m.sentOfType("commands")[0]!.request, commands: [] });
    expect(seen).toEqual([]);
    expect(m.listenerCount()).toBe(0);
  });
});
