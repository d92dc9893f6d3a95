// Interaction cards hung on tool parts: approval, clarify, sudo and secret, and code (a kernel tool's Run/Deny:
// the kernel asks it, not the server, and the whole code is shown, since exactly that code runs on Run).
//
// - Every answer goes out once: the card disables itself on the first click or submit, and the
//   request id is remembered for the life of the view, so a re-render of a still-pending card (the
//   kernel has not patched it to "answered" yet) can't offer the buttons again.
// - sudo/secret values are sent once with {type: "secret"} and the input is cleared. They are never
//   written to model state (the model is saved with the notebook).
// - The command is shown exactly as it runs (hidden characters revealed, nothing replaced). Where Hermes itself
//   hid part of it before sending (`masked`, turns/masked.py), the card says so in words and offers only a
//   one-time allow or a deny: a grant for the session or forever would cover what nobody saw.

import { armed, FirstShown, holdClicks } from "../click_guard";
import { h } from "../dom";
import type { ClarifyQuestion, Interaction } from "../types/turns";

import type { ChatCommand } from "../types/chat";
import { revealLines } from "./reveal";
import type { AskImage } from "./images";

export interface InteractionContext {
  send(message: ChatCommand): void;
  /** interactions already answered from this view, keyed by {@link answerKey} */
  answered: Set<string>;
  /** asks the kernel for a part's image (images.ts); absent where no kernel answers */
  image?: AskImage;
}

export interface InteractionIds {
  message_id: string;
  part_id: string;
}

const APPROVAL_LABELS: Record<string, string> = {
  once: "Allow once",
  session: "Allow for this session",
  always: "Always allow",
  deny: "Deny",
};
const CODE_LABELS: Record<string, string> = {
  run: "Run",
  deny: "Deny",
  allow_reads: "Don't run; allow reads for this session",
};
// A `run` card is an approved kernel run in progress (kernel/runs.py): its one button is Stop, and the kernel
// settles it with how the run ended.
const RUN_LABELS: Record<string, string> = { stop: "Stop" };
const RUN_OUTCOMES: Record<string, string> = {
  stop: "Stopped",
  started: "Started",
  finished: "Finished",
  stopped: "Stopped",
  timed_out: "Stopped at the time limit",
  turn_ended: "Stopped: the turn ended",
  still_running: "Stop sent; still running (blocked outside Python)",
};
// When the server names no choices, only a one-time allow is offered ("session" and "always" must be the server's
// own offer). The kernel folds an empty list into the same pair (turns.DEFAULT_APPROVAL_CHOICES; test_contract.py).
export const DEFAULT_APPROVAL_CHOICES = ["once", "deny"];
/** What the card, the toast and the kernel's text prompt say about a command Hermes partly hid. */
export const MASKED_NOTICE = "Hermes hid part of this command (the *** or ... parts): what runs is not fully shown.";

/** When each Run card's code first showed: a re-render of the same code keeps its moment. */
const RUN_CARDS = new FirstShown();

const STATUS_TEXT: Record<Interaction["status"], string> = {
  pending: "Waiting for your answer",
  answered: "Answered",
  cancelled: "Cancelled: the request was withdrawn",
  expired: "Expired: no answer in time",
};

/**
 * Build the card for an interaction in its current status. `ended`: its message is no longer streaming, so a
 * request still pending in it is withdrawn (request ids repeat across turns: a live card of an ended turn could
 * answer the next turn's request with the same id). The kernel refuses such an answer too.
 */
