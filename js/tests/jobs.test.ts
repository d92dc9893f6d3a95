import { afterEach, describe, expect, it, vi } from "vitest";

import jobs, { type JobRow, type JobsState } from "../src/jobs";
import { formFromRow, presetExpression, relativeTime, stateText, updatedAgo } from "../src/jobs/logic";
import { FakeModel } from "./fake-model";

const NOW = Date.parse("2030-03-01T08:00:00Z");

function row(over: Partial<JobRow> = {}): JobRow {
  return {
    id: "0123456789ab", name: "nightly report", schedule: "0 2 * * *", schedule_text: "0 2 * * *",
    schedule_kind: "cron", description: "every day at 02:00", state: "scheduled", enabled: true,
    next_run_at: "2030-03-02T02:00:00+00:00", last_run_at: null, last_status: null, has_error: false,
    has_delivery_error: false, repeat_times: null, repeat_completed: 0, repeat_text: "0 runs (no limit)",
    deliver: "local", skills: [], running: false, ...over,
  };
}

function state(over: Partial<JobsState> = {}): JobsState {
  return {
    jobs: [row()], include_disabled: false, auto_refresh: 30, updated_at: NOW - 7000, loading: false,
    connection: { status: "connected", message: null, url: "http://127.0.0.1:8642" }, notice: {},
    presets: [
      { key: "every_n_minutes", label: "Every N minutes", fields: ["n"] },
      { key: "hourly", label: "Hourly", fields: ["minute"] },
      { key: "daily", label: "Daily at HH:MM", fields: ["at"] },
      { key: "weekdays", label: "Weekdays at HH:MM", fields: ["at"] },
      { key: "weekly", label: "Weekly", fields: ["day", "at"] },
      { key: "monthly", label: "Monthly", fields: ["day", "at"] },
    ],
    timezone: "UTC", ...over,
  };
}

function mount(over: Partial<JobsState> = {}) {
  vi.useFakeTimers();
  vi.setSystemTime(NOW);
  const model = new FakeModel<JobsState>(state(over));
  const host = document.createElement("div");
  document.body.append(host);
  const cleanup = jobs.render({ model, el: host });
  const q = <T extends Element = HTMLElement>(id: string) => host.querySelector<T & HTMLElement>(`[data-testid="${id}"]`)!;
  return { model, host, cleanup, q };
}

afterEach(() => {
  vi.useRealTimers();
  document.body.replaceChildren();
});

describe("jobs logic", () => {
  it("builds the same preset expressions as schedules.py", () => {
    expect(presetExpression("every_n_minutes", { n: 5 })).toBe("*/5 * * * *");
    expect(presetExpression("every_n_minutes", { n: 1 })).toBe("* * * * *");
    expect(presetExpression("every_n_minutes", { n: 7 })).toBe("every 7m");
    expect(presetExpression("every_n_minutes", { n: 0 })).toBeNull();
    expect(presetExpression("hourly", { minute: 15 })).toBe("15 * * * *");
    expect(presetExpression("daily", { at: "9:30" })).toBe("30 9 * * *");
    expect(presetExpression("weekdays", { at: "08:00" })).toBe("0 8 * * 1-5");
    expect(presetExpression("weekly", { weekday: 5, at: "17:00" })).toBe("0 17 * * 5");
    expect(presetExpression("monthly", { monthday: 15, at: "09:00" })).toBe("0 9 15 * *");
    expect(presetExpression("daily", { at: "25:00" })).toBeNull();
  });

  it("words times relative to now and marks due jobs", () => {
    expect(updatedAgo(NOW - 7000, NOW)).toBe("updated 7 s ago");
    expect(updatedAgo(NOW - 125000, NOW)).toBe("updated 2 min ago");
    expect(updatedAgo(null, NOW)).toBe("not loaded yet");
    expect(relativeTime("2030-03-01T08:05:00Z", NOW)).toBe("in 5 min");
    expect(relativeTime("2030-03-01T07:00:00Z", NOW)).toBe("1 h ago");
    expect(stateText(row({ next_run_at: "2030-03-01T07:59:00Z" }), NOW)).toMatch(/next scheduler tick/);
    expect(stateText(row({ running: true }), NOW)).toBe("running");
    expect(formFromRow(row({ repeat_times: 3, skills: ["a", "b"] }))).toMatchObject({ repeat: "3", skills: "a, b" });
  });
});

