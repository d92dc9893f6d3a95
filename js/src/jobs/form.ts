// The Jobs view's create/edit form: name, a schedule (typed, or built from a preset), prompt, delivery, skills and
// repeat. Every check and save is a question to the kernel (../messenger.ts): the schedule is checked as it is typed
// (`check_schedule`, the newest check's answer shown inline), and `save` answers with the job or the field the
// error belongs to. The synced rows hold no prompt (they are saved with the notebook), so editing asks for it
// (`get_prompt`); until it arrives the field is disabled, and a save leaves it out so the job keeps its own.
// Owns: the job being edited, the questions in flight, the check's debounce.

import { h, setAttr, setText } from "../dom";
import type { Messenger } from "../messenger";
import type { CheckScheduleMsg, GetPromptMsg, JobRow, JobsState, SaveMsg, ScheduleCheckMsg } from "../types/jobs";
import type { AnyModel } from "../types/widget";
import { EMPTY_FORM, type FormValues, formatTime, formFromRow, presetExpression, WEEKDAYS } from "./logic";

const CHECK_DELAY_MS = 250;
/** How long a save or a row action may take to come back (ms): each is a request to the API Server. */
export const ACTION_TIMEOUT_MS = 30_000;

export class JobForm {
  readonly el = h("form", { "data-testid": "jobs-form", hidden: true, "aria-label": "Job form" });
  private readonly model: AnyModel<JobsState>;
  private readonly messenger: Messenger;
  private editingId: string | null = null;
  /** Questions in flight: a newer check supersedes the older; closing the form drops a save's. */
  private checking: AbortController | null = null;
  private saving: AbortController | null = null;
  /** The `get_prompt` question whose answer fills the prompt field (null: the field already holds the prompt). */
  private prompting: AbortController | null = null;
  private checkTimer: ReturnType<typeof setTimeout> | null = null;
  private readonly title = h("div", { class: "hn-wide hn-jobs-title" }, "New job");
  private readonly nameInput = h("input", { type: "text", "data-testid": "job-form-name", required: true, maxlength: 200 });
  private readonly presetSelect = h("select", { "data-testid": "job-form-preset" });
  private readonly presetFields = h("span", { class: "hn-preset-fields" });
  private readonly presetN = h("input", { type: "number", min: 1, value: 15, "data-testid": "job-form-preset-n", "aria-label": "Minutes", style: "width:5em" });
  private readonly presetMinute = h("input", { type: "number", min: 0, max: 59, value: 0, "data-testid": "job-form-preset-minute", "aria-label": "Minute past the hour", style: "width:5em" });
  private readonly presetAt = h("input", { type: "time", value: "09:00", "data-testid": "job-form-preset-at", "aria-label": "Time of day" });
  private readonly presetWeekday = h("select", { "data-testid": "job-form-preset-weekday", "aria-label": "Day of the week" });
  private readonly presetMonthday = h("input", { type: "number", min: 1, max: 31, value: 1, "data-testid": "job-form-preset-monthday", "aria-label": "Day of the month", style: "width:5em" });
  private readonly scheduleInput = h("input", { type: "text", "data-testid": "job-form-schedule", required: true, placeholder: "0 9 * * 1-5, every 30m, 2h or 2030-01-01T09:00" });
  private readonly scheduleCheck = h("div", { class: "hn-check hn-sub", "data-testid": "job-form-schedule-check", "aria-live": "polite" });
  private readonly promptInput = h("textarea", { "data-testid": "job-form-prompt", maxlength: 5000 });
  private readonly deliverInput = h("input", { type: "text", "data-testid": "job-form-deliver", value: "local" });
  private readonly skillsInput = h("input", { type: "text", "data-testid": "job-form-skills", placeholder: "comma-separated, optional" });
  private readonly repeatInput = h("input", { type: "number", min: 1, "data-testid": "job-form-repeat", placeholder: "forever", style: "width:7em" });
  private readonly error = h("div", { class: "hn-wide hn-field-error", "data-testid": "job-form-error", role: "alert" });
  private readonly saveButton = h("button", { type: "submit", "data-testid": "job-form-save" }, "Save job");

