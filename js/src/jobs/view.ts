// The Jobs view: toolbar (health, "updated N s ago", toggle, refresh, new job), notice, create/edit form,
// and the table with per-row actions. It holds no secret and does no I/O: every action is a custom
// message to the kernel, which talks to Hermes and answers (see hermes_notebook/widgets/jobs.py): commands, or
// questions asked through `invoke` (../invoke.ts: a request id, a timeout), each answered once.

import { h, setAttr, setText } from "../dom";
import { invoke, type KernelRefused, type KernelTimeout, type MessageChannel } from "../invoke";
import type { AnyModel } from "../types/widget";

import type { JobRow, JobsKernelMsg, JobsQuestion, JobsState, ScheduleCheckMsg } from "../types/jobs";
import {
  EMPTY_FORM,
  type FormValues,
  formatTime,
  formFromRow,
  type JobErrors,
  presetExpression,
  relativeTime,
  stateText,
  updatedAgo,
  WEEKDAYS,
} from "./logic";
import { notify } from "../notify";
import { hideStaticTwin, type TwinHider } from "../twin";
import { RunsPanel } from "./runs";
import { createDelivery, type Delivery } from "../delivery";

type Model = AnyModel<JobsState>;
type Asking<T extends JobsQuestion["type"]> = Extract<JobsQuestion, { type: T }>;

const CHECK_DELAY_MS = 250;
/** How long a save or a row action may take to come back (ms): each is a request to the API Server. */
export const ACTION_TIMEOUT_MS = 30_000;

/** The kernel's reply types, and the message each answers (a reply also acknowledges it: ../delivery.ts). */
const ANSWERS: Record<string, string> = {
  schedule_check: "check_schedule",
  save_result: "save",
  action_result: "action",
  prompt: "get_prompt",
  runs_result: "runs",
  transcript_result: "transcript",
  job_errors: "job_errors",
};

export class JobsView {
  readonly root: HTMLDivElement;
  private readonly model: Model;
  private readonly now: () => number;
  /** Questions in flight (`invoke`): a newer check supersedes the older; closing the form drops a save's. */
  private checking: AbortController | null = null;
  private saving: AbortController | null = null;
  /** The `get_prompt` question whose answer fills the prompt field (null: the field already holds the prompt). */
  private prompting: AbortController | null = null;
  private editingId: string | null = null;
  /** Last errors by job id (from `job_errors` messages: never synced, so never saved with the notebook). */
  private errors = new Map<string, JobErrors>();
  private lastRunNotice: string | null = null;
  private confirmingId: string | null = null;
  /** Rows with an action in flight, by the action's question. */
  private readonly busyRows = new Map<AbortController, string>();
  private checkTimer: ReturnType<typeof setTimeout> | null = null;
  private readonly ticker: ReturnType<typeof setInterval>;
  private readonly listeners: [string, () => void][] = [];

  // toolbar
  private readonly health = h("span", { class: "hn-health", "data-testid": "jobs-health", role: "status" });
  private readonly updated = h("span", { class: "hn-updated", "data-testid": "jobs-updated" });
  private readonly includeDisabled = h("input", { type: "checkbox", "data-testid": "jobs-include-disabled" });
  private readonly autoRefresh = h("input", { type: "checkbox", "data-testid": "jobs-auto-refresh" });
  private readonly notice = h("div", { class: "hn-notice", "data-testid": "jobs-notice", role: "status", "aria-live": "polite" });
  // form
  private readonly form = h("form", { "data-testid": "jobs-form", hidden: true, "aria-label": "Job form" });
  private readonly formTitle = h("div", { class: "hn-wide hn-jobs-title" }, "New job");
  private readonly nameInput = h("input", { type: "text", id: "", "data-testid": "job-form-name", required: true, maxlength: 200 });
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
  private readonly formError = h("div", { class: "hn-wide hn-field-error", "data-testid": "job-form-error", role: "alert" });
  private readonly saveButton = h("button", { type: "submit", "data-testid": "job-form-save" }, "Save job");
  // table
  private readonly tbody = h("tbody");
  // a job's runs and one run's transcript (./runs.ts)
  private readonly runs: RunsPanel;
  /** Every message to the kernel goes through it: a note says so while the kernel, busy with a cell, has not taken it. */
  private readonly delivery: Delivery;
  /** What `invoke` asks through: the model's messages, sent by `delivery`. */
  private readonly channel: MessageChannel;
  /** The static table output beside this view (for viewers without widget JS) only repeats it. */
  private readonly twin: TwinHider;

