import { afterEach, describe, expect, it, vi } from "vitest";

import { createComposer } from "../src/chat/composer";
import { createMessageView } from "../src/chat/message";
import { breakdownText, cacheText, formatUsage } from "../src/chat/usage";
import { createChatView } from "../src/chat/view";
import type { ChatState, ChatOutgoing } from "../src/types/chat";
import { FakeModel } from "./fake-model";
import { chatState, message, textPart } from "./fixtures";

const CATALOG = [
  { name: "/help", description: "Show available commands", category: "Info" },
  { name: "/history", description: "Show conversation history", category: "Session" },
  { name: "/model", description: "", category: "Configuration" },
];

const CONTEXT = {
  used: 15637,
  max: 256000,
  percent: 6,
  categories: [
    { id: "system_prompt", label: "System prompt", tokens: 1551 },
    { id: "tool_definitions", label: "gateway.context.category.tool_definitions", tokens: 12483 },
  ],
};

function chat(state: Partial<ChatState> = {}) {
  const model = new FakeModel<ChatState>(chatState(state));
  const host = document.createElement("div");
  document.body.append(host);
  const view = createChatView(model, host, { schedule: () => () => undefined });
  const $ = <E extends HTMLElement = HTMLElement>(selector: string) => host.querySelector<E>(selector)!;
  return { model, host, view, $ };
}

function composer() {
  const sent: ChatOutgoing[] = [];
  const c = createComposer((m) => sent.push(m));
  document.body.replaceChildren(c.el);
  const textarea = c.el.querySelector<HTMLTextAreaElement>("textarea")!;
  const type = (text: string) => {
    textarea.value = text;
    textarea.dispatchEvent(new Event("input"));
  };
  const key = (name: string, init: KeyboardEventInit = {}) => {
    const event = new KeyboardEvent("keydown", { key: name, cancelable: true, bubbles: true, ...init });
    textarea.dispatchEvent(event);
    return event;
  };
  const menu = () => c.el.querySelector<HTMLElement>(".hn-slash-menu")!;
  const options = () => Array.from(c.el.querySelectorAll<HTMLElement>(".hn-slash-option"));
  return { c, sent, textarea, type, key, menu, options };
}

afterEach(() => {
  document.body.replaceChildren();
});

describe("the header's session details", () => {
  it("shows the session's model and follows the traitlet; no label while it is unknown", () => {
    const { model, $, view } = chat({ model: "" });
    expect($(".hn-model").hidden).toBe(true);
    model.kernelSet("model", "fake-model");
    expect($(".hn-model").hidden).toBe(false);
    expect($(".hn-model").textContent).toBe("model: fake-model");
    model.kernelSet("model", "switched-model");
    expect($(".hn-model").textContent).toBe("model: switched-model");
    view.dispose();
    expect(model.listenerCount()).toBe(0);
  });

  it("shows the session's context gauge with the breakdown on hover, labels read from message keys", () => {
    const { model, $ } = chat({ context_usage: null });
    expect($(".hn-session-usage").hidden).toBe(true);
    model.kernelSet("context_usage", CONTEXT);
    const gauge = $(".hn-session-usage");
    expect(gauge.hidden).toBe(false);
    expect(gauge.textContent).toBe("6%");
    expect(gauge.title).toBe("context 15,637 / 256,000 (6%)\nSystem prompt: 1,551 tokens\ntool definitions: 12,483 tokens");
    const progress = $<HTMLProgressElement>(".hn-session-usage progress.hn-session-gauge");
    expect(progress.value).toBe(6);
    expect(progress.getAttribute("aria-valuetext")).toBe("context 15,637 / 256,000 (6%)");
  });
});

