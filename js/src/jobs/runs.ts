// A job's recent runs (time, status, duration) and one run's transcript, read-only, inside the Jobs view.
// Every run of a cron job is a stored Hermes session; the kernel lists them and sends a transcript as
// turn-model messages (hermes_notebook/widgets/job_runs.py). The transcript is drawn here as text only
// (textContent, no markdown renderer): it stays inert, has no buttons since nothing in a finished run can be
// answered, and keeps the jobs bundle free of the chat's markdown and highlighting libraries.

import { displayText, h, setAttr, setText } from "../dom";
import type { Message, Part } from "../types";
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

interface KernelMsg {
  type: string;
  request?: number;
  [key: string]: unknown;
}

/** "2.4 s" / "1 min 5 s" / "running". */
export function formatDuration(seconds: number | null): string {
  if (seconds === null || !Number.isFinite(seconds)) return "running";
  if (seconds < 60) return `${seconds.toFixed(1)} s`;
  const whole = Math.round(seconds);
  return `${Math.floor(whole / 60)} min ${whole % 60} s`;
}

export class RunsPanel {
  readonly el: HTMLElement;
  private readonly send: (msg: KernelMsg) => void;
  private readonly nextRequest: () => number;
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
  private runsRequest = 0;
  private transcriptRequest = 0;

  constructor(send: (msg: KernelMsg) => void, nextRequest: () => number) {
    this.send = send;
    this.nextRequest = nextRequest;
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
  }

  private reload(): void {
    if (this.jobId === null) return;
    this.runsRequest = this.nextRequest();
    setText(this.status, "Loading runs…");
    this.send({ type: "runs", request: this.runsRequest, id: this.jobId });
  }

  private open(run: RunRow): void {
    this.transcriptRequest = this.nextRequest();
    this.transcript.hidden = false;
    this.transcript.replaceChildren(h("div", { class: "hn-sub" }, `Opening the run of ${formatTime(run.started_at)}…`));
    this.send({ type: "transcript", request: this.transcriptRequest, run_id: run.id });
  }

  /** Handle a kernel message; true when it was for this panel. */
  onMessage(msg: KernelMsg): boolean {
    if (msg.type === "runs_result") {
      if (msg.request === this.runsRequest) this.renderRuns(msg);
      return true;
    }
    if (msg.type === "transcript_result") {
      if (msg.request === this.transcriptRequest) this.renderTranscript(msg);
      return true;
    }
    return false;
  }

  private renderRuns(msg: KernelMsg): void {
    if (!msg.ok) {
      setText(this.status, String(msg.message ?? "Could not list the runs."));
      this.tbody.replaceChildren();
      return;
    }
    const runs = (msg.runs as RunRow[]) ?? [];
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

  private renderTranscript(msg: KernelMsg): void {
    if (!msg.ok) {
      this.transcript.replaceChildren(h("div", { class: "hn-err", role: "alert" }, String(msg.message ?? "Could not open the run.")));
      return;
    }
    const messages = (msg.messages as Message[]) ?? [];
    const views = messages.map((m) => renderMessage(m));
    setAttr(this.transcript, "data-run-id", String(msg.run_id ?? ""));
    this.transcript.replaceChildren(...(views.length ? views : [h("div", { class: "hn-sub" }, "This run has no messages.")]));
  }
}

function renderPart(part: Part): HTMLElement | null {
  if (part.kind === "text") return part.text ? h("div", { class: "hn-run-text" }, part.text) : null;
  if (part.kind === "reasoning") {
    return part.text ? h("details", { class: "hn-run-reasoning" }, h("summary", {}, "Reasoning"), h("pre", {}, part.text)) : null;
  }
  if (part.kind === "tool") {
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
  }
  return null;
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