  constructor(model: Model, now: () => number = Date.now) {
    this.model = model;
    this.now = now;
    this.delivery = createDelivery(model);
    this.channel = {
      on: (name, callback) => model.on(name, callback),
      off: (name, callback) => model.off(name, callback),
      send: (content) => this.delivery.send(content as Record<string, unknown>),
    };
    this.runs = new RunsPanel(this.channel);
    this.root = h("div", { class: "hn-jobs-live", "data-testid": "jobs-widget" });
    this.twin = hideStaticTwin(this.root, ".hn-jobs-static-wrap");
    this.twin.activate();
    this.buildForm();
    const refresh = h("button", { type: "button", "data-testid": "jobs-refresh" }, "Refresh");
    refresh.addEventListener("click", () => this.delivery.send({ type: "refresh" }));
    const create = h("button", { type: "button", "data-testid": "jobs-new" }, "New job");
    create.addEventListener("click", () => this.openForm(null));
    this.includeDisabled.addEventListener("change", () => {
      this.model.set("include_disabled", this.includeDisabled.checked);
      this.model.save_changes();
    });
    this.autoRefresh.addEventListener("change", () => {
      this.model.set("auto_refresh", this.autoRefresh.checked ? 30 : 0);
      this.model.save_changes();
    });
    const bar = h(
      "div",
      { class: "hn-jobs-bar" },
      h("span", { class: "hn-jobs-title" }, "Hermes cron jobs"),
      this.health,
      this.updated,
      h("label", {}, this.includeDisabled, " Include paused/disabled"),
      h("label", {}, this.autoRefresh, " Auto-refresh"),
      refresh,
      create,
    );
    const table = h(
      "table",
      { "data-testid": "jobs-table" },
      h(
        "thead",
        {},
        h(
          "tr",
          {},
          ...["Name", "Schedule", "State", "Next run", "Last run", "Last status", "Repeat", "Deliver", "Skills", "Actions"].map(
            (c) => h("th", { scope: "col" }, c),
          ),
        ),
      ),
      this.tbody,
    );
    this.root.append(bar, this.notice, this.delivery.el, this.form, table, this.runs.el);
    for (const key of ["jobs", "connection", "updated_at", "notice", "include_disabled", "auto_refresh", "loading"]) {
      const handler = (): void => this.update();
      model.on(`change:${key}`, handler);
      this.listeners.push([`change:${key}`, handler]);
    }
    const onMsg = (msg: JobsKernelMsg): void => this.onMessage(msg);
    model.on("msg:custom", onMsg as () => void);
    this.listeners.push(["msg:custom", onMsg as () => void]);
    this.delivery.send({ type: "job_errors" }); // the kernel also sends them after every refresh
    this.root.addEventListener("keydown", (ev) => {
      if (ev.key !== "Escape") return;
      if (this.confirmingId) {
        this.confirmingId = null;
        this.renderRows();
      } else if (!this.form.hidden) {
        this.closeForm();
      }
    });
    this.ticker = setInterval(() => this.tick(), 1000);
    this.update();
  }

  dispose(): void {
    for (const controller of [this.checking, this.saving, this.prompting, ...this.busyRows.keys()]) controller?.abort();
    this.runs.dispose();
    this.twin.dispose();
    this.delivery.dispose();
    clearInterval(this.ticker);
    if (this.checkTimer) clearTimeout(this.checkTimer);
    for (const [name, cb] of this.listeners) this.model.off(name, cb);
    this.root.remove();
  }

  // ---- rendering ----