describe("usage detail", () => {
  it("reads the prompt cache of either server and puts it in the usage line", () => {
    expect(cacheText({ cache_read: 1200, cache_write: 300, cache_hit_pct: 45 })).toBe("cache 1,200 read · 300 written (45% hit)");
    expect(cacheText({ cache_read_tokens: 60 })).toBe("cache 60 read");
    expect(cacheText({ cache_hit_pct: 60 })).toBe("cache 60% hit");
    expect(cacheText({ input: 1 })).toBe("");
    expect(formatUsage({ input: 40, output: 5, cache_hit_pct: 60, cost_usd: 0.5 })).toBe("40 in · 5 out tokens · cache 60% hit · $0.50");
  });

  it("renders the cache in a message's usage line, the rest on hover", () => {
    const usage = { input: 40, output: 5, cache_read: 60, model: "fake-model", context_used: 10, context_max: 100 };
    const view = createMessageView(
      message({ id: "assistant:t1", status: "complete", parts: [textPart("text:0", "hi")], usage }),
      { send: () => undefined, answered: new Map() } as never,
    );
    const line = view.el.querySelector<HTMLElement>(".hn-usage")!;
    expect(line.querySelector(".hn-usage-cache")!.textContent).toBe("cache 60 read");
    expect(line.title).toBe("model fake-model");
    expect(line.textContent).toBe("40 in · 5 out tokens · cache 60 read · context 10 / 100 (10%)");
  });

  it("has no breakdown text without a context window", () => {
    expect(breakdownText(null)).toBe("");
    expect(breakdownText({ used: 0, max: 0, percent: 0, categories: [] })).toBe("");
  });
});

describe("the / menu", () => {
  it("asks the kernel for the catalog once, when / is typed, and lists the commands that match", () => {
    const { c, sent, type, menu, options } = composer();
    type("/");
    expect(sent).toEqual([{ type: "commands" }]);
    expect(menu().hidden).toBe(false);
    expect(menu().textContent).toContain("Loading");
    c.setCommands(CATALOG);
    expect(options().map((o) => o.querySelector(".hn-slash-name")!.textContent)).toEqual(["/help", "/history", "/model"]);
    type("/hi");
    expect(options().map((o) => o.querySelector(".hn-slash-name")!.textContent)).toEqual(["/history"]);
    type("/");
    type("/h");
    expect(sent).toEqual([{ type: "commands" }]);
    type("hello /h");
    expect(menu().hidden).toBe(true);
  });

  it("is keyboard navigable: arrows move, Enter picks, Escape closes without stopping the turn", () => {
    const { c, type, key, menu, options, textarea } = composer();
    type("/");
    c.setCommands(CATALOG);
    expect(options()[0]!.getAttribute("aria-selected")).toBe("true");
    expect(key("ArrowDown").defaultPrevented).toBe(true);
    expect(options()[1]!.getAttribute("aria-selected")).toBe("true");
    expect(textarea.getAttribute("aria-activedescendant")).toBe(options()[1]!.id);
    key("ArrowUp");
    key("ArrowUp"); // wraps to the last
    expect(options()[2]!.getAttribute("aria-selected")).toBe("true");
    key("Enter");
    expect(textarea.value).toBe("/model ");
    expect(menu().hidden).toBe(true);
    type("/");
    expect(menu().hidden).toBe(false);
    const outer = vi.fn();
    document.body.addEventListener("keydown", outer);
    const escape = key("Escape");
    expect(escape.defaultPrevented).toBe(true);
    expect(outer).not.toHaveBeenCalled();
    expect(menu().hidden).toBe(true);
    document.body.removeEventListener("keydown", outer);
  });

  it("sends a /command line as a command, and a prompt starting with a space as a prompt", async () => {
    const { c, sent, textarea } = composer();
    textarea.value = "/model  other";
    await c.submit();
    expect(sent).toEqual([{ type: "command", line: "/model  other" }]);
    textarea.value = " /model is a word";
    await c.submit();
    expect(sent[1]).toEqual({ type: "send", text: " /model is a word", images: [] });
  });

  it("the view hands the catalog to the menu and shows a command's output as text", () => {
    const { model, $, host } = chat();
    const textarea = $<HTMLTextAreaElement>(".hn-input");
    textarea.value = "/";
    textarea.dispatchEvent(new Event("input"));
    expect(model.sentOfType("commands")).toHaveLength(1);
    model.kernelSend({ type: "commands", commands: CATALOG });
    expect(host.querySelectorAll(".hn-slash-option")).toHaveLength(3);
    model.kernelSend({ type: "command_output", command: "/model", output: "Current model: <b>x</b>", warning: "", prefill: "" });
    expect($(".hn-command-output").hidden).toBe(false);
    expect($(".hn-command-name").textContent).toBe("/model");
    expect($(".hn-command-text").textContent).toBe("Current model: <b>x</b>");
    expect($(".hn-command-text").querySelector("b")).toBeNull();
    model.kernelSend({ type: "command_output", command: "/plan", output: "draft", warning: "", prefill: "Plan: do it" });
    expect(textarea.value).toBe("Plan: do it");
    $<HTMLButtonElement>(".hn-command-close").click();
    expect($(".hn-command-output").hidden).toBe(true);
  });
});
