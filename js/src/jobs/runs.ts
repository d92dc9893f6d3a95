// A job's recent runs (time, status, duration) and one run's transcript, read-only, inside the Jobs view.
// Every run of a cron job is a stored Hermes session; the kernel lists them and sends a transcript as
// turn-model messages (hermes_notebook/widgets/job_runs.py). The transcript is drawn here as text only
// (textContent, no markdown renderer): it stays inert, has no buttons since nothing in a finished run can be
// answered, and keeps the jobs bundle free of the chat's markdown and highlighting libraries.

import { displayText, h, setAttr, setText } from "../dom";
import type { Messenger } from "../messenger";
import type { Message, Part, PartKind } from "../types/turns";

import type { JobsQuestion, RunsResultMsg, TranscriptResultMsg } from "../types/jobs";
import { formatTime } from "./logic";

export interface RunRow {
  id: string;
  job_id: string;
  status: string;
  started_at: string | null;
  ended_at: string | null;
  duration: number | null;
  title: string | null;
  message_count: number | null;
  tool_call_count: number | null;
}

/** How long a run list or transcript may take to come (ms): both read stored sessions over HTTP. */
export const RUNS_TIMEOUT_MS = 30_000;

/** "2.4 s" / "1 min 5 s" / "running". */
export function formatDuration(seconds: number | null): string {
  if (seconds === null || !Number.isFinite(seconds)) return "running";
  if (seconds < 60) return `${seconds.toFixed(1)} s`;
  const whole = Math.round(seconds);
  return `${Math.floor(whole / 60)} min ${whole % 60} s`;
}

type RunsMsgQuestion = Extract<JobsQuestion, { type: "runs" }>;
type TranscriptQuestion = Extract<JobsQuestion, { type: "transcript" }>;

export class RunsPanel {
  readonly el: HTMLElement;
  private readonly messenger: Messenger;
  private readonly title = h("strong", {});
  private readonly status = h("div", { class: "hn-sub", "data-testid": "job-runs-status", role: "status", "aria-live": "polite" });
  private readonly tbody = h("tbody");
  private readonly transcript = h("div", {
    class: "hn-run-transcript",
    "data-testid": "job-run-transcript",
    role: "log",
    "aria-label": "Run transcript (read-only)",
    "aria-readonly": "true",
    tabindex: 0,
    hidden: true,
  });
  private jobId: string | null = null;
  /** The questions in flight: a newer one (or hiding the panel) aborts the older, whose late answer is ignored. */
  private listing: AbortController | null = null;
  private opening: AbortController | null = null;

  constructor(messenger: Messenger) {
    this.messenger = messenger;
    const close = h("button", { type: "button", "data-testid": "job-runs-close", "aria-label": "Close the run list" }, "Close");
    close.addEventListener("click", () => this.hide());
    const refresh = h("button", { type: "button", "data-testid": "job-runs-refresh" }, "Reload");
    refresh.addEventListener("click", () => this.reload());
    const table = h(
      "table",
      { "data-testid": "job-runs-table" },
      h("thead", {}, h("tr", {}, ...["Started", "Status", "Duration", ""].map((c) => h("th", { scope: "col" }, c)))),
      this.tbody,
    );
    this.el = h(
      "section",
      { class: "hn-runs", "data-testid": "job-runs", hidden: true, "aria-label": "Job runs" },
      h("div", { class: "hn-runs-head" }, this.title, refresh, close),
      this.status,
      table,
      this.transcript,
    );
    this.el.addEventListener("keydown", (ev) => {
      if (ev.key === "Escape") {
        ev.stopPropagation();
        this.hide();
      }
    });
  }

  /** Show the runs of a job (asks the kernel; the answer arrives as ``runs_result``). */
  show(job: { id: string; name: string }): void {
    this.jobId = job.id;
    setText(this.title, `Runs of “${job.name}”`);
    this.el.hidden = false;
    this.transcript.hidden = true;
    this.transcript.replaceChildren();
    this.reload();
  }

  hide(): void {
    this.el.hidden = true;
    this.jobId = null;
    this.dispose();
  }

  /** Stop waiting for answers (the view is going away). */
  dispose(): void {
    this.listing?.abort();
    this.opening?.abort();
    this.listing = this.opening = null;
  }

  private reload(): void {
    if (this.jobId === null) return;
    setText(this.status, "Loading runs…");
    this.listing?.abort();
    this.listing = this.messenger.ask<RunsMsgQuestion>({ type: "runs", id: this.jobId }, {
      answer: (msg) => this.renderRuns(msg),
      failed: (error) => this.renderRuns({ ok: false, message: `Could not list the runs: ${error.message}.` }),
    }, { timeout: RUNS_TIMEOUT_MS });
  }