describe("jobs view", () => {
  it("renders rows, health, 'updated N s ago' and escapes server text", () => {
    const { model, host, q, cleanup } = mount({
      jobs: [row(), row({ id: "bbbbbbbbbbbb", name: "<b>x</b>", last_status: "error", has_error: true, has_delivery_error: true })],
    });
    model.kernelSend({ type: "job_errors", errors: { bbbbbbbbbbbb: { last_error: "boom", last_delivery_error: "no telegram" } } });
    expect(host.querySelectorAll('[data-testid="job-row"]')).toHaveLength(2);
    expect(q("jobs-health").dataset.status).toBe("connected");
    expect(q("jobs-updated").textContent).toBe("updated 7 s ago");
    vi.advanceTimersByTime(3000);
    expect(q("jobs-updated").textContent).toBe("updated 10 s ago");
    expect(host.querySelector("b")).toBeNull();
    const second = host.querySelectorAll('[data-testid="job-row"]')[1]!;
    expect(second.querySelector('[data-testid="job-last-error"]')!.textContent).toBe("error: boom");
    expect(second.querySelector('[data-testid="job-last-delivery-error"]')!.textContent).toBe("delivery: no telegram");
    expect(q("job-schedule").textContent).toContain("every day at 02:00");
    model.kernelSet("connection", { status: "error", message: "Hermes refused the API key", url: "" });
    expect(q("jobs-health").dataset.status).toBe("error");
    expect(q("jobs-health").textContent).toContain("refused the API key");
    cleanup();
    expect(model.listenerCount()).toBe(0);
  });

  it("sends row actions and asks for a confirmation before deleting", () => {
    const { model, q } = mount();
    q<HTMLButtonElement>("job-pause").click();
    expect(model.sentOfType("action")[0]).toMatchObject({ action: "pause", id: "0123456789ab" });
    model.kernelSend({ type: "action_result", request: model.sentOfType("action")[0]!.request, ok: true });
    q<HTMLButtonElement>("job-run").click();
    expect(model.sentOfType("action")[1]).toMatchObject({ action: "run" });
    model.kernelSend({ type: "action_result", request: model.sentOfType("action")[1]!.request, ok: true });
    q<HTMLButtonElement>("job-delete").click();
    expect(model.sentOfType("action")).toHaveLength(2); // nothing sent yet
    q<HTMLButtonElement>("job-delete-cancel").click();
    expect(q("job-delete")).not.toBeNull();
    q<HTMLButtonElement>("job-delete").click();
    q<HTMLButtonElement>("job-delete-confirm").click();
    expect(model.sentOfType("action")[2]).toMatchObject({ action: "delete", id: "0123456789ab" });
  });

  it("shows Resume for paused jobs and toggles include_disabled", () => {
    const { model, q } = mount({ jobs: [row({ state: "paused", enabled: false })] });
    expect(q("job-resume").textContent).toBe("Resume");
    const toggle = q<HTMLInputElement>("jobs-include-disabled");
    toggle.click();
    expect(model.get("include_disabled")).toBe(true);
    expect(model.saves).toBe(1);
  });

  it("builds a schedule from a preset, checks it in the kernel and shows the answer", () => {
    const { model, q } = mount();
    q<HTMLButtonElement>("jobs-new").click();
    expect(q("jobs-form").hidden).toBe(false);
    const preset = q<HTMLSelectElement>("job-form-preset");
    preset.value = "weekdays";
    preset.dispatchEvent(new Event("change"));
    expect(q<HTMLInputElement>("job-form-schedule").value).toBe("0 9 * * 1-5");
    vi.advanceTimersByTime(300);
    const check = model.sentOfType("check_schedule").at(-1)!;
    expect(check.schedule).toBe("0 9 * * 1-5");
    model.kernelSend({ type: "schedule_check", request: check.request, ok: true, description: "every weekday at 09:00",
      next_runs: ["2030-03-01T09:00:00Z", "2030-03-04T09:00:00Z", "2030-03-05T09:00:00Z"], warnings: [] });
    expect(q("job-form-schedule-check").textContent).toContain("every weekday at 09:00");
    expect(q("job-form-schedule-check").dataset.ok).toBe("true");
  });

  it("shows a refused schedule inline and keeps the form open", () => {
    const { model, q } = mount();
    q<HTMLButtonElement>("jobs-new").click();
    q<HTMLInputElement>("job-form-name").value = "bad";
    const input = q<HTMLInputElement>("job-form-schedule");
    input.value = "0 9 * * MON";
    input.dispatchEvent(new Event("input"));
    vi.advanceTimersByTime(300);
    const check = model.sentOfType("check_schedule").at(-1)!;
    model.kernelSend({ type: "schedule_check", request: check.request, ok: false, message: "Day names like 'MON' are not accepted.", example: "'0 9 * * 1'" });
    expect(q("job-form-schedule-check").textContent).toContain("Example that works: '0 9 * * 1'");
    q<HTMLButtonElement>("job-form-save").click();
    const save = model.sentOfType("save").at(-1)!;
    expect(save).toMatchObject({ id: null, fields: { name: "bad", schedule: "0 9 * * MON" } });
    model.kernelSend({ type: "save_result", request: save.request, ok: false, field: "schedule", message: "Day names… Example that works: '0 9 * * 1'" });
    expect(q("jobs-form").hidden).toBe(false);
    expect(q("job-form-error").textContent).toContain("fix the schedule");
  });

  it("edits a row with its values and closes on success; Escape closes the form", () => {
    const { model, q } = mount({ jobs: [row({ repeat_times: 4 })] });
    q<HTMLButtonElement>("job-edit").click();
    expect(q<HTMLInputElement>("job-form-name").value).toBe("nightly report");
    const ask = model.sentOfType("get_prompt").at(-1)!;
    model.kernelSend({ type: "prompt", request: ask.request, id: "0123456789ab", ok: true, prompt: "RUN echo hi" });
    expect(q<HTMLTextAreaElement>("job-form-prompt").value).toBe("RUN echo hi");
    expect(q<HTMLInputElement>("job-form-repeat").value).toBe("4");
    q<HTMLTextAreaElement>("job-form-prompt").value = "RUN echo changed";
    q<HTMLButtonElement>("job-form-save").click();
    const save = model.sentOfType("save").at(-1)!;
    expect(save).toMatchObject({ id: "0123456789ab", fields: { prompt: "RUN echo changed", repeat: "4" } });
    model.kernelSend({ type: "save_result", request: save.request, ok: true });
    expect(q("jobs-form").hidden).toBe(true);
    q<HTMLButtonElement>("jobs-new").click();
    q("jobs-form").dispatchEvent(new KeyboardEvent("keydown", { key: "Escape", bubbles: true }));
    expect(q("jobs-form").hidden).toBe(true);
  });
});

