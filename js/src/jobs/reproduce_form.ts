// The Jobs view's "Reproducibility check" form: a notebook path and a schedule make a Hermes cron job that
// re-runs the saved notebook in a fresh kernel and delivers a report only when a cell's result changed. The kernel
// writes the job (`reproduce`, answered like a save: hermes_notebook/widgets/job_reproduce.py, through
// hermes.jobs.reproduce); the view never composes the job's prompt. The schedule is checked as it is typed, as in
// the job form (./form.ts). Owns: its two fields and the questions in flight.

import { h, setAttr, setText } from "../dom";
import type { Messenger } from "../messenger";
import type { CheckScheduleMsg, ReproduceMsg } from "../types/jobs";
import { ACTION_TIMEOUT_MS } from "./form";
import { formatTime } from "./logic";

const CHECK_DELAY_MS = 250;

export class ReproduceForm {
  readonly el = h("form", { "data-testid": "jobs-reproduce-form", hidden: true, "aria-label": "Reproducibility check" });
  private readonly messenger: Messenger;
  private checking: AbortController | null = null;
  private saving: AbortController | null = null;
  private checkTimer: ReturnType<typeof setTimeout> | null = null;
  private readonly notebookInput = h("input", { type: "text", "data-testid": "reproduce-notebook", required: true, placeholder: "analysis.ipynb (relative to this notebook's folder)" });
  private readonly scheduleInput = h("input", { type: "text", "data-testid": "reproduce-schedule", required: true, value: "0 6 * * *", placeholder: "0 6 * * *, every 12h" });
  private readonly scheduleCheck = h("div", { class: "hn-check hn-sub", "data-testid": "reproduce-schedule-check", "aria-live": "polite" });
  private readonly error = h("div", { class: "hn-wide hn-field-error", "data-testid": "reproduce-error", role: "alert" });
  private readonly createButton = h("button", { type: "submit", "data-testid": "reproduce-create" }, "Create check");

  constructor(messenger: Messenger) {
    this.messenger = messenger;
    const uid = Math.random().toString(36).slice(2, 8);
    this.notebookInput.id = `hn-repro-notebook-${uid}`;
    this.scheduleInput.id = `hn-repro-schedule-${uid}`;
    this.scheduleInput.addEventListener("input", () => this.checkSoon());
    const cancel = h("button", { type: "button", "data-testid": "reproduce-cancel" }, "Cancel");
    cancel.addEventListener("click", () => this.close());
    this.el.addEventListener("submit", (ev) => {
      ev.preventDefault();
      this.create();
    });
    // Enter saves here, not through JupyterLab's notebook shortcuts (as in ./form.ts).
    this.el.addEventListener("keydown", (ev) => {
      if (ev.key !== "Enter" || ev.shiftKey || (ev.target as HTMLElement).tagName !== "INPUT") return;
      ev.preventDefault();
      if (!this.createButton.disabled) this.create();
    });
    this.el.append(
      h("div", { class: "hn-wide hn-jobs-title" }, "Reproducibility check of a notebook"),
      h("div", { class: "hn-wide hn-sub" }, "Re-runs the saved notebook in a fresh kernel on this schedule; a report is delivered only when a cell's result changed since the last run."),
      h("label", { for: this.notebookInput.id }, "Notebook"),
      this.notebookInput,
      h("label", { for: this.scheduleInput.id }, "Schedule"),
      h("div", {}, this.scheduleInput, this.scheduleCheck),
      this.error,
      h("div", { class: "hn-wide hn-actions" }, this.createButton, cancel),
    );
  }

  get hidden(): boolean {
    return this.el.hidden === true;
  }

  open(): void {
    setText(this.error, "");
    this.el.hidden = false;
    this.checkSchedule();
    this.notebookInput.focus();
  }

  close(): void {
    this.el.hidden = true;
    this.saving?.abort();
    this.saving = null;
    this.createButton.disabled = false;
  }

  dispose(): void {
    for (const controller of [this.checking, this.saving]) controller?.abort();
    if (this.checkTimer) clearTimeout(this.checkTimer);
  }

  private checkSoon(): void {
    if (this.checkTimer) clearTimeout(this.checkTimer);
    this.checkTimer = setTimeout(() => this.checkSchedule(), CHECK_DELAY_MS);
  }

  private checkSchedule(): void {
    this.checkTimer = null;
    this.checking?.abort();
    this.checking = this.messenger.ask<CheckScheduleMsg>({ type: "check_schedule", schedule: this.scheduleInput.value }, {
      answer: (msg) => {
        const runs = (msg.next_runs ?? []).map((t) => formatTime(t)).join(", ");
        this.setCheck(Boolean(msg.ok), msg.ok ? `${String(msg.description)}. Next runs: ${runs}` : String(msg.message));
      },
      failed: (error) => this.setCheck(false, `The schedule was not checked: ${error.message}.`),
    });
  }

  private setCheck(ok: boolean | null, text: string): void {
    setAttr(this.scheduleCheck, "data-ok", ok === null ? null : String(ok));
    setText(this.scheduleCheck, text);
  }

  create(): void {
    this.saving?.abort();
    this.createButton.disabled = true;
    setText(this.error, "");
    const done = (ok: boolean, field: string | null, message: string): void => {
      this.saving = null;
      this.createButton.disabled = false;
      if (ok) this.close();
      else if (field === "schedule") {
        this.setCheck(false, message);
        setText(this.error, "Not created: fix the schedule.");
      } else setText(this.error, message);
    };
    const question = { type: "reproduce" as const, notebook: this.notebookInput.value, schedule: this.scheduleInput.value };
    this.saving = this.messenger.ask<ReproduceMsg>(question, {
      answer: (msg) => done(Boolean(msg.ok), msg.field ?? null, String(msg.message)),
      failed: (error) => done(false, null, `Not created: ${error.message}.`),
    }, { timeout: ACTION_TIMEOUT_MS });
  }
}
