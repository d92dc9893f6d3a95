// The one message idiom of both widgets, in one object per view (../src/messenger.ts): commands as they are,
// questions through `invoke`, both through the busy note; an answer (or refusal) acknowledges its question.
import { afterEach, describe, expect, it, vi } from "vitest";

import { createDelivery } from "../src/delivery";
import { KernelRefused } from "../src/invoke";
import { createMessenger } from "../src/messenger";
import type { ChatState, CommandsRequest, ListSessionsMsg } from "../src/types/chat";
import type { CheckScheduleMsg } from "../src/types/jobs";
import { FakeModel } from "./fake-model";
import { chatState } from "./fixtures";

afterEach(() => vi.useRealTimers());

describe("messenger", () => {
  it("acknowledges a question by its answer or refusal, and a command only by the kernel's status", () => {
    const model = new FakeModel<ChatState>(chatState());
    const delivery = createDelivery(model);
    const messenger = createMessenger(model, delivery);
    const answers: unknown[] = [];
    messenger.ask<CommandsRequest>({ type: "commands" }, { answer: (msg) => answers.push(msg.commands) });
    messenger.ask<CheckScheduleMsg>({ type: "check_schedule", schedule: "x" }, {
      answer: () => answers.push("never"),
      failed: (error) => answers.push(error),
    });
    messenger.command({ type: "refresh" }); // sent after both: their answers say nothing of it
    expect(model.sent.map((m) => (m as { type: string }).type)).toEqual(["commands", "check_schedule", "refresh"]);
    expect(delivery.pending).toBe(3);
    const [commands, check] = model.sent as { request?: string }[];
    model.kernelSend({ type: "check_schedule", request: "someone else's", ok: true }); // not an answer of ours
    model.kernelSend({ type: "error", request: check!.request, message: "no form open" });
    model.kernelSend({ type: "commands", request: commands!.request, commands: ["/help"] });
    expect(answers[0]).toBeInstanceOf(KernelRefused);
    expect(answers[1]).toEqual(["/help"]);
    expect(delivery.pending).toBe(1); // the command waits for the kernel's status (or a reply its view knows)
    model.kernelStatus(2);
    expect(delivery.pending).toBe(0);
    messenger.dispose();
    expect(model.listenerCount()).toBe(0);
  });

  it("stops every wait and every listener when the view goes", () => {
    const model = new FakeModel<ChatState>(chatState());
    const messenger = createMessenger(model);
    const seen: unknown[] = [];
    messenger.listen("change:busy", () => seen.push("busy"));
    messenger.ask<ListSessionsMsg>({ type: "list_sessions" }, { answer: (msg) => seen.push(msg), failed: (e) => seen.push(e) });
    const superseded = messenger.ask<CommandsRequest>({ type: "commands" }, { answer: (msg) => seen.push(msg) });
    superseded.abort(); // a newer question took its place: its answer is ignored
    model.kernelSend({ type: "commands", request: model.sentOfType("commands")[0]!.request, commands: [] });
    messenger.dispose();
    model.kernelSend({ type: "sessions", request: model.sentOfType("list_sessions")[0]!.request, sessions: [] });
    model.kernelSet("busy", true);
    expect(seen).toEqual([]);
    expect(model.listenerCount()).toBe(0);
    expect(messenger.note.isConnected).toBe(false);
  });
});