  private open(run: RunRow): void {
    this.transcript.hidden = false;
    this.transcript.replaceChildren(h("div", { class: "hn-sub" }, `Opening the run of ${formatTime(run.started_at)}…`));
    this.opening?.abort();
    this.opening = this.messenger.ask<TranscriptQuestion>({ type: "transcript", run_id: run.id }, {
      answer: (msg) => this.renderTranscript(msg),
      failed: (error) => this.renderTranscript({ ok: false, message: `Could not open the run: ${error.message}.` }),
    }, { timeout: RUNS_TIMEOUT_MS });
  }

  private renderRuns(msg: Partial<RunsResultMsg>): void {
    if (!msg.ok) {
      setText(this.status, String(msg.message ?? "Could not list the runs."));
      this.tbody.replaceChildren();
      return;
    }
    const runs = (msg.runs as RunRow[] | undefined) ?? [];
    setText(this.status, runs.length === 0 ? "No runs yet (a triggered run starts on the scheduler's next tick)." : "");
    this.tbody.replaceChildren(
      ...runs.map((run) => {
        const when = formatTime(run.started_at);
        const open = h("button", { type: "button", "data-testid": "job-run-open", "aria-label": `Open the run of ${when}` }, "Open");
        open.addEventListener("click", () => this.open(run));
        return h(
          "tr",
          { "data-testid": "job-run-row", "data-run-id": run.id, "data-status": run.status },
          h("td", { title: run.started_at ?? "" }, when),
          h("td", { class: run.status === "ok" ? "hn-ok" : run.status === "running" ? "" : "hn-err" }, run.status),
          h("td", {}, formatDuration(run.duration)),
          h("td", {}, open),
        );
      }),
    );
  }

  private renderTranscript(msg: Partial<TranscriptResultMsg>): void {
    if (!msg.ok) {
      this.transcript.replaceChildren(h("div", { class: "hn-err", role: "alert" }, String(msg.message ?? "Could not open the run.")));
      return;
    }
    const messages = msg.messages ?? [];
    const views = messages.map((m) => renderMessage(m));
    setAttr(this.transcript, "data-run-id", String(msg.run_id ?? ""));
    this.transcript.replaceChildren(...(views.length ? views : [h("div", { class: "hn-sub" }, "This run has no messages.")]));
  }
}

/** How each part kind reads in a run's transcript (null: not shown). */
const RUN_PARTS: Record<PartKind, (part: Part) => HTMLElement | null> = {
  text: (part) => (part.text ? h("div", { class: "hn-run-text" }, part.text) : null),
  reasoning: (part) =>
    part.text ? h("details", { class: "hn-run-reasoning" }, h("summary", {}, "Reasoning"), h("pre", {}, part.text)) : null,
  tool: (part) => {
    const args = part.preview ?? (typeof part.arguments === "string" ? part.arguments : displayText(part.arguments));
    const inter = part.interaction;
    const asked = inter ? `${inter.kind}: ${inter.command ?? inter.question ?? inter.description ?? ""} [${inter.status}]` : "";
    const result = displayText(part.result);
    return h(
      "details",
      { class: "hn-run-tool", "data-status": part.status ?? "" },
      h("summary", {}, `Tool ${part.name ?? "tool"}(${args.length > 120 ? `${args.slice(0, 117)}...` : args}) — ${part.status ?? "unknown"}`),
      asked ? h("div", { class: "hn-sub" }, asked) : null,
      result ? h("pre", {}, result.length > 4000 ? `${result.slice(0, 4000)}\n… (${result.length - 4000} more characters)` : result) : null,
    );
  },
  marker: () => null,
  todo: () => null,
  subagent: () => null,
};

function renderPart(part: Part): HTMLElement | null {
  return RUN_PARTS[part.kind]?.(part) ?? null;
}

/** One message as text: who, its parts, and an error line; nothing in it is parsed as HTML. */
export function renderMessage(message: Message): HTMLElement {
  return h(
    "div",
    { class: `hn-message hn-${message.role}`, "data-role": message.role, "data-status": message.status },
    h("div", { class: "hn-role" }, message.role === "user" ? "Prompt" : "Hermes"),
    ...message.parts.map(renderPart),
    message.error ? h("div", { class: "hn-err" }, `error: ${message.error}`) : null,
  );
}
