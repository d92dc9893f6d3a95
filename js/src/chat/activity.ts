// What the agent did besides talking: its task list (the `todo` part), its subagents (`subagent:<id>` parts)
// and the file change a tool made (a tool part's `diff`). Twin of hermes_notebook/render_activity.py.
// Everything here is server text: it goes in through textContent only, never parsed as HTML.
// A running subagent's card has Steer (a text box; Enter sends) and Stop: they show only where this Hermes offers
// them (the view sets `data-subagent-steer` / `data-subagent-stop` on .hn-chat from its `subagent_controls`
// answer; CSS hides the rest) and only while the subagent runs.

import { h, setAttr, setText } from "../dom";
import type { Part, TodoItem } from "../types/turns";

import type { ChatCommand } from "../types/chat";
import type { PartView } from "./part_view";

const TODO_LABELS: Record<string, string> = {
  completed: "done",
  in_progress: "in progress",
  pending: "pending",
  cancelled: "cancelled",
};

/** The task list as a checklist: one row per item, its state as a checkbox (read-only) and a word. */
export function todoView(el: HTMLElement, first: Part): PartView {
  const count = h("span", { class: "hn-todo-count" });
  const list = h("ul", { class: "hn-todo-list", role: "list" });
  el.append(h("div", { class: "hn-todo" }, h("div", { class: "hn-todo-header" }, "Plan ", count), list));
  let shown = "";
  const view: PartView = {
    el,
    part: first,
    update(part) {
      this.part = part;
      const items = part.todos ?? [];
      const key = JSON.stringify(items);
      if (key === shown) return; // unchanged snapshot: keep the nodes
      shown = key;
      const done = items.filter((item) => item.status === "completed").length;
      setText(count, `${done}/${items.length} done`);
      list.replaceChildren(...items.map(todoRow));
    },
  };
  view.update(first);
  return view;
}

function todoRow(item: TodoItem): HTMLElement {
  const status = TODO_LABELS[item.status] ? item.status : "pending";
  const box = h("input", { type: "checkbox", disabled: true, "aria-label": TODO_LABELS[status] });
  box.checked = status === "completed";
  box.indeterminate = status === "in_progress";
  return h(
    "li",
    { class: "hn-todo-item", "data-status": status, "data-nested": item.parent ? "true" : null },
    box,
    h("span", { class: "hn-todo-text" }, item.content),
    h("span", { class: "hn-todo-state" }, TODO_LABELS[status]),
  );
}

const SUBAGENT_LABELS: Record<string, string> = {
  queued: "Queued",
  running: "Running…",
  completed: "Done",
  failed: "Failed",
  error: "Error",
  timeout: "Timed out",
  interrupted: "Interrupted",
};

/** A subagent: a collapsible card (goal, status, its tool calls, its summary), indented by its depth. */
export function subagentView(el: HTMLElement, first: Part, ctx?: { send(message: ChatCommand): void }): PartView {
  const goal = h("span", { class: "hn-subagent-goal" });
  const status = h("span", { class: "hn-tool-status", role: "status" });
  const activity = h("div", { class: "hn-subagent-activity" });
  const tools = h("ul", { class: "hn-subagent-tools" });
  const summary = h("pre", { class: "hn-subagent-summary" });
  let current = first;
  const controls = subagentControls(() => current.subagent?.id ?? "", ctx);
  const details = h(
    "details",
    { class: "hn-subagent" },
    h("summary", {}, h("span", { class: "hn-subagent-label" }, "Subagent"), goal, status),
    activity,
    tools,
    summary,
  );
  el.append(details, controls); // outside the card: reachable while it is collapsed
  let shown = "";
  const view: PartView = {
    el,
    part: first,
    update(part) {
      this.part = current = part;
      const info = part.subagent;
      const key = JSON.stringify([info, part.status, part.duration]);
      if (info === undefined || key === shown) return;
      shown = key;
      const state = part.status === "cancelled" ? "cancelled" : info.status;
      const depth = Math.max(0, Math.min(8, Number(info.depth) || 0));
      el.className = el.className.replace(/\s*hn-depth-\d+/g, "") + ` hn-depth-${depth}`; // a class: no inline style
      setAttr(details, "data-status", state);
      controls.hidden = state !== "running" || ctx === undefined;
      setAttr(details, "aria-level", String(depth + 1));
      setText(goal, info.goal);
      const time = part.duration === null ? "" : ` · ${part.duration.toFixed(1)} s`;
      setText(status, `${SUBAGENT_LABELS[state] ?? "Cancelled"}${time}`);
      setText(activity, info.activity ?? "");
      activity.hidden = !info.activity;
      tools.replaceChildren(
        ...info.tools.map((tool) =>
          h("li", {}, h("span", { class: "hn-tool-name" }, tool.name), " ", h("code", {}, tool.preview ?? "")),
        ),
      );
      tools.hidden = info.tools.length === 0;
      setText(summary, info.summary ?? "");
      summary.hidden = !info.summary;
    },
  };
  view.update(first);
  return view;
}

/** Steer (text + button) and Stop for one subagent; `id()` is the subagent's id when clicked. */
function subagentControls(id: () => string, ctx?: { send(message: ChatCommand): void }): HTMLElement {
  const input = h("input", { type: "text", class: "hn-subagent-steer-input", "aria-label": "Steer this subagent",
    placeholder: "Guide this subagent…" });
  const steer = h("button", { type: "button", class: "hn-subagent-steer", title: "Send this text to the subagent (Enter)" }, "Steer");
  const stop = h("button", { type: "button", class: "hn-subagent-stop", title: "Stop this subagent" }, "Stop");
  const sendSteer = (): void => {
    const text = input.value;
    if (text.trim() === "" || id() === "") return;
    ctx?.send({ type: "subagent_steer", subagent_id: id(), text });
    input.value = "";
  };
  steer.addEventListener("click", sendSteer);
  input.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.isComposing) {
      event.preventDefault();
      sendSteer();
    }
  });
  stop.addEventListener("click", () => id() !== "" && ctx?.send({ type: "subagent_stop", subagent_id: id() }));
  return h("div", { class: "hn-subagent-controls", role: "group", "aria-label": "Subagent controls", hidden: true },
    input, steer, stop);
}

/** How a diff line is coloured: by its first characters only (the same rule as render_activity.py). */
export function diffLineKind(line: string): "hunk" | "add" | "del" | "context" | "file" | "meta" {
  if (line.startsWith("@@")) return "hunk";
  if (line.startsWith("+")) return "add";
  if (line.startsWith("-")) return "del";
  if (line.startsWith(" ")) return "context";
  return line.includes(" → ") ? "file" : "meta";
}

/** A tool's diff: one text row per line, classed by its prefix; the same text is never rebuilt twice. */
export function renderDiff(container: HTMLElement, diff: string | undefined): void {
  const text = diff ?? "";
  if (container.dataset.diff === text) return;
  container.dataset.diff = text;
  container.hidden = text === "";
  const rows = text === "" ? [] : text.split("\n");
  const body = h("div", { class: "hn-diff", role: "group", "aria-label": "Changes" });
  body.append(...rows.map((line) => h("div", { class: `hn-diff-line hn-diff-${diffLineKind(line)}` }, line)));
  container.replaceChildren(h("summary", {}, `Changes · ${rows.length} lines`), body);
}