export function renderInteraction(
  interaction: Interaction,
  ids: InteractionIds,
  ctx: InteractionContext,
  ended = false,
): HTMLElement {
  const { kind } = interaction;
  // The card's owner may name it (a preview runs in a copy of the kernel): plain text, shown as given.
  const title = interaction.title || TITLES[kind];
  const withdrawn = ended && interaction.status === "pending";
  const status: Interaction["status"] = withdrawn ? "cancelled" : interaction.status;
  const sent = status === "pending" && ctx.answered.has(answerKey(ids, interaction));
  const card = h("div", {
    class: `hn-interaction hn-interaction-${kind}`,
    "data-kind": kind,
    "data-status": sent ? "sent" : status,
    "data-request-id": interaction.request_id,
    role: "group",
    "aria-label": `${title} request`,
  });
  card.append(h("div", { class: "hn-interaction-title" }, title));
  // A Run card says what its code does before the code: a listing of many cells would push a warning (a
  // restart loses the kernel's state) out of view.
  const describeFirst = kind === "code" && Boolean(interaction.description);
  if (describeFirst) card.append(h("p", { class: "hn-interaction-description" }, interaction.description));
  if (interaction.command) card.append(commandBlock(interaction.command, kind === "code" || kind === "run"));
  if (interaction.masked) card.append(h("p", { class: "hn-interaction-masked", role: "note" }, MASKED_NOTICE));
  const questions = multiQuestions(interaction);
  if (interaction.question && !questions) {
    card.append(h("p", { class: "hn-interaction-question" }, interaction.question));
  }
  // A settled Run card keeps its code and says how the run ended: what it said while running (Stop, the time
  // limit) no longer holds.
  const settledRun = kind === "run" && status !== "pending";
  if (interaction.description && !describeFirst && !settledRun) {
    card.append(h("p", { class: "hn-interaction-description" }, interaction.description));
  }
  const active = status === "pending" && !sent;
  const respond = (response: string, shown: string): void => {
    if (!lock(card, ctx, ids, interaction)) return;
    ctx.send({ type: "respond", ...ids, request_id: interaction.request_id, response });
    showOutcome(card, `Sent: ${shown}`);
  };

  if (kind === "approval") {
    const offered = interaction.choices.length > 0 ? interaction.choices : DEFAULT_APPROVAL_CHOICES;
    // A partly hidden command: nothing beyond this one run (the kernel refuses other answers too).
    const choices = interaction.masked ? offered.filter((c) => DEFAULT_APPROVAL_CHOICES.includes(c)) : offered;
    card.append(choiceButtons(choices, active, (c) => APPROVAL_LABELS[c] ?? c, respond));
  } else if (kind === "code") {
    // A Run card whose code just appeared or changed ignores clicks for a moment (../click_guard.ts).
    const shownAt = RUN_CARDS.at(answerKey(ids, interaction), `${interaction.command ?? ""}\u0000${interaction.choices}`);
    const guarded = (response: string, shown: string): void => {
      if (armed(shownAt)) respond(response, shown);
    };
    const row = choiceButtons(interaction.choices, active, (c) => CODE_LABELS[c] ?? c, guarded);
    if (active) holdClicks(Array.from(row.querySelectorAll("button")), shownAt);
    card.append(row);
  } else if (kind === "run") {
    if (!settledRun) card.append(choiceButtons(interaction.choices, active, (c) => RUN_LABELS[c] ?? c, respond));
  } else if (kind === "clarify" && questions) {
    card.append(questionsForm(questions, active, respond));
  } else if (kind === "clarify") {
    if (interaction.choices.length > 0) card.append(choiceButtons(interaction.choices, active, (c) => c, respond));
    card.append(freeTextForm(active, respond));
  } else {
    card.append(secretForm(interaction, ids, ctx, card, active));
  }

  const outcome = h("p", { class: "hn-interaction-outcome", role: "status" });
  card.append(outcome);
  if (sent) outcome.textContent = "Answer sent, waiting for Hermes";
  else if (status === "answered") outcome.textContent = answeredText(interaction);
  else if (withdrawn) outcome.textContent = "Cancelled: the turn ended";
  else if (status !== "pending") {
    outcome.textContent = interaction.reason ? `${STATUS_TEXT[status]} (${interaction.reason})` : STATUS_TEXT[status];
  }
  return card;
}

/** The questions of a clarify that needs one answer per question (several, or a multi-select one). */
function multiQuestions(interaction: Interaction): ClarifyQuestion[] | null {
  const questions = interaction.questions;
  if (interaction.kind !== "clarify" || !questions || questions.length === 0) return null;
  return questions.length > 1 || questions[0]?.multi_select ? questions : null;
}

/**
 * One card, one answer per question: radio buttons (pick one) or checkboxes (pick any) plus a free-text field
 * ("Other", or the only field of an open question). Sent once (the button, or Enter in any field), as a JSON
 * object keyed by question id; an unanswered question is null (skipped).
 */
