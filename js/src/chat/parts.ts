// DOM for one part of a message. Each part owns a stable element; `update(part)` patches it in place
// and touches nothing else, so streaming into one part never rebuilds its neighbours (the view calls
// update only for parts whose object changed, at most once per animation frame).

import { copyButton, displayText, h, setAttr, setText } from "../dom";
import type { Part, PartKind } from "../types/turns";
import { renderInteraction, type InteractionContext, type InteractionIds } from "./interactions";
import { renderDiff, subagentView, todoView } from "./activity";
import { benchHooks } from "./bench";
import { renderCellChange } from "./cell_change";
import { renderRunUndo } from "./run_undo";
import { renderSentImages } from "./sent_images";
import { renderImages, withoutMediaTags } from "./images";
import { renderRisk } from "./risk";
import { createIncrementalMarkdown } from "./incremental";
import { renderMarkdownInto } from "./markdown";
import { takeAppended } from "./state";
import type { PartContext, PartView } from "./part_view";

/** Longest tool result shown before "Show all". */
export const RESULT_PREVIEW_CHARS = 2000;

/** Builds the view of one kind of part; `part` is its first state (the view shows it at once). */
type PartFactory = (el: HTMLElement, part: Part, ids: InteractionIds, ctx: PartContext, settled: boolean) => PartView;

/** One view per part kind: the compiler checks every kind has one (types/turns.ts `PartKind`). */
const PART_VIEWS: Record<PartKind, PartFactory> = {
  text: (el, part, ids, ctx, settled) => textView(el, part, ctx, settled, ids),
  reasoning: (el, part) => reasoningView(el, part),
  tool: (el, part, ids, ctx, settled) => toolView(el, part, ids, ctx, settled),
  marker: (el, part) => markerView(el, part),
  todo: (el, part) => todoView(el, part),
  subagent: (el, part, _ids, ctx) => subagentView(el, part, ctx),
};

/**
 * `settled`: the message is not streaming (history, a finished turn), so its text is rendered once, as final,
 * instead of as a stream and then again when it settles. A kind this view does not know is shown as text.
 */
export function createPartView(part: Part, messageId: string, ctx: PartContext, settled = false): PartView {
  const el = h("div", { class: `hn-part hn-part-${part.kind}`, "data-part-id": part.id, "data-kind": part.kind });
  const factory = PART_VIEWS[part.kind] ?? PART_VIEWS.text;
  return factory(el, part, { message_id: messageId, part_id: part.id }, ctx, settled);
}

/** Markdown into `body`: incrementally (only the growing tail), or fully per update in the benchmark's naive mode. */
function markdownTarget(body: HTMLElement): (text: string, final: boolean, appended?: string) => void {
  if (benchHooks()?.naive) return (text) => renderMarkdownInto(body, text);
  const renderer = createIncrementalMarkdown(body);
  return (text, final, appended) => renderer.update(text, final, appended);
}

function textView(el: HTMLElement, first: Part, ctx: PartContext, settledAtStart: boolean, ids: InteractionIds): PartView {
  const { role } = ctx;
  const title = first.name;
  const body = h("div", { class: role === "user" ? "hn-plain" : "hn-markdown" });
  const images = h("div", { class: "hn-images", hidden: true }); // the images the text names (images.ts)
  // A titled text part (the prompt as sent, when %hermes filled placeholders) shows collapsed under its title.
  el.append(title ? h("details", { class: "hn-sent" }, h("summary", {}, title), body) : body, images);
  const render = role === "user" ? null : markdownTarget(body);
  let shown: string | null = null;
  let settled = settledAtStart;
  let previous: Part | null = null; // what the last update showed (none yet: the first renders in full)
  const view: PartView = {
    el,
    part: first,
    update(part) {
      // Streaming: only the appended text is handed on, so a batch never reads the whole message.
      const appended = previous === null ? null : takeAppended(part, previous);
      previous = this.part = part;
      renderImages(images, part.images, ids, ctx.image);
      const text = withoutMediaTags(part.text, part.images);
      if (text !== part.text) {
        // its images are shown below: the MEDIA: tags naming them go (a whole render: the text shrank)
        if (text === shown) return;
        shown = text;
        if (render === null) setText(body, text);
        else render(text, settled);
        return;
      }
      if (appended === "" || (appended === null && part.text === shown)) return;
      shown = part.text;
      if (render === null) setText(body, part.text);
      else render(part.text, settled, appended ?? undefined);
    },
    settle() {
      if (settled) return;
      settled = true;
      if (render !== null && shown !== null) render(shown, true, "");
    },
  };
  view.update(first);
  return view;
}

/** A line in the conversation that is no one's words (a context compression): a centered divider, plain text. */
function markerView(el: HTMLElement, first: Part): PartView {
  const label = h("span", { class: "hn-marker-text" });
  const line = h("div", { class: "hn-marker", role: "separator", "aria-orientation": "horizontal" }, label);
  el.append(line);
  const view: PartView = {
    el,
    part: first,
    update(part) {
      this.part = part;
      setText(label, part.text);
      // A separator's content is presentational to assistive technology: its name is what is read.
      setAttr(line, "aria-label", part.text);
    },
  };
  view.update(first);
  return view;
}

function reasoningView(el: HTMLElement, first: Part): PartView {
  const summary = h("summary", {}, "Reasoning");
  const body = h("div", { class: "hn-markdown hn-reasoning-body" });
  const details = h("details", { class: "hn-reasoning" }, summary, body);
  el.append(details);
  const render = markdownTarget(body);
  let shown: string | null = null;
  let settled = false;
  const view: PartView = {
    el,
    part: first,
    update(part) {
      this.part = part;
      // Closed reasoning isn't rendered at all; it catches up when opened.
      if (details.open && part.text !== shown) {
        shown = part.text;
        render(part.text, settled);
      }
    },
    settle() {
      if (settled) return;
      settled = true;
      if (shown !== null) render(shown, true);
    },
  };
  details.addEventListener("toggle", () => view.update(view.part));
  view.update(first);
  return view;
}