  update(): void {
    const conn = this.model.get("connection") ?? { status: "connecting", message: null, url: "" };
    setAttr(this.health, "data-status", conn.status);
    setText(
      this.health,
      conn.status === "connected" ? `Connected (${conn.url})` : conn.status === "error" ? conn.message ?? "Connection error" : "Connecting…",
    );
    this.includeDisabled.checked = Boolean(this.model.get("include_disabled"));
    this.autoRefresh.checked = (this.model.get("auto_refresh") ?? 0) > 0;
    const notice = this.model.get("notice") ?? {};
    setText(this.notice, notice.text ?? "");
    setAttr(this.notice, "data-kind", notice.kind ?? null);
    if (notice.kind === "run" && notice.text && notice.text !== this.lastRunNotice) notify(notice.text, "success");
    this.lastRunNotice = notice.kind === "run" ? notice.text ?? null : this.lastRunNotice;
    this.tick();
    this.renderRows();
  }

  private tick(): void {
    const loading = this.model.get("loading") ? " (refreshing…)" : "";
    setText(this.updated, updatedAgo(this.model.get("updated_at") ?? null, this.now()) + loading);
  }

  renderRows(): void {
    const rows = this.model.get("jobs") ?? [];
    if (rows.length === 0) {
      const hint = this.model.get("include_disabled") ? "No jobs." : "No active jobs (paused ones are hidden).";
      this.tbody.replaceChildren(h("tr", {}, h("td", { colspan: 10, class: "hn-empty" }, hint)));
      return;
    }
    const busy = new Set(this.busyRows.values());
    this.tbody.replaceChildren(...rows.map((row) => this.renderRow(row, busy.has(row.id))));
  }

  private renderRow(row: JobRow, busy: boolean): HTMLTableRowElement {
    const now = this.now();
    const status = h(
      "td",
      { "data-testid": "job-last-status" },
      h("span", { class: row.last_status === "error" ? "hn-err" : row.last_status === "ok" ? "hn-ok" : "" }, row.last_status ?? "—"),
      ...this.errorLines(row),
    );
    const when = (iso: string | null, testid: string): HTMLTableCellElement =>
      h("td", { "data-testid": testid, title: iso ?? "" }, formatTime(iso), iso ? h("div", { class: "hn-sub" }, relativeTime(iso, now)) : null);
    return h(
      "tr",
      { "data-testid": "job-row", "data-job-id": row.id, "data-job-name": row.name, "data-state": row.state, "aria-busy": busy ? "true" : null },
      h("td", {}, row.name, h("div", { class: "hn-sub" }, row.id)),
      h("td", { "data-testid": "job-schedule" }, row.description, h("div", { class: "hn-sub" }, h("code", {}, row.schedule))),
      h("td", { "data-testid": "job-state" }, stateText(row, now), row.enabled ? null : h("div", { class: "hn-sub" }, "disabled")),
      when(row.next_run_at, "job-next-run"),
      when(row.last_run_at, "job-last-run"),
      status,
      h("td", { "data-testid": "job-repeat" }, row.repeat_text),
      h("td", {}, row.deliver ?? ""),
      h("td", {}, row.skills.join(", ")),
      h("td", {}, this.renderActions(row, busy)),
    );
  }

  private errorLines(row: JobRow): HTMLElement[] {
    const errors = this.errors.get(row.id);
    const lines: HTMLElement[] = [];
    if (row.has_error && errors?.last_error) {
      lines.push(h("div", { class: "hn-err", "data-testid": "job-last-error" }, `error: ${errors.last_error}`));
    }
    if (row.has_delivery_error && errors?.last_delivery_error) {
      lines.push(h("div", { class: "hn-err", "data-testid": "job-last-delivery-error" }, `delivery: ${errors.last_delivery_error}`));
    }
    return lines;
  }