  constructor(model: AnyModel<JobsState>, messenger: Messenger) {
    this.model = model;
    this.messenger = messenger;
    this.presetSelect.append(
      h("option", { value: "" }, "Custom (type below)"),
      ...(model.get("presets") ?? []).map((p) => h("option", { value: p.key }, p.label)),
    );
    this.presetWeekday.append(...WEEKDAYS.map((d, i) => h("option", { value: i, selected: i === 1 }, d)));
    const onPreset = (): void => this.applyPreset();
    for (const el of [this.presetSelect, this.presetN, this.presetMinute, this.presetAt, this.presetWeekday, this.presetMonthday]) {
      el.addEventListener("change", onPreset);
      el.addEventListener("input", onPreset);
    }
    this.scheduleInput.addEventListener("input", () => {
      this.presetSelect.value = "";
      this.showPresetFields();
      this.checkSoon();
    });
    const cancel = h("button", { type: "button", "data-testid": "job-form-cancel" }, "Cancel");
    cancel.addEventListener("click", () => this.close());
    this.el.addEventListener("submit", (ev) => {
      ev.preventDefault();
      this.save();
    });
    // Enter in a one-line field saves. Handled here because JupyterLab's notebook shortcuts may swallow the
    // browser's implicit form submission; preventDefault keeps the native one from sending a second save.
    this.el.addEventListener("keydown", (ev) => {
      const target = ev.target as HTMLElement;
      if (ev.key !== "Enter" || ev.shiftKey || target.tagName !== "INPUT") return;
      ev.preventDefault();
      if (!this.saveButton.disabled) this.save();
    });
    this.el.append(this.title, ...this.fields(), this.error, h("div", { class: "hn-wide hn-actions" }, this.saveButton, cancel));
  }

  /** Each field after its label (the ids tie them; unique per form). */
  private fields(): HTMLElement[] {
    const uid = Math.random().toString(36).slice(2, 8);
    const label = (text: string, input: HTMLElement, id: string): HTMLLabelElement => {
      input.id = `hn-job-${id}-${uid}`;
      return h("label", { for: input.id }, text);
    };
    return [
      label("Name", this.nameInput, "name"),
      this.nameInput,
      label("Preset", this.presetSelect, "preset"),
      h("div", { class: "hn-preset-fields" }, this.presetSelect, this.presetFields),
      label("Schedule", this.scheduleInput, "schedule"),
      h("div", {}, this.scheduleInput, this.scheduleCheck),
      label("Prompt", this.promptInput, "prompt"),
      this.promptInput,
      label("Deliver to", this.deliverInput, "deliver"),
      this.deliverInput,
      label("Skills", this.skillsInput, "skills"),
      this.skillsInput,
      label("Repeat (runs)", this.repeatInput, "repeat"),
      this.repeatInput,
    ];
  }

  get hidden(): boolean {
    return this.el.hidden === true;
  }

  /** Stop waiting for answers (the view is going away). */
  dispose(): void {
    for (const controller of [this.checking, this.saving, this.prompting]) controller?.abort();
    if (this.checkTimer) clearTimeout(this.checkTimer);
  }

  // ---- presets and the schedule check ----

  private showPresetFields(): void {
    const key = this.presetSelect.value;
    const fields = (this.model.get("presets") ?? []).find((p) => p.key === key)?.fields ?? [];
    const parts: HTMLElement[] = [];
    if (key === "every_n_minutes") parts.push(this.presetN, h("span", {}, "minutes"));
    if (fields.includes("minute")) parts.push(h("span", {}, "at minute"), this.presetMinute);
    if (key === "weekly") parts.push(this.presetWeekday);
    if (key === "monthly") parts.push(h("span", {}, "day"), this.presetMonthday);
    if (fields.includes("at")) parts.push(h("span", {}, "at"), this.presetAt);
    this.presetFields.replaceChildren(...parts);
  }

  private applyPreset(): void {
    this.showPresetFields();
    const key = this.presetSelect.value;
    if (!key) return;
    const expr = presetExpression(key, {
      n: Number(this.presetN.value),
      minute: Number(this.presetMinute.value),
      at: this.presetAt.value,
      weekday: Number(this.presetWeekday.value),
      monthday: Number(this.presetMonthday.value),
    });
    if (expr === null) {
      this.setCheck(false, "Fill in the preset's fields.");
      return;
    }
    this.scheduleInput.value = expr;
    this.checkSoon();
  }

  private checkSoon(): void {
    if (this.checkTimer) clearTimeout(this.checkTimer);
    this.checkTimer = setTimeout(() => this.checkSchedule(), CHECK_DELAY_MS);
  }

