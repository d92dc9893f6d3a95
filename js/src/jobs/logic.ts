// Pure helpers of the Jobs view (no DOM): preset expressions, time text, row summaries.
// The preset builders mirror hermes_notebook/cron/presets.py function for function; the kernel validates
// whatever the form sends, so a drift here shows up as an inline refusal, never as a bad request to Hermes.

import type { JobRow } from "../types/jobs";

export interface PresetValues {
  n?: number;
  minute?: number;
  at?: string; // "HH:MM"
  weekday?: number; // 0 = Sunday ... 6 = Saturday
  monthday?: number;
}

export const WEEKDAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];

/** "HH:MM" -> [hour, minute], or null when it is not a time of day. */
export function parseTime(at: string | undefined): [number, number] | null {
  const m = /^\s*(\d{1,2}):(\d{2})\s*$/.exec(at ?? "");
  if (!m) return null;
  const hour = Number(m[1]);
  const minute = Number(m[2]);
  return hour <= 23 && minute <= 59 ? [hour, minute] : null;
}

/** The schedule text a preset builds (same as cron/presets.py), or null if its inputs are incomplete. */
export function presetExpression(key: string, v: PresetValues): string | null {
  const time = parseTime(v.at);
  switch (key) {
    case "every_n_minutes": {
      const n = v.n;
      if (n === undefined || !Number.isInteger(n) || n < 1) return null;
      if (n === 1) return "* * * * *";
      return n < 60 && 60 % n === 0 ? `*/${n} * * * *` : `every ${n}m`;
    }
    case "hourly": {
      const m = v.minute ?? 0;
      return Number.isInteger(m) && m >= 0 && m <= 59 ? `${m} * * * *` : null;
    }
    case "daily":
      return time ? `${time[1]} ${time[0]} * * *` : null;
    case "weekdays":
      return time ? `${time[1]} ${time[0]} * * 1-5` : null;
    case "weekly": {
      const d = v.weekday ?? 1;
      return time && Number.isInteger(d) && d >= 0 && d <= 7 ? `${time[1]} ${time[0]} * * ${d % 7}` : null;
    }
    case "monthly": {
      const d = v.monthday ?? 1;
      return time && Number.isInteger(d) && d >= 1 && d <= 31 ? `${time[1]} ${time[0]} ${d} * *` : null;
    }
    default:
      return null;
  }
}

/** "updated 7 s ago" (minutes past a minute, never negative). */
export function updatedAgo(updatedAtMs: number | null, nowMs: number): string {
  if (updatedAtMs === null) return "not loaded yet";
  const seconds = Math.max(0, Math.round((nowMs - updatedAtMs) / 1000));
  if (seconds < 60) return `updated ${seconds} s ago`;
  return `updated ${Math.floor(seconds / 60)} min ago`;
}

function pad(n: number): string {
  return String(n).padStart(2, "0");
}

/** ISO time -> "YYYY-MM-DD HH:MM" in the browser's zone; "—" for none. */
export function formatTime(iso: string | null): string {
  if (!iso) return "—";
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

/** "in 5 min" / "3 min ago" / "in 2 h" relative to now. */
export function relativeTime(iso: string | null, nowMs: number): string {
  if (!iso) return "";
  const t = new Date(iso).getTime();
  if (Number.isNaN(t)) return "";
  const diff = Math.round((t - nowMs) / 1000);
  const abs = Math.abs(diff);
  let amount: string;
  if (abs < 60) amount = `${abs} s`;
  else if (abs < 3600) amount = `${Math.round(abs / 60)} min`;
  else if (abs < 86400 * 2) amount = `${Math.round(abs / 3600)} h`;
  else amount = `${Math.round(abs / 86400)} d`;
  return diff >= 0 ? `in ${amount}` : `${amount} ago`;
}

/** A scheduled job whose next run is already due waits for the scheduler's next tick. */
export function isDue(row: JobRow, nowMs: number): boolean {
  if (row.state !== "scheduled" || !row.next_run_at) return false;
  return new Date(row.next_run_at).getTime() <= nowMs;
}

/** The state text of a row: "running", "due (next tick)", "paused", ... */
export function stateText(row: JobRow, nowMs: number): string {
  if (row.running) return "running";
  if (isDue(row, nowMs)) return "due: starts on the next scheduler tick";
  return row.state;
}

/** Form values as the kernel's `save` message expects them. */
export interface FormValues {
  name: string;
  schedule: string;
  prompt: string;
  deliver: string;
  skills: string;
  repeat: string;
}

/** Last errors of a job, from the kernel's `job_errors` message. */
export interface JobErrors {
  last_error: string | null;
  last_delivery_error: string | null;
}

/** Prefill values for editing a row (the prompt is not in the row: the form asks the kernel for it). */
export function formFromRow(row: JobRow): FormValues {
  return {
    name: row.name,
    schedule: row.schedule_text,
    prompt: "",
    deliver: row.deliver ?? "local",
    skills: row.skills.join(", "),
    repeat: row.repeat_times === null ? "" : String(row.repeat_times),
  };
}

export const EMPTY_FORM: FormValues = { name: "", schedule: "", prompt: "", deliver: "local", skills: "", repeat: "" };
