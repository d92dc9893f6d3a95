import { describe, expect, it } from "vitest";

import { createMessageView, formatUsage } from "../src/chat/message";
import { summarizeUsage } from "../src/chat/usage";
import { createPartView, formatDuration, RESULT_PREVIEW_CHARS } from "../src/chat/parts";
import type { PartContext } from "../src/chat/part_view";
import type { ChatOutgoing } from "../src/types/chat";
import { part, textPart, toolPart } from "./fixtures";

function context(role: PartContext["role"] = "assistant"): PartContext & { sent: ChatOutgoing[] } {
  const sent: ChatOutgoing[] = [];
  return { role, sent, send: (m) => sent.push(m), answered: new Set() };
}

describe("reasoning", () => {
  it("is collapsed by default and renders (and keeps streaming) once opened", () => {
    const view = createPartView(part({ id: "reasoning:0", kind: "reasoning", text: "step **one**" }), "assistant:t", context());
    const details = view.el.querySelector<HTMLDetailsElement>("details.hn-reasoning")!;
    const body = view.el.querySelector(".hn-reasoning-body")!;
    expect(details.open).toBe(false);
    expect(body.textContent).toBe(""); // not rendered while closed
    details.open = true;
    details.dispatchEvent(new Event("toggle"));
    expect(body.querySelector("strong")!.textContent).toBe("one");
    view.update(part({ id: "reasoning:0", kind: "reasoning", text: "step **one**, step two" }));
    expect(body.textContent!.trim()).toBe("step one, step two");
    expect(view.el.querySelector("details")).toBe(details);
  });
});

describe("text", () => {
  it("renders assistant text as markdown and user text verbatim", () => {
    const assistant = createPartView(textPart("text:0", "# Title\n\n*hi*"), "assistant:t", context());
    expect(assistant.el.querySelector("h1")!.textContent).toBe("Title");
    const user = createPartView(textPart("text:0", "# not a title\n*literal*"), "user:t", context("user"));
    expect(user.el.querySelector("h1")).toBeNull();
    expect(user.el.textContent).toBe("# not a title\n*literal*");
  });

  it("shows a titled user text (the prompt as sent) collapsed under its title, verbatim", () => {
    const sent = "explain <img src=x onerror=alert(1)> and {df}";
    const view = createPartView(
      part({ id: "text:0", kind: "text", text: sent, name: "prompt as sent (1 value filled)" }),
      "user:t",
      context("user"),
    );
    const details = view.el.querySelector<HTMLDetailsElement>("details.hn-sent")!;
    expect(details.open).toBe(false);
    expect(details.querySelector("summary")!.textContent).toBe("prompt as sent (1 value filled)");
    expect(details.querySelector(".hn-plain")!.textContent).toBe(sent);
    expect(view.el.querySelector("img")).toBeNull();
    const plain = createPartView(textPart("text:0", "typed"), "user:t", context("user"));
    expect(plain.el.querySelector("details")).toBeNull();
  });
});

describe("tool card", () => {
  it("shows name, preview, arguments, status and duration", () => {
    const view = createPartView(
      toolPart("tool:c1", { name: "read_file", arguments: { path: "a.py" }, status: "running" }),
      "assistant:t",
      context(),
    );
    const card = view.el.querySelector<HTMLElement>(".hn-tool")!;
    expect(card.dataset.status).toBe("running");
    expect(card.querySelector(".hn-tool-name")!.textContent).toBe("read_file");
    expect(card.querySelector(".hn-tool-preview")!.textContent).toBe('{ "path": "a.py" }');
    expect(card.querySelector(".hn-tool-arguments")!.textContent).toBe('{\n  "path": "a.py"\n}');
    expect(card.querySelector(".hn-tool-status")!.textContent).toBe("Running…");
    expect(card.querySelector<HTMLElement>(".hn-tool-result")!.hidden).toBe(true);
    view.update(toolPart("tool:c1", { name: "read_file", status: "cancelled", duration: 0.042 }));
    expect(card.dataset.status).toBe("cancelled");
    expect(card.querySelector(".hn-tool-status")!.textContent).toBe("Cancelled");
    expect(card.querySelector(".hn-tool-duration")!.textContent).toBe("42 ms");
  });

  it("caps a long result, collapsed, with a Show all button", () => {
    const long = "x".repeat(RESULT_PREVIEW_CHARS + 500);
    const view = createPartView(toolPart("tool:c1", { status: "completed", result: long }), "assistant:t", context());
    const result = view.el.querySelector<HTMLDetailsElement>("details.hn-tool-result")!;
    const body = view.el.querySelector(".hn-tool-result-body")!;
    const showAll = view.el.querySelector<HTMLButtonElement>("button.hn-show-all")!;
    expect(result.open).toBe(false);
    expect(result.hidden).toBe(false);
    expect(body.textContent).toHaveLength(RESULT_PREVIEW_CHARS + 1); // + the ellipsis
    expect(showAll.hidden).toBe(false);
    expect(showAll.textContent).toBe("Show all (2,500 characters)");
    showAll.click();
    expect(result.open).toBe(true);
    expect(body.textContent).toBe(long);
    expect(showAll.hidden).toBe(true);
  });

  it("shows a short structured result whole, as JSON", () => {
    const view = createPartView(toolPart("tool:c1", { status: "completed", result: { ok: true } }), "assistant:t", context());
    expect(view.el.querySelector(".hn-tool-result-body")!.textContent).toBe('{\n  "ok": true\n}');
    expect(view.el.querySelector<HTMLButtonElement>(".hn-show-all")!.hidden).toBe(true);
  });
});