  checkSchedule(): void {
    this.checkTimer = null;
    this.checking?.abort(); // only the newest check's answer is shown
    this.checking = this.messenger.ask<CheckScheduleMsg>({ type: "check_schedule", schedule: this.scheduleInput.value }, {
      answer: (msg) => this.showCheck(msg),
      failed: (error) => this.setCheck(false, `The schedule was not checked: ${error.message}.`),
    });
  }

  private showCheck(msg: Partial<ScheduleCheckMsg>): void {
    if (msg.ok) {
      const runs = (msg.next_runs ?? []).map((t) => formatTime(t)).join(", ");
      const warnings = (msg.warnings ?? []).join(" ");
      this.setCheck(true, `${String(msg.description)}. Next runs: ${runs}${warnings ? `. Note: ${warnings}` : ""}`);
    } else {
      this.setCheck(false, `${String(msg.message)} Example that works: ${String(msg.example)}`);
    }
  }

  private setCheck(ok: boolean | null, text: string): void {
    setAttr(this.scheduleCheck, "data-ok", ok === null ? null : String(ok));
    setText(this.scheduleCheck, text);
  }

  // ---- opening, saving, closing ----

  /** Open the form empty (a new job) or with a listed job's values (its prompt asked of the kernel). */
  open(row: JobRow | null): void {
    this.editingId = row?.id ?? null;
    const values: FormValues = row ? formFromRow(row) : EMPTY_FORM;
    setText(this.title, row ? `Edit job “${row.name}”` : "New job");
    setAttr(this.el, "data-mode", row ? "edit" : "create");
    this.nameInput.value = values.name;
    this.scheduleInput.value = values.schedule;
    this.promptInput.value = values.prompt;
    this.prompting?.abort();
    this.prompting = null;
    this.promptInput.disabled = false;
    this.promptInput.placeholder = "";
    if (row) this.askPrompt(row);
    this.deliverInput.value = values.deliver;
    this.skillsInput.value = values.skills;
    this.repeatInput.value = values.repeat;
    this.presetSelect.value = "";
    this.showPresetFields();
    setText(this.error, "");
    this.setCheck(null, "");
    this.el.hidden = false;
    if (values.schedule) this.checkSchedule();
    this.nameInput.focus();
  }

  /** The prompt is not in the synced rows (they are saved with the notebook): ask the kernel for it. */
  private askPrompt(row: JobRow): void {
    this.promptInput.disabled = true;
    this.promptInput.placeholder = "Loading the prompt…";
    const arrived = (prompt: string | null, placeholder = ""): void => {
      this.prompting = null;
      this.promptInput.disabled = false;
      this.promptInput.placeholder = placeholder;
      if (prompt !== null) this.promptInput.value = prompt;
    };
    this.prompting = this.messenger.ask<GetPromptMsg>({ type: "get_prompt", id: row.id }, {
      answer: (msg) => arrived(msg.ok && typeof msg.prompt === "string" ? msg.prompt : null),
      failed: (error) => arrived(null, `The prompt could not be loaded (${error.message}); saving keeps the job's own.`),
    });
  }

  close(): void {
    this.el.hidden = true;
    this.editingId = null;
    this.saving?.abort();
    this.saving = null;
    this.saveButton.disabled = false;
  }

  save(): void {
    this.saving?.abort();
    this.saveButton.disabled = true;
    setText(this.error, "");
    const fields: Record<string, string> = {
      name: this.nameInput.value,
      schedule: this.scheduleInput.value,
      prompt: this.promptInput.value,
      deliver: this.deliverInput.value,
      skills: this.skillsInput.value,
      repeat: this.repeatInput.value,
    };
    // A prompt that never arrived is left out, so the kernel keeps the job's own (never a cut one).
    if (this.prompting !== null || this.promptInput.disabled) delete fields.prompt;
    const saved = (ok: boolean, field: string | null, message: string): void => {
      this.saving = null;
      this.saveButton.disabled = false;
      if (ok) {
        this.close();
      } else if (field === "schedule") {
        this.setCheck(false, message);
        setText(this.error, "Not saved: fix the schedule.");
      } else {
        setText(this.error, message);
      }
    };
    this.saving = this.messenger.ask<SaveMsg>({ type: "save", id: this.editingId, fields }, {
      answer: (msg) => saved(Boolean(msg.ok), msg.field ?? null, String(msg.message)),
      failed: (error) => saved(false, null, `Not saved: ${error.message}.`),
    }, { timeout: ACTION_TIMEOUT_MS });
  }
}