describe("reproducibility check", () => {
  it("asks the kernel to create a scheduled check of a notebook, shows field errors, closes on success", () => {
    const { model, q } = mount();
    expect(q("jobs-reproduce-form").hidden).toBe(true);
    q<HTMLButtonElement>("jobs-new-reproduce").click();
    expect(q("jobs-reproduce-form").hidden).toBe(false);
    expect(q("jobs-reproduce-form").textContent).toContain("Reproducibility check of a notebook");
    expect(document.activeElement).toBe(q("reproduce-notebook"));
    const check = model.sentOfType("check_schedule").at(-1)!;
    expect(check.schedule).toBe("0 6 * * *"); // the default schedule is checked on opening
    model.kernelSend({ type: "schedule_check", request: check.request, ok: true, description: "every day at 06:00",
      next_runs: ["2030-03-01T06:00:00Z"], warnings: [] });
    expect(q("reproduce-schedule-check").textContent).toContain("every day at 06:00");
    q<HTMLInputElement>("reproduce-notebook").value = "missing.ipynb";
    q<HTMLButtonElement>("reproduce-create").click();
    const first = model.sentOfType("reproduce").at(-1)!;
    expect(first).toMatchObject({ notebook: "missing.ipynb", schedule: "0 6 * * *" });
    expect(Object.keys(first).sort()).toEqual(["notebook", "request", "schedule", "type"]); // no prompt from the view
    expect(q<HTMLButtonElement>("reproduce-create").disabled).toBe(true);
    model.kernelSend({ type: "save_result", request: first.request, ok: false, field: "notebook", message: "jobs.reproduce: no notebook at /x/missing.ipynb" });
    expect(q("jobs-reproduce-form").hidden).toBe(false);
    expect(q("reproduce-error").textContent).toContain("no notebook at");
    q<HTMLInputElement>("reproduce-notebook").value = "analysis.ipynb";
    const schedule = q<HTMLInputElement>("reproduce-schedule");
    schedule.value = "0 6 * * MON";
    schedule.dispatchEvent(new Event("input"));
    vi.advanceTimersByTime(300);
    expect(model.sentOfType("check_schedule").at(-1)!.schedule).toBe("0 6 * * MON");
    q("reproduce-notebook").dispatchEvent(new KeyboardEvent("keydown", { key: "Enter", bubbles: true }));
    const second = model.sentOfType("reproduce").at(-1)!;
    expect(model.sentOfType("reproduce")).toHaveLength(2); // Enter sends once
    model.kernelSend({ type: "save_result", request: second.request, ok: false, field: "schedule", message: "Day names are not accepted." });
    expect(q("reproduce-schedule-check").textContent).toBe("Day names are not accepted.");
    expect(q("reproduce-error").textContent).toContain("fix the schedule");
    q<HTMLButtonElement>("reproduce-create").click();
    model.kernelSend({ type: "save_result", request: model.sentOfType("reproduce").at(-1)!.request, ok: true, field: null, message: "" });
    expect(q("jobs-reproduce-form").hidden).toBe(true);
    q<HTMLButtonElement>("jobs-new-reproduce").click();
    q<HTMLButtonElement>("jobs-new").click(); // one form at a time
    expect(q("jobs-reproduce-form").hidden).toBe(true);
    q<HTMLButtonElement>("jobs-new-reproduce").click();
    expect(q("jobs-form").hidden).toBe(true);
    q("jobs-reproduce-form").dispatchEvent(new KeyboardEvent("keydown", { key: "Escape", bubbles: true }));
    expect(q("jobs-reproduce-form").hidden).toBe(true);
  });
});

