import { describe, expect, it } from "vitest";

import { diffLineKind } from "../src/chat/activity";
import { createPartView } from "../src/chat/parts";
import type { PartContext } from "../src/chat/part_view";
import type { Subagent, TodoItem } from "../src/types/turns";
import { part, toolPart } from "./fixtures";

function context(): PartContext {
  return { role: "assistant", send: () => undefined, answered: new Set() };
}

const TODOS: TodoItem[] = [
  { id: "1", content: "Read <b>x</b>", status: "completed", parent: null },
  { id: "2", content: "Write", status: "in_progress", parent: null },
  { id: "3", content: "Ship", status: "pending", parent: "2" },
];

function subagent(fields: Partial<Subagent> = {}): Subagent {
  return {
    id: "sa-0-a1", parent_id: null, depth: 0, goal: "RUN echo child", status: "running", model: "fake-model",
    task_index: 0, task_count: 1, activity: "(⌐■_■) reflecting...", tools: [], summary: null, ...fields,
  };
}

describe("the task list", () => {
  it("is a read-only checklist: done, in progress and pending items, nested ones indented", () => {
    const view = createPartView(part({ id: "todo", kind: "todo", todos: TODOS }), "assistant:t", context());
    const rows = Array.from(view.el.querySelectorAll<HTMLElement>(".hn-todo-item"));
    expect(rows.map((r) => r.dataset.status)).toEqual(["completed", "in_progress", "pending"]);
    expect(rows.map((r) => r.querySelector(".hn-todo-text")!.textContent)).toEqual(["Read <b>x</b>", "Write", "Ship"]);
    const boxes = rows.map((r) => r.querySelector<HTMLInputElement>("input[type=checkbox]")!);
    expect(boxes.map((b) => [b.checked, b.indeterminate, b.disabled])).toEqual([
      [true, false, true], [false, true, true], [false, false, true],
    ]);
    expect(rows[2]!.dataset.nested).toBe("true");
    expect(view.el.querySelector("b")).toBeNull();
    expect(view.el.querySelector(".hn-todo-count")!.textContent).toBe("1/3 done");
  });

  it("updates in place with a new snapshot and keeps its nodes for the same one", () => {
    const view = createPartView(part({ id: "todo", kind: "todo", todos: TODOS }), "assistant:t", context());
    const first = view.el.querySelector(".hn-todo-item");
    view.update(part({ id: "todo", kind: "todo", todos: TODOS.map((t) => ({ ...t })) }));
    expect(view.el.querySelector(".hn-todo-item")).toBe(first);
    view.update(part({ id: "todo", kind: "todo", todos: TODOS.map((t) => ({ ...t, status: "completed" as const })) }));
    expect(view.el.querySelector(".hn-todo-count")!.textContent).toBe("3/3 done");
  });
});

describe("subagents", () => {
  it("are collapsible cards with the goal, status, live activity, tool calls and summary", () => {
    const view = createPartView(
      part({ id: "subagent:sa-0-a1", kind: "subagent", status: "running", subagent: subagent() }),
      "assistant:t",
      context(),
    );
    const card = view.el.querySelector<HTMLDetailsElement>("details.hn-subagent")!;
    expect(card.querySelector(".hn-subagent-goal")!.textContent).toBe("RUN echo child");
    expect(card.querySelector(".hn-tool-status")!.textContent).toBe("Running…");
    expect(card.querySelector<HTMLElement>(".hn-subagent-activity")!.hidden).toBe(false);
    view.update(part({
      id: "subagent:sa-0-a1", kind: "subagent", status: "completed", duration: 0.61,
      subagent: subagent({ status: "completed", activity: null, summary: "child said hi",
        tools: [{ name: "terminal", preview: "echo child" }] }),
    }));
    expect(view.el.querySelector("details.hn-subagent")).toBe(card);
    expect(card.dataset.status).toBe("completed");
    expect(card.querySelector(".hn-tool-status")!.textContent).toBe("Done · 0.6 s");
    expect(card.querySelector(".hn-subagent-tools li")!.textContent).toBe("terminal echo child");
    expect(card.querySelector(".hn-subagent-summary")!.textContent).toBe("child said hi");
    expect(card.querySelector<HTMLElement>(".hn-subagent-activity")!.hidden).toBe(true);
  });

  it("nest by depth and show a cancelled turn's subagent as cancelled", () => {
    const nested = createPartView(
      part({ id: "subagent:sa-1", kind: "subagent", status: "cancelled",
        subagent: subagent({ id: "sa-1", parent_id: "sa-0-a1", depth: 2 }) }),
      "assistant:t",
      context(),
    );
    expect(nested.el.classList.contains("hn-depth-2")).toBe(true);
    expect(nested.el.querySelector("details")!.getAttribute("aria-level")).toBe("3");
    expect(nested.el.querySelector(".hn-tool-status")!.textContent).toBe("Cancelled");
    expect(nested.el.hasAttribute("style")).toBe(false);
  });
});