  private renderActions(row: JobRow, busy: boolean): HTMLElement {
    const button = (label: string, testid: string, onClick: () => void, extra: Record<string, string> = {}): HTMLButtonElement => {
      const b = h("button", { type: "button", "data-testid": testid, disabled: busy, ...extra }, label);
      b.addEventListener("click", onClick);
      return b;
    };
    if (this.confirmingId === row.id) {
      return h(
        "div",
        { class: "hn-actions", role: "group", "aria-label": `Confirm deleting ${row.name}` },
        h("span", {}, `Delete “${row.name}”?`),
        button("Confirm delete", "job-delete-confirm", () => this.action(row, "delete"), { class: "hn-danger" }),
        button("Cancel", "job-delete-cancel", () => {
          this.confirmingId = null;
          this.renderRows();
        }),
      );
    }
    const paused = row.state === "paused" || !row.enabled;
    return h(
      "div",
      { class: "hn-actions", role: "group", "aria-label": `Actions for ${row.name}` },
      paused
        ? button("Resume", "job-resume", () => this.action(row, "resume"), { "aria-label": `Resume ${row.name}` })
        : button("Pause", "job-pause", () => this.action(row, "pause"), { "aria-label": `Pause ${row.name}` }),
      button("Run now", "job-run", () => this.action(row, "run"), {
        "aria-label": `Run ${row.name} now`,
        title: "Marks the job due; it starts on the scheduler's next tick (within about a minute)",
      }),
      button("Runs", "job-runs-open", () => this.runs.show(row), { "aria-label": `Runs of ${row.name}` }),
      button("Edit", "job-edit", () => this.openForm(row), { "aria-label": `Edit ${row.name}` }),
      button("Delete", "job-delete", () => {
        this.confirmingId = row.id;
        this.renderRows();
        (this.tbody.querySelector('[data-testid="job-delete-cancel"]') as HTMLButtonElement | null)?.focus();
      }, { "aria-label": `Delete ${row.name}` }),
    );
  }

  private action(row: JobRow, action: "pause" | "resume" | "run" | "delete"): void {
    if (action === "delete") this.confirmingId = null;
    const settle = (): void => {
      this.busyRows.delete(controller);
      this.renderRows();
    };
    const controller = invoke<Asking<"action">>(this.channel, { type: "action", action, id: row.id }, {
      answer: settle,
      failed: (error) => {
        settle();
        setText(this.notice, `Could not ${action} “${row.name}”: ${error.message}.`);
      },
    }, { timeout: ACTION_TIMEOUT_MS });
    this.busyRows.set(controller, row.id);
    this.renderRows();
  }

  // ---- form ----