describe("state saved with the notebook", () => {
  it("asks for the last errors instead of holding them, and shows them only for rows still flagged", () => {
    const { model, host, q } = mount({ jobs: [row({ has_error: true })] });
    // A question, on the chat's idiom: a request id, answered once; the kernel also pushes them after a refresh.
    const [ask] = model.sentOfType("job_errors");
    expect(Object.keys(ask!).sort()).toEqual(["request", "type"]);
    const error = () => host.querySelector('[data-testid="job-last-error"]')?.textContent ?? null;
    expect(error()).toBeNull(); // flagged, but the text is not in the row
    model.kernelSend({ type: "job_errors", request: ask!.request, errors: { "0123456789ab": { last_error: "boom", last_delivery_error: null } } });
    expect(error()).toBe("error: boom");
    model.kernelSend({ type: "job_errors", errors: { "0123456789ab": { last_error: "after a refresh", last_delivery_error: null } } });
    expect(error()).toBe("error: after a refresh");
    model.kernelSet("jobs", [row({ has_error: false })]);
    expect(error()).toBeNull();
    expect(model.writes).toEqual([]);
    // The answer acknowledged the question: no busy note waits for it (../src/delivery.ts).
    vi.advanceTimersByTime(5000);
    expect(q("jobs-widget").querySelector<HTMLElement>(".hn-kernel-busy")!.hidden).toBe(true);
  });
});

describe("prompts", () => {
  it("fetches the prompt for editing and never saves an empty one in its place", () => {
    const { model, q } = mount({ jobs: [row()] });
    q<HTMLButtonElement>("job-edit").click();
    const prompt = q<HTMLTextAreaElement>("job-form-prompt");
    expect(prompt.value).toBe("");
    expect(prompt.disabled).toBe(true);
    const ask = model.sentOfType("get_prompt").at(-1)!;
    expect(ask).toMatchObject({ type: "get_prompt", id: "0123456789ab" });
    // Saved before the prompt arrives: the prompt is left out, so the job keeps its own.
    q<HTMLButtonElement>("job-form-save").click();
    expect(Object.keys(model.sentOfType("save").at(-1)!.fields as object)).not.toContain("prompt");
    model.kernelSend({ type: "save_result", request: model.sentOfType("save").at(-1)!.request, ok: false, field: null, message: "x" });
    model.kernelSend({ type: "prompt", request: ask.request, id: "0123456789ab", ok: true, prompt: "RUN echo start " + "x".repeat(300) });
    expect(prompt.disabled).toBe(false);
    expect(prompt.value).toBe("RUN echo start " + "x".repeat(300));
    q<HTMLButtonElement>("job-form-save").click();
    expect(model.sentOfType("save").at(-1)!.fields).toMatchObject({ prompt: "RUN echo start " + "x".repeat(300) });
  });
});

describe("jobs form keyboard", () => {
  it("saves once on Enter in a one-line field", () => {
    const { model, q } = mount();
    q<HTMLButtonElement>("jobs-new").click();
    q<HTMLInputElement>("job-form-name").value = "k";
    q<HTMLInputElement>("job-form-schedule").value = "every 5m";
    q("job-form-deliver").dispatchEvent(new KeyboardEvent("keydown", { key: "Enter", bubbles: true, cancelable: true }));
    expect(model.sentOfType("save")).toHaveLength(1);
    q("job-form-deliver").dispatchEvent(new KeyboardEvent("keydown", { key: "Enter", bubbles: true, cancelable: true }));
    expect(model.sentOfType("save")).toHaveLength(1); // still waiting for the kernel's answer
  });
});