describe("formatting", () => {
  it("formats durations", () => {
    expect([0.2, 1.25, 75].map(formatDuration)).toEqual(["200 ms", "1.3 s", "1 min 15 s"]);
  });

  it("formats usage from whichever fields are present", () => {
    expect(formatUsage({ prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 })).toBe("10 in · 5 out tokens"); // the total is on hover
    expect(formatUsage({ cost_usd: 0.5, model: "x" })).toBe("$0.50");
    expect(formatUsage({ estimated_cost_usd: 0.00123 })).toBe("$0.0012");
    expect(formatUsage(null)).toBe("");
    expect(formatUsage({})).toBe("");
  });

  it("reads the Dashboard's usage: tokens, a context gauge, the rest on hover, no raw keys", () => {
    // message.complete usage as Hermes 0.19.0 sends it (session-cumulative).
    const usage = {
      model: "fake-model", input: 10, output: 5, reasoning: 0, prompt: 10, completion: 5, total: 15, calls: 1,
      context_used: 10, context_max: 200000, context_percent: 0, compressions: 0, active_subagents: 0,
    };
    const line = formatUsage(usage);
    // the session's running totals say so; a turn's own counts (turns/usage.py) read as the reply's
    expect(line).toBe("session: 10 in · 5 out tokens · context 10 / 200,000 (0%)");
    expect(formatUsage({ ...usage, input: 30, output: 15, turn: { input: 20, output: 10, reasoning: 0, calls: 2 } }))
      .toBe("20 in · 10 out tokens · context 10 / 200,000 (0%)");
    expect(line).not.toMatch(/context_used|context_max|compressions|active_subagents/);
    const s = summarizeUsage(usage)!;
    expect(s.context).toMatchObject({ used: 10, max: 200000, percent: 0 });
    expect(s.details).toBe("model fake-model, total 15, calls 1, compressions 0, active subagents 0");
    expect(summarizeUsage({ input: 10, context_used: 50000, context_max: 200000 })!.context!.percent).toBe(25);
  });

  it("renders the usage line with a gauge and a hover title", () => {
    const el = createMessageView(
      { id: "assistant:t1", role: "assistant", status: "complete", parts: [], error: null,
        usage: { input: 1200, output: 34, context_used: 50000, context_max: 200000, cost_usd: 0.0042, calls: 2,
          turn: { input: 1200, output: 34, calls: 2 } } },
      { send: () => undefined, answered: new Map() } as never,
    ).el;
    const usage = el.querySelector<HTMLElement>(".hn-usage")!;
    expect(usage.hidden).toBe(false);
    expect(usage.textContent).toBe("1,200 in · 34 out tokens · context 50,000 / 200,000 (25%) · $0.0042");
    expect(usage.title).toBe("calls 2");
    const gauge = usage.querySelector<HTMLElement>(".hn-gauge[role=meter]")!;
    expect(gauge.getAttribute("aria-valuenow")).toBe("50000");
    expect(gauge.querySelector<HTMLElement>(".hn-gauge-fill")!.style.width).toBe("25%");
  });
});

describe("marker", () => {
  it("is a centered inert divider whose text screen readers get as its name", () => {
    const text = "Context compressed: 8 → 6 messages <img src=x onerror=alert(1)>";
    const view = createPartView(part({ id: "marker:1", kind: "marker", text }), "assistant:t", context());
    const line = view.el.querySelector<HTMLElement>(".hn-marker")!;
    expect(view.el.dataset.kind).toBe("marker");
    expect(line.getAttribute("role")).toBe("separator");
    expect(line.getAttribute("aria-label")).toBe(text);
    expect(line.querySelector(".hn-marker-text")!.textContent).toBe(text);
    expect(view.el.querySelector("img")).toBeNull(); // shown as text, never as markup
    expect(view.el.querySelector("button, a, input")).toBeNull(); // nothing to act on
    view.update(part({ id: "marker:1", kind: "marker", text: "Context compression skipped" }));
    expect(line.getAttribute("aria-label")).toBe("Context compression skipped");
    expect(view.el.querySelector(".hn-marker")).toBe(line);
  });

  it("sits between the parts of a streaming message, with the text after it in its own part", () => {
    const view = createMessageView(
      {
        id: "assistant:t",
        role: "assistant",
        status: "streaming",
        parts: [
          toolPart("tool:c1", { name: "terminal", status: "completed" }),
          part({ id: "marker:1", kind: "marker", text: "Context compressed" }),
          textPart("text:2", "Command output"),
        ],
        usage: null,
        error: null,
      },
      context(),
    );
    const kinds = [...view.el.querySelectorAll<HTMLElement>(".hn-part")].map((el) => el.dataset.kind);
    expect(kinds).toEqual(["tool", "marker", "text"]);
  });
});