function toolView(el: HTMLElement, first: Part, ids: InteractionIds, ctx: InteractionContext, settledAtStart: boolean): PartView {
  const name = h("span", { class: "hn-tool-name" });
  const status = h("span", { class: "hn-tool-status", role: "status" });
  const duration = h("span", { class: "hn-tool-duration" });
  const preview = h("code", { class: "hn-tool-preview" });
  const header = h("div", { class: "hn-tool-header" }, name, preview, status, duration);
  const risk = h("div", { class: "hn-risk", role: "note", hidden: true }); // Hermes flagged the output (risk.ts)
  const images = h("div", { class: "hn-images", hidden: true });
  const argsBody = h("pre", { class: "hn-tool-arguments" });
  const args = h("details", { class: "hn-tool-args" }, h("summary", {}, "Arguments"), argsBody);
  const resultSummary = h("summary", {});
  const resultBody = h("pre", { class: "hn-tool-result-body" });
  const showAll = h("button", { type: "button", class: "hn-show-all" }, "Show all");
  const result = h(
    "details",
    { class: "hn-tool-result" },
    resultSummary,
    h("div", { class: "hn-tool-result-actions" }, copyButton(() => resultText, "Copy result"), showAll),
    resultBody,
  );
  const interactionSlot = h("div", { class: "hn-interaction-slot" });
  const diff = h("details", { class: "hn-tool-diff", open: true });
  const cellChange = h("div", { class: "hn-cell-change", hidden: true });
  const sentImages = h("div", { class: "hn-sent-images", hidden: true });
  const runUndo = h("div", { class: "hn-run-undo", hidden: true });
  const card = h("div", { class: "hn-tool" }, header, risk, args, result, images, diff, cellChange, sentImages, interactionSlot, runUndo);
  el.append(card);

  let resultText = "";
  let expanded = false;
  let interactionKey: string | null = null;
  let ended = settledAtStart; // the message stopped streaming: a card still pending is inert
  const showResult = (): void => {
    const full = expanded || resultText.length <= RESULT_PREVIEW_CHARS;
    setText(resultBody, full ? resultText : `${resultText.slice(0, RESULT_PREVIEW_CHARS)}…`);
    showAll.hidden = full;
    showAll.textContent = `Show all (${resultText.length.toLocaleString()} characters)`;
  };
  showAll.addEventListener("click", () => {
    expanded = true;
    result.open = true;
    showResult();
  });

  const view: PartView = {
    el,
    part: first,
    update(part) {
      this.part = part;
      const state = part.status ?? "running";
      setAttr(card, "data-status", state);
      setText(name, part.label?.name ?? part.name ?? "tool"); // the label: turns/labels.py
      setText(status, STATUS_LABELS[state] ?? state);
      setText(duration, part.duration === null ? "" : formatDuration(part.duration));

      const argsText = displayText(part.arguments);
      setText(preview, part.label ? (part.label.detail ?? "") : (part.preview ?? oneLine(argsText)));
      preview.hidden = preview.textContent === "";
      setText(argsBody, argsText);
      args.hidden = argsText === "";

      const text = shownResult(part.result);
      if (text !== resultText) {
        resultText = text;
        resultSummary.textContent = `${state === "error" ? "Error" : "Result"} · ${text.length.toLocaleString()} characters`;
        showResult();
      }
      result.hidden = text === "";
      renderDiff(diff, part.diff);
      renderCellChange(cellChange, part.cell_change);
      renderSentImages(sentImages, part.sent_images);
      renderRunUndo(runUndo, part.run_undo, (message) => ctx.send(message));
      renderRisk(risk, part.risk);
      renderImages(images, part.images, ids, ctx.image);

      // Rebuild the card only when the interaction itself changes, so typing into a pending clarify
      // or secret input survives unrelated patches to the tool (status, duration, result).
      const interaction = part.interaction;
      const key = interaction === null ? null : JSON.stringify(interaction) + (ended ? " ended" : "");
      if (key !== interactionKey) {
        interactionKey = key;
        if (interaction === null) interactionSlot.replaceChildren();
        else interactionSlot.replaceChildren(renderInteraction(interaction, ids, ctx, ended));
      }
    },
    settle() {
      if (ended) return;
      ended = true;
      if (this.part.interaction?.status === "pending") this.update(this.part);
    },
  };
  view.update(first);
  return view;
}

/** A tool's result as shown: a kernel tool's `{"result": "..."}` as its text (turns/labels.py `result_text`). */
export function shownResult(result: unknown): string {
  if (result !== null && typeof result === "object" && !Array.isArray(result)) {
    const keys = Object.keys(result);
    const inner = (result as Record<string, unknown>).result;
    if (keys.length === 1 && keys[0] === "result" && typeof inner === "string") return inner;
  }
  return displayText(result);
}

const STATUS_LABELS: Record<string, string> = {
  running: "Running…",
  completed: "Done",
  error: "Error",
  cancelled: "Cancelled",
};

export function formatDuration(seconds: number): string {
  if (seconds < 1) return `${Math.round(seconds * 1000)} ms`;
  if (seconds < 60) return `${seconds.toFixed(1)} s`;
  return `${Math.floor(seconds / 60)} min ${Math.round(seconds % 60)} s`;
}

function oneLine(text: string, max = 120): string {
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > max ? `${line.slice(0, max)}…` : line;
}
