// The Jobs view: toolbar (health, "updated N s ago", toggle, refresh, new job, reproducibility check), notice, the
// create/edit form (./form.ts), the scheduled reproducibility check's form (./reproduce_form.ts), the table with
// per-row actions, and a job's runs (./runs.ts). It holds no secret and does no I/O: every action is a custom
// message to the kernel, which talks to Hermes and answers (hermes_notebook/widgets/jobs.py), on the chat's message
// idiom (../messenger.ts): commands (`refresh`), or questions with a request id, each answered once. The last errors
// of the listed jobs are not synced state (they would be saved with the notebook): the view asks for them
// (`job_errors`), and the kernel pushes them again, without a request, after every refresh.

import { h, setAttr, setText } from "../dom";
import { createMessenger, type Messenger } from "../messenger";
import { notify } from "../notify";
import { hideStaticTwin, type TwinHider } from "../twin";
import type { ActionMsg, JobErrorsMsg, JobErrorsRequest, JobRow, JobsState } from "../types/jobs";
import type { AnyModel } from "../types/widget";
import { ACTION_TIMEOUT_MS, JobForm } from "./form";
import { formatTime, type JobErrors, relativeTime, stateText, updatedAgo } from "./logic";
import { ReproduceForm } from "./reproduce_form";
import { RunsPanel } from "./runs";

type Model = AnyModel<JobsState>;

const COLUMNS = ["Name", "Schedule", "State", "Next run", "Last run", "Last status", "Repeat", "Deliver", "Skills", "Actions"];

export class JobsView {
  readonly root: HTMLDivElement;
  private readonly model: Model;
  private readonly now: () => number;
  /** Commands and questions to the kernel, the busy note, and every listener on the model. */
  private readonly messenger: Messenger;
  /** Last errors by job id (from `job_errors` messages: never synced, so never saved with the notebook). */
  private errors = new Map<string, JobErrors>();
  private lastRunNotice: string | null = null;
  private confirmingId: string | null = null;
  /** Rows with an action in flight, by the action's question. */
  private readonly busyRows = new Map<AbortController, string>();
  private readonly ticker: ReturnType<typeof setInterval>;
  // toolbar
  private readonly health = h("span", { class: "hn-health", "data-testid": "jobs-health", role: "status" });
  private readonly updated = h("span", { class: "hn-updated", "data-testid": "jobs-updated" });
  private readonly includeDisabled = h("input", { type: "checkbox", "data-testid": "jobs-include-disabled" });
  private readonly autoRefresh = h("input", { type: "checkbox", "data-testid": "jobs-auto-refresh" });
  private readonly notice = h("div", { class: "hn-notice", "data-testid": "jobs-notice", role: "status", "aria-live": "polite" });
  private readonly form: JobForm;
  /** "Reproducibility check": a scheduled check of a notebook (./reproduce_form.ts). */
  private readonly reproduce: ReproduceForm;
  private readonly tbody = h("tbody");
  /** A job's runs and one run's transcript (./runs.ts). */
  private readonly runs: RunsPanel;
  /** The static table output beside this view (for viewers without widget JS) only repeats it. */
  private readonly twin: TwinHider;

  constructor(model: Model, now: () => number = Date.now) {
    this.model = model;
    this.now = now;
    this.messenger = createMessenger(model);
    this.form = new JobForm(model, this.messenger);
    this.reproduce = new ReproduceForm(this.messenger);
    this.runs = new RunsPanel(this.messenger);
    this.root = h("div", { class: "hn-jobs-live", "data-testid": "jobs-widget" });
    this.twin = hideStaticTwin(this.root, ".hn-jobs-static-wrap");
    this.twin.activate();
    const table = h(
      "table",
      { "data-testid": "jobs-table" },
      h("thead", {}, h("tr", {}, ...COLUMNS.map((c) => h("th", { scope: "col" }, c)))),
      this.tbody,
    );
    // The table scrolls in its own box: at 700 px its ten columns are wider than the output area, which cut them off.
    const tableBox = h("div", { class: "hn-jobs-table-wrap", role: "region", "aria-label": "Jobs table", tabindex: "0" }, table);
    this.root.append(this.toolbar(), this.notice, this.messenger.note, this.form.el, this.reproduce.el, tableBox, this.runs.el);
    for (const key of ["jobs", "connection", "updated_at", "notice", "include_disabled", "auto_refresh", "loading"]) {
      this.messenger.listen(`change:${key}`, () => this.update());
    }
    // The errors the kernel pushes after every refresh (an answer is its question's own).
    this.messenger.listen("msg:custom", (msg: JobErrorsMsg | null) => {
      if (msg?.type === "job_errors" && msg.request === undefined) this.showErrors(msg);
    });
    this.messenger.ask<JobErrorsRequest>({ type: "job_errors" }, { answer: (msg) => this.showErrors(msg) });
    this.root.addEventListener("keydown", (ev) => {
      if (ev.key !== "Escape") return;
      if (this.confirmingId) {
        this.confirmingId = null;
        this.renderRows();
      } else if (!this.form.hidden) {
        this.form.close();
      } else if (!this.reproduce.hidden) {
        this.reproduce.close();
      }
    });
    this.ticker = setInterval(() => this.tick(), 1000);
    this.update();
  }

  private toolbar(): HTMLElement {
    const refresh = h("button", { type: "button", "data-testid": "jobs-refresh" }, "Refresh");
    refresh.addEventListener("click", () => this.messenger.command({ type: "refresh" }));
    const create = h("button", { type: "button", "data-testid": "jobs-new" }, "New job");
    create.addEventListener("click", () => {
      this.reproduce.close();
      this.form.open(null);
    });
    const check = h("button", { type: "button", "data-testid": "jobs-new-reproduce", title: "Re-run a saved notebook on a schedule and report when a result changes" }, "Reproducibility check");
    check.addEventListener("click", () => {
      this.form.close();
      this.reproduce.open();
    });
    this.includeDisabled.addEventListener("change", () => {
      this.model.set("include_disabled", this.includeDisabled.checked);
      this.model.save_changes();
    });
    this.autoRefresh.addEventListener("change", () => {
      this.model.set("auto_refresh", this.autoRefresh.checked ? 30 : 0);
      this.model.save_changes();
    });
    return h(
      "div",
      { class: "hn-jobs-bar" },
      h("span", { class: "hn-jobs-title" }, "Hermes cron jobs"),
      this.health,
      this.updated,
      h("label", {}, this.includeDisabled, " Include paused/disabled"),
      h("label", {}, this.autoRefresh, " Auto-refresh"),
      refresh,
      create,
      check,
    );
  }

  dispose(): void {
    this.form.dispose();
    this.reproduce.dispose();
    this.runs.dispose();
    this.messenger.dispose(); // every question still waiting, every listener, the busy note
    this.twin.dispose();
    clearInterval(this.ticker);
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
      button("Edit", "job-edit", () => this.form.open(row), { "aria-label": `Edit ${row.name}` }),
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
    const controller = this.messenger.ask<ActionMsg>({ type: "action", action, id: row.id }, {
      answer: settle,
      failed: (error) => {
        settle();
        setText(this.notice, `Could not ${action} “${row.name}”: ${error.message}.`);
      },
    }, { timeout: ACTION_TIMEOUT_MS });
    this.busyRows.set(controller, row.id);
    this.renderRows();
  }

  private showErrors(msg: JobErrorsMsg): void {
    if (msg.errors === null || typeof msg.errors !== "object") return;
    this.errors = new Map(Object.entries(msg.errors as Record<string, JobErrors>));
    this.renderRows();
  }
}