function questionsForm(
  questions: ClarifyQuestion[],
  active: boolean,
  respond: (response: string, shown: string) => void,
): HTMLElement {
  const form = h("form", { class: "hn-interaction-form hn-questions" });
  const readers: (() => string | string[] | null)[] = [];
  questions.forEach((q, index) => {
    const name = `hn-q-${index}-${Math.random().toString(36).slice(2, 8)}`;
    const fieldset = h("fieldset", { class: "hn-question", "data-qid": q.qid });
    fieldset.append(h("legend", { class: "hn-interaction-question" }, q.question));
    const boxes: HTMLInputElement[] = [];
    for (const choice of q.choices) {
      const box = h("input", {
        type: q.multi_select ? "checkbox" : "radio",
        name,
        value: choice,
        class: "hn-question-choice",
        disabled: !active,
      });
      boxes.push(box);
      fieldset.append(h("label", { class: "hn-question-option" }, box, ` ${choice}`));
    }
    const other = h("input", {
      type: "text",
      class: "hn-answer",
      "aria-label": q.choices.length > 0 ? `Other answer to: ${q.question}` : `Answer to: ${q.question}`,
      placeholder: q.choices.length > 0 ? "Other" : "Type an answer",
      disabled: !active,
    });
    fieldset.append(other);
    form.append(fieldset);
    readers.push(() => {
      const typed = other.value.trim();
      const picked = boxes.filter((b) => b.checked).map((b) => b.value);
      if (q.multi_select) {
        const all = typed ? [...picked, typed] : picked;
        return all.length > 0 ? all : null;
      }
      return typed || picked[0] || null;
    });
  });
  form.append(h("button", { type: "submit", class: "hn-answer-submit", disabled: !active }, "Answer"));
  // Enter answers from any field of the card, a radio button or checkbox included (browsers submit only from
  // text fields); it stays here rather than reaching JupyterLab's notebook shortcuts.
  form.addEventListener("keydown", (event) => {
    const target = event.target as HTMLElement;
    if (event.key !== "Enter" || event.isComposing || event.shiftKey || target.tagName !== "INPUT") return;
    event.preventDefault();
    event.stopPropagation();
    form.requestSubmit();
  });
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const answers: Record<string, string | string[] | null> = {};
    questions.forEach((q, i) => (answers[q.qid] = readers[i]?.() ?? null));
    const shown = questions
      .map((q) => {
        const a = answers[q.qid];
        return Array.isArray(a) ? a.join(", ") : (a ?? "(skipped)");
      })
      .join("; ");
    respond(JSON.stringify(answers), shown);
  });
  return form;
}

/**
 * The command as it will run: wrapped, hidden characters and blank runs made visible (see reveal.ts), and the
 * number of lines past the first screenful said out loud, with a button to show them.
 */
function commandBlock(command: string, whole = false): HTMLElement {
  const { lines, hidden } = revealLines(command, whole ? Number.MAX_SAFE_INTEGER : undefined);
  const code = h("code", {}, lines.join("\n"));
  const block = h("div", { class: "hn-interaction-command-block" }, h("pre", { class: "hn-interaction-command" }, code));
  if (hidden > 0) {
    const more = h(
      "button",
      { type: "button", class: "hn-command-more", "aria-expanded": "false" },
      `${hidden} more line${hidden === 1 ? "" : "s"} hidden: show all`,
    );
    more.addEventListener("click", () => {
      code.textContent = revealLines(command, Number.MAX_SAFE_INTEGER).lines.join("\n");
      more.remove();
    });
    block.append(more);
  }
  return block;
}

const TITLES: Record<Interaction["kind"], string> = {
  approval: "Approval needed",
  clarify: "Hermes has a question",
  sudo: "Sudo password needed",
  secret: "Secret needed",
  code: "Hermes wants to run code in your kernel",
  run: "Hermes' code in your kernel",
};