  private buildForm(): void {
    this.presetSelect.append(
      h("option", { value: "" }, "Custom (type below)"),
      ...(this.model.get("presets") ?? []).map((p) => h("option", { value: p.key }, p.label)),
    );
    this.presetWeekday.append(...WEEKDAYS.map((d, i) => h("option", { value: i, selected: i === 1 }, d)));
    const label = (text: string, input: HTMLElement, id: string): HTMLLabelElement => {
      input.id = id;
      return h("label", { for: id }, text);
    };
    const uid = Math.random().toString(36).slice(2, 8);
    const onPreset = (): void => this.applyPreset();
    for (const el of [this.presetSelect, this.presetN, this.presetMinute, this.presetAt, this.presetWeekday, this.presetMonthday]) {
      el.addEventListener("change", onPreset);
      el.addEventListener("input", onPreset);
    }
    this.scheduleInput.addEventListener("input", () => {
      this.presetSelect.value = "";
      this.showPresetFields();
      this.scheduleCheckSoon();
    });
    const cancel = h("button", { type: "button", "data-testid": "job-form-cancel" }, "Cancel");
    cancel.addEventListener("click", () => this.closeForm());
    this.form.addEventListener("submit", (ev) => {
      ev.preventDefault();
      this.save();
    });
    // Enter in a one-line field saves. Handled here because JupyterLab's notebook shortcuts may swallow the
    // browser's implicit form submission; preventDefault keeps the native one from sending a second save.
    this.form.addEventListener("keydown", (ev) => {
      const target = ev.target as HTMLElement;
      if (ev.key !== "Enter" || ev.shiftKey || target.tagName !== "INPUT") return;
      ev.preventDefault();
      if (!this.saveButton.disabled) this.save();
    });
    this.form.append(
      this.formTitle,
      label("Name", this.nameInput, `hn-job-name-${uid}`),
      this.nameInput,
      label("Preset", this.presetSelect, `hn-job-preset-${uid}`),
      h("div", { class: "hn-preset-fields" }, this.presetSelect, this.presetFields),
      label("Schedule", this.scheduleInput, `hn-job-schedule-${uid}`),
      h("div", {}, this.scheduleInput, this.scheduleCheck),
      label("Prompt", this.promptInput, `hn-job-prompt-${uid}`),
      this.promptInput,
      label("Deliver to", this.deliverInput, `hn-job-deliver-${uid}`),
      this.deliverInput,
      label("Skills", this.skillsInput, `hn-job-skills-${uid}`),
      this.skillsInput,
      label("Repeat (runs)", this.repeatInput, `hn-job-repeat-${uid}`),
      this.repeatInput,
      this.formError,
      h("div", { class: "hn-wide hn-actions" }, this.saveButton, cancel),
    );
  }

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
    this.scheduleCheckSoon();
  }

  private scheduleCheckSoon(): void {
    if (this.checkTimer) clearTimeout(this.checkTimer);
    this.checkTimer = setTimeout(() => this.checkSchedule(), CHECK_DELAY_MS);
  }

  checkSchedule(): void {
    this.checkTimer = null;
    this.checking?.abort(); // only the newest check's answer is shown
    this.checking = invoke<Asking<"check_schedule">>(this.channel, { type: "check_schedule", schedule: this.scheduleInput.value }, {
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

  openForm(row: JobRow | null): void {
    this.editingId = row?.id ?? null;
    const values: FormValues = row ? formFromRow(row) : EMPTY_FORM;
    setText(this.formTitle, row ? `Edit job “${row.name}”` : "New job");
    setAttr(this.form, "data-mode", row ? "edit" : "create");
    this.nameInput.value = values.name;
    this.scheduleInput.value = values.schedule;
    this.promptInput.value = values.prompt;
    this.prompting?.abort();
    this.prompting = null;
    this.promptInput.disabled = false;
    this.promptInput.placeholder = "";
    if (row) {
      // The prompt is not in the synced rows (they are saved with the notebook): ask the kernel for it.
      this.promptInput.disabled = true;
      this.promptInput.placeholder = "Loading the prompt…";
      const arrived = (prompt: string | null, placeholder = ""): void => {
        this.prompting = null;
        this.promptInput.disabled = false;
        this.promptInput.placeholder = placeholder;
        if (prompt !== null) this.promptInput.value = prompt;
      };
      this.prompting = invoke<Asking<"get_prompt">>(this.channel, { type: "get_prompt", id: row.id }, {
        answer: (msg) => arrived(msg.ok && typeof msg.prompt === "string" ? msg.prompt : null),
        failed: (error) => arrived(null, `The prompt could not be loaded (${error.message}); saving keeps the job's own.`),
      });
    }
    this.deliverInput.value = values.deliver;
    this.skillsInput.value = values.skills;
    this.repeatInput.value = values.repeat;
    this.presetSelect.value = "";
    this.showPresetFields();
    setText(this.formError, "");
    this.setCheck(null, "");
    this.form.hidden = false;
    if (values.schedule) this.checkSchedule();
    this.nameInput.focus();
  }

  closeForm(): void {
    this.form.hidden = true;
    this.editingId = null;
    this.saving?.abort();
    this.saving = null;
    this.saveButton.disabled = false;
  }

  save(): void {
    this.saving?.abort();
    this.saveButton.disabled = true;
    setText(this.formError, "");
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
        this.closeForm();
      } else if (field === "schedule") {
        this.setCheck(false, message);
        setText(this.formError, "Not saved: fix the schedule.");
      } else {
        setText(this.formError, message);
      }
    };
    this.saving = invoke<Asking<"save">>(this.channel, { type: "save", id: this.editingId, fields }, {
      answer: (msg) => saved(Boolean(msg.ok), msg.field ?? null, String(msg.message)),
      failed: (error: KernelTimeout | KernelRefused) => saved(false, null, `Not saved: ${error.message}.`),
    }, { timeout: ACTION_TIMEOUT_MS });
  }

  // ---- kernel messages: every reply acknowledges what it answers (../delivery.ts); job errors are shown ----

  onMessage(msg: JobsKernelMsg): void {
    if (!msg || typeof msg !== "object") return;
    const answers = ANSWERS[msg.type];
    const request = "request" in msg ? msg.request : undefined;
    if (answers !== undefined) this.delivery.answered(answers, (sent) => request === undefined || sent.request === request);
    if (msg.type === "job_errors" && msg.errors !== null && typeof msg.errors === "object") {
      this.errors = new Map(Object.entries(msg.errors as Record<string, JobErrors>));
      this.renderRows();
    }
  }
}
