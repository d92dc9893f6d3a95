import { afterEach, describe, expect, it } from "vitest";

import jobs, { type JobRow, type JobsState } from "../src/jobs";
import { formatDuration } from "../src/jobs/runs";
import { FakeModel } from "./fake-model";

function row(over: Partial<JobRow> = {}): JobRow {
  return {
    id: "0123456789ab", name: "nightly report", schedule: "0 2 * * *", schedule_text: "0 2 * * *",
    schedule_kind: "cron", description: "every day at 02:00", state: "scheduled", enabled: true,
    next_run_at: null, last_run_at: "2030-03-01T07:00:00+00:00", last_status: "ok", has_error: false,
    has_delivery_error: false, repeat_times: null, repeat_completed: 1, repeat_text: "1 run (no limit)",
    deliver: "local", skills: [], running: false, ...over,
  };
}

function mount() {
  const state: JobsState = {
    jobs: [row()], include_disabled: false, auto_refresh: 0, updated_at: null, loading: false,
    connection: { status: "connected", message: null, url: "http://127.0.0.1:8642" }, notice: {}, presets: [],
    timezone: "UTC",
  };
  const model = new FakeModel<JobsState>(state);
  const host = document.createElement("div");
  document.body.append(host);
  const cleanup = jobs.render({ model, el: host });
  const q = (id: string) => host.querySelector<HTMLElement>(`[data-testid="${id}"]`);
  const all = (id: string) => Array.from(host.querySelectorAll<HTMLElement>(`[data-testid="${id}"]`));
  return { model, host, cleanup, q, all };
}

const RUN = {
  id: "cron_0123456789ab_20300301_070000", job_id: "0123456789ab", status: "ok",
  started_at: "2030-03-01T07:00:00+00:00", ended_at: "2030-03-01T07:00:02+00:00", duration: 2.25,
  title: "nightly report · Mar 01 07:00", message_count: 4, tool_call_count: 1,
};

const TRANSCRIPT = [
  { id: "u1", role: "user", status: "complete", usage: null, error: null,
    parts: [{ id: "t0", kind: "text", text: "RUN echo hi", name: null, status: null, arguments: null, preview: null,
      result: null, duration: null, interaction: null }] },
  { id: "a1", role: "assistant", status: "complete", usage: null, error: null,
    parts: [
      { id: "tool:1", kind: "tool", text: "", name: "terminal", status: "completed", arguments: { command: "echo hi" },
        preview: null, result: { output: "hi" }, duration: null, interaction: null },
      { id: "t1", kind: "text", text: "Command output: <img src=x onerror=alert(1)>", name: null, status: null,
        arguments: null, preview: null, result: null, duration: null, interaction: null },
    ] },
];

afterEach(() => document.body.replaceChildren());

describe("job runs", () => {
  it("formats durations", () => {
    expect(formatDuration(2.25)).toBe("2.3 s");
    expect(formatDuration(65)).toBe("1 min 5 s");
    expect(formatDuration(null)).toBe("running");
  });

  it("asks for a job's runs, lists them, and opens one read-only", () => {
    const { model, q, all, cleanup } = mount();
    expect(q("job-runs")!.hidden).toBe(true);
    q("job-runs-open")!.click();
    expect(q("job-runs")!.hidden).toBe(false);
    expect(q("job-runs")!.textContent).toContain("Runs of “nightly report”");
    const ask = model.sentOfType("runs")[0]!;
    expect(ask).toMatchObject({ id: "0123456789ab" });
    expect(q("job-runs-status")!.textContent).toBe("Loading runs…");

    model.kernelSend({ type: "runs_result", request: ask.request, id: "0123456789ab", ok: true, runs: [RUN], message: "" });
    const rows = all("job-run-row");
    expect(rows).toHaveLength(1);
    expect(rows[0]!.dataset.status).toBe("ok");
    expect(rows[0]!.textContent).toContain("2.3 s");

    q("job-run-open")!.click();
    const open = model.sentOfType("transcript")[0]!;
    expect(open).toMatchObject({ run_id: RUN.id });
    model.kernelSend({ type: "transcript_result", request: open.request, run_id: RUN.id, ok: true, messages: TRANSCRIPT, message: "" });
    const transcript = q("job-run-transcript")!;
    expect(transcript.hidden).toBe(false);
    expect(transcript.getAttribute("aria-readonly")).toBe("true");
    expect(transcript.querySelectorAll(".hn-message")).toHaveLength(2);
    expect(transcript.textContent).toContain("RUN echo hi");
    expect(transcript.textContent).toContain("terminal");
    expect(transcript.querySelector("img[onerror]")).toBeNull(); // model output stays inert
    cleanup();
  });

  it("ignores stale answers and shows errors", () => {
    const { model, q, all } = mount();
    q("job-runs-open")!.click();
    const first = model.sentOfType("runs")[0]!;
    q("job-runs-refresh")!.click();
    model.kernelSend({ type: "runs_result", request: first.request, ok: true, runs: [RUN], message: "" });
    expect(all("job-run-row")).toHaveLength(0);
    const second = model.sentOfType("runs")[1]!;
    model.kernelSend({ type: "runs_result", request: second.request, ok: false, runs: [], message: "Could not list the runs: down" });
    expect(q("job-runs-status")!.textContent).toBe("Could not list the runs: down");
  });

  it("closes with Escape and the Close button", () => {
    const { q } = mount();
    q("job-runs-open")!.click();
    q("job-runs")!.dispatchEvent(new KeyboardEvent("keydown", { key: "Escape", bubbles: true }));
    expect(q("job-runs")!.hidden).toBe(true);
    q("job-runs-open")!.click();
    q("job-runs-close")!.click();
    expect(q("job-runs")!.hidden).toBe(true);
  });
});