function answeredText(interaction: Interaction): string {
  if (interaction.kind === "sudo" || interaction.kind === "secret") return "Answered (value hidden)";
  const response = interaction.response ?? "";
  if (multiQuestions(interaction) && response.startsWith("{")) {
    try {
      const answers = JSON.parse(response) as Record<string, unknown>;
      const shown = Object.values(answers).map((a) => (Array.isArray(a) ? a.join(", ") : (a ?? "(skipped)")));
      return `Answered: ${shown.join("; ")}`;
    } catch {
      // not JSON after all: shown as is below
    }
  }
  if (interaction.kind === "run") return RUN_OUTCOMES[response] ?? response;
  const labels = interaction.kind === "approval" ? APPROVAL_LABELS : interaction.kind === "code" ? CODE_LABELS : {};
  const label = labels[response] ?? response;
  return label ? `Answered: ${label}` : STATUS_TEXT.answered;
}

/**
 * Request ids are unique only within a turn (every turn numbers its approvals approval-1, approval-2, ...),
 * so "already answered" is remembered per message.
 */
export function answerKey(ids: InteractionIds, interaction: Interaction): string {
  return `${ids.message_id}\u0000${interaction.request_id}`;
}

/** Disable the card at once; false if it was already answered from here. */
function lock(card: HTMLElement, ctx: InteractionContext, ids: InteractionIds, interaction: Interaction): boolean {
  const key = answerKey(ids, interaction);
  if (ctx.answered.has(key)) return false;
  ctx.answered.add(key);
  card.dataset.status = "sent";
  for (const control of Array.from(card.querySelectorAll<HTMLButtonElement | HTMLInputElement>("button, input"))) {
    control.disabled = true;
  }
  return true;
}

function showOutcome(card: HTMLElement, text: string): void {
  const outcome = card.querySelector(".hn-interaction-outcome");
  if (outcome) outcome.textContent = text;
}

function choiceButtons(
  choices: readonly string[],
  active: boolean,
  label: (choice: string) => string,
  respond: (response: string, shown: string) => void,
): HTMLElement {
  const row = h("div", { class: "hn-interaction-choices" });
  for (const choice of choices) {
    const button = h(
      "button",
      { type: "button", class: "hn-choice", "data-choice": choice, disabled: !active },
      label(choice),
    );
    if (choice === "deny") button.classList.add("hn-choice-deny");
    button.addEventListener("click", () => respond(choice, label(choice)));
    row.append(button);
  }
  return row;
}

function freeTextForm(active: boolean, respond: (response: string, shown: string) => void): HTMLElement {
  const input = h("input", {
    type: "text",
    class: "hn-answer",
    "aria-label": "Your answer",
    placeholder: "Type an answer",
    disabled: !active,
  });
  const submit = h("button", { type: "submit", class: "hn-answer-submit", disabled: !active }, "Answer");
  const form = h("form", { class: "hn-interaction-form" }, input, submit);
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const text = input.value.trim();
    if (text) respond(text, text);
  });
  return form;
}

function secretForm(
  interaction: Interaction,
  ids: InteractionIds,
  ctx: InteractionContext,
  card: HTMLElement,
  active: boolean,
): HTMLElement {
  const kind = interaction.kind === "sudo" ? "sudo" : "secret";
  const label = kind === "sudo" ? "Sudo password" : "Secret value";
  const input = h("input", {
    type: "password",
    class: "hn-secret-input",
    "aria-label": label,
    // Browsers ignore "off" on password fields; "new-password" keeps them from filling or saving the value.
    autocomplete: "new-password",
    "data-lpignore": "true",
    "data-1p-ignore": "true",
    spellcheck: "false",
    disabled: !active,
  });
  const submit = h("button", { type: "submit", class: "hn-secret-submit", disabled: !active }, "Send");
  const form = h("form", { class: "hn-interaction-form" }, input, submit);
  const answer = (value: string, shown: string): void => {
    if (!lock(card, ctx, ids, interaction)) return;
    input.value = ""; // cleared before anything else can read it
    ctx.send({ type: "secret", ...ids, request_id: interaction.request_id, kind, value });
    showOutcome(card, shown);
  };
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    if (input.value !== "") answer(input.value, "Sent (value hidden)");
  });
  if (kind === "secret") {
    // Hermes reads an empty secret as "skipped" (dashboard-protocol.md, secret.request).
    const skip = h("button", { type: "button", class: "hn-secret-skip", disabled: !active }, "Skip");
    skip.addEventListener("click", () => answer("", "Skipped"));
    form.append(skip);
  }
  return form;
}
