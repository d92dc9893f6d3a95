import { afterEach, describe, expect, it } from "vitest";

import { createComposer } from "../src/chat/composer";
import { chosenProfile, profileOptions } from "../src/chat/profiles";
import { outgoing } from "../src/chat/steer";
import { createChatView } from "../src/chat/view";
import type { ChatOutgoing, ChatState } from "../src/types/chat";
import { FakeModel } from "./fake-model";
import { chatState } from "./fixtures";

const PROFILES = [
  { name: "default", default: true, model: "fake-model", description: "" },
  { name: "work", default: false, model: "m2", description: "<img src=x onerror=alert(1)>" },
];

function chat(state: Partial<ChatState> = {}) {
  const model = new FakeModel<ChatState>(chatState(state));
  const host = document.createElement("div");
  document.body.append(host);
  const view = createChatView(model, host, { schedule: () => () => undefined });
  const picker = () => host.querySelector<HTMLSelectElement>("select.hn-profile-picker")!;
  return { model, host, view, picker };
}

afterEach(() => {
  document.body.replaceChildren();
});

describe("the profile picker", () => {
  it("lists the profiles, marks the default, and keeps server text as text", () => {
    expect(profileOptions({ profiles: PROFILES })).toEqual([
      { value: "default", label: "default (default)", title: "fake-model" },
      { value: "work", label: "work", title: "m2 · <img src=x onerror=alert(1)>" },
    ]);
    expect(profileOptions({ profiles: "nope" as never })).toEqual([]);
    expect(chosenProfile({ profiles: PROFILES, current: null })).toBe("default");
    expect(chosenProfile({ profiles: PROFILES, current: "work" })).toBe("work");
  });

  it("asks once when the view opens, shows only with two profiles or more, and switches on change", () => {
    const { model, host, picker } = chat();
    const [question] = model.sentOfType("profiles");
    expect(question).toEqual({ type: "profiles", request: expect.any(String) });
    expect(picker().hidden).toBe(true);
    model.kernelSend({ type: "profiles", request: question!.request, profiles: PROFILES, current: null });
    expect(picker().hidden).toBe(false);
    expect(picker().value).toBe("default");
    expect(host.querySelector("img")).toBeNull(); // a description is an option's title, never markup
    picker().value = "work";
    picker().dispatchEvent(new Event("change"));
    expect(model.sentOfType("switch_profile")).toEqual([{ type: "switch_profile", profile: "work" }]);
    model.kernelSet("session", { id: "s2", title: null });
    expect(model.sentOfType("profiles")).toHaveLength(2); // re-asked after the switch
  });

  it("stays hidden where Hermes refuses the question (0.19.0 has no profiles) or lists one", () => {
    const { model, picker } = chat();
    const [question] = model.sentOfType("profiles");
    model.kernelSend({ type: "error", request: question!.request, message: "choosing a profile is not offered" });
    expect(picker().hidden).toBe(true);
    model.kernelSet("session", { id: "s2", title: null });
    const second = model.sentOfType("profiles")[1]!;
    model.kernelSend({ type: "profiles", request: second.request, profiles: PROFILES.slice(0, 1), current: null });
    expect(picker().hidden).toBe(true);
  });
});

describe("Queue or Steer while a turn runs", () => {
  it("routes a text as a steer only when steering, without attachments or a command", () => {
    expect(outgoing("go left", [], [], true)).toEqual({ type: "steer", text: "go left" });
    expect(outgoing("go left", [], [], false)).toEqual({ type: "send", text: "go left", images: [] });
    const image = { mime: "image/png", data: "AAAA" };
    expect(outgoing("look", [image], [], true)).toEqual({ type: "send", text: "look", images: [image] });
    expect(outgoing("/help", [], [], true)).toEqual({ type: "command", line: "/help" });
  });

  it("offers the choice only while busy, defaults to Queue, and goes back to Queue when the turn ends", () => {
    const sent: ChatOutgoing[] = [];
    const composer = createComposer((m) => sent.push(m));
    document.body.replaceChildren(composer.el);
    const mode = composer.el.querySelector<HTMLSelectElement>("select.hn-send-mode")!;
    const textarea = composer.el.querySelector<HTMLTextAreaElement>("textarea")!;
    expect(mode.hidden).toBe(true);
    composer.setBusy(true);
    expect(mode.hidden).toBe(false);
    expect(mode.value).toBe("queue");
    textarea.value = "queued one";
    return composer.submit().then(async () => {
      mode.value = "steer";
      textarea.value = "steer it";
      await composer.submit();
      composer.setBusy(false);
      expect(mode.value).toBe("queue");
      expect(mode.hidden).toBe(true);
      textarea.value = "after";
      mode.value = "steer"; // hidden and not busy: a prompt
      await composer.submit();
      expect(sent).toEqual([
        { type: "send", text: "queued one", images: [] },
        { type: "steer", text: "steer it" },
        { type: "send", text: "after", images: [] },
      ]);
    });
  });
});

describe("subagent controls", () => {
  it("asks once which subagent controls this Hermes offers and marks the chat; a refusal (no Dashboard) marks nothing", () => {
    const { model, host } = chat();
    const [question] = model.sentOfType("subagent_controls");
    expect(question).toEqual({ type: "subagent_controls", request: expect.any(String) });
    model.kernelSend({ type: "subagent_controls", request: question!.request, steer: false, stop: true });
    const root = host.querySelector<HTMLElement>(".hn-chat")!;
    expect([root.dataset.subagentSteer, root.dataset.subagentStop]).toEqual([undefined, "true"]);
    const refused = chat();
    const [asked] = refused.model.sentOfType("subagent_controls");
    refused.model.kernelSend({ type: "error", request: asked!.request, message: "needs the Dashboard" });
    const other = refused.host.querySelector<HTMLElement>(".hn-chat")!;
    expect([other.dataset.subagentSteer, other.dataset.subagentStop]).toEqual([undefined, undefined]);
    expect(refused.host.querySelector(".hn-notice")!.textContent).toBe("");
  });
});