describe("a tool's diff", () => {
  it("is one text row per line, coloured by prefix, never parsed as HTML", () => {
    const diff = "a/f.txt → b/f.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+TWO <script>alert(1)</script>";
    const view = createPartView(toolPart("tool:p1", { name: "patch", status: "completed", diff }), "assistant:t", context());
    const rows = Array.from(view.el.querySelectorAll<HTMLElement>(".hn-diff-line"));
    expect(rows.map((r) => r.className.replace("hn-diff-line hn-diff-", ""))).toEqual(["file", "hunk", "context", "del", "add"]);
    expect(rows[4]!.textContent).toBe("+TWO <script>alert(1)</script>");
    expect(view.el.querySelector("script")).toBeNull();
    const block = view.el.querySelector<HTMLDetailsElement>("details.hn-tool-diff")!;
    expect(block.hidden).toBe(false);
    expect(block.open).toBe(true);
  });

  it("is absent from a tool without one", () => {
    const view = createPartView(toolPart("tool:t1", { name: "terminal", status: "completed" }), "assistant:t", context());
    expect(view.el.querySelector<HTMLElement>("details.hn-tool-diff")!.hidden).toBe(true);
    expect(diffLineKind("plain")).toBe("meta");
  });
});

describe("a running subagent's Steer and Stop", () => {
  it("send subagent_steer (Enter or the button) and subagent_stop for that subagent, only while it runs", () => {
    const sent: unknown[] = [];
    const ctx: PartContext = { role: "assistant", send: (m) => void sent.push(m), answered: new Set() };
    const view = createPartView(
      part({ id: "subagent:sa-0-a1", kind: "subagent", status: "running", subagent: subagent() }), "assistant:t", ctx);
    const controls = view.el.querySelector<HTMLElement>(".hn-subagent-controls")!;
    expect(controls.hidden).toBe(false);
    expect(controls.closest("details")).toBeNull(); // reachable with the card collapsed
    const input = controls.querySelector<HTMLInputElement>(".hn-subagent-steer-input")!;
    input.value = "   ";
    input.dispatchEvent(new KeyboardEvent("keydown", { key: "Enter", cancelable: true }));
    expect(sent).toEqual([]); // nothing to send
    input.value = "focus on the tests";
    input.dispatchEvent(new KeyboardEvent("keydown", { key: "Enter", cancelable: true }));
    input.value = "and be brief";
    controls.querySelector<HTMLButtonElement>(".hn-subagent-steer")!.click();
    controls.querySelector<HTMLButtonElement>(".hn-subagent-stop")!.click();
    expect(sent).toEqual([
      { type: "subagent_steer", subagent_id: "sa-0-a1", text: "focus on the tests" },
      { type: "subagent_steer", subagent_id: "sa-0-a1", text: "and be brief" },
      { type: "subagent_stop", subagent_id: "sa-0-a1" },
    ]);
    expect(input.value).toBe("");
    view.update(part({ id: "subagent:sa-0-a1", kind: "subagent", status: "completed",
      subagent: subagent({ status: "completed" }) }));
    expect(controls.hidden).toBe(true);
  });
});
