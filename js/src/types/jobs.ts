// The jobs widget's synced state and its custom messages both ways (hermes_notebook/widgets/jobs.py, "Jobs widget: runs" in
// docs/architecture.md). Mirrored name for name in hermes_notebook/widgets/messages.py and
// hermes_notebook/widgets/inbound.py; tests/test_contract.py compares them field by field.

import type { ErrorMsg } from "./widget";
import type { Message } from "./turns";

// ---- synced traitlets ----

export interface JobRow {
  id: string;
  name: string;
  // No prompt and no error text: rows are synced state, saved with the notebook. The edit form asks for the
  // prompt (`get_prompt`), the view for the errors (`job_errors`); the answers are never state.
  schedule: string;
  schedule_text: string;
  schedule_kind: string;
  description: string;
  state: string;
  enabled: boolean;
  next_run_at: string | null;
  last_run_at: string | null;
  last_status: string | null;
  /** The last run failed with an error (its text comes in a `job_errors` message). */
  has_error: boolean;
  /** The last delivery failed (its text comes in a `job_errors` message). */
  has_delivery_error: boolean;
  repeat_times: number | null;
  repeat_completed: number;
  repeat_text: string;
  deliver: string | null;
  skills: string[];
  running: boolean;
}

/** The `connection` traitlet: the API Server the widget talks to, and whether it answers. */
export interface JobsConnection {
  status: "connecting" | "connected" | "error";
  message: string | null;
  url: string;
}

export interface Preset {
  key: string;
  label: string;
  fields: string[];
}

export interface JobsState {
  jobs: JobRow[];
  include_disabled: boolean;
  auto_refresh: number;
  updated_at: number | null;
  loading: boolean;
  connection: JobsConnection;
  notice: { kind?: "info" | "error" | "run"; text?: string };
  presets: Preset[];
  timezone: string;
}

// ---- custom messages ----

export interface JobsRefreshMsg {
  type: "refresh";
}
/** The listed jobs' last errors: answered by a `JobErrorsMsg` (never synced: the rows only flag them). */
export interface JobErrorsRequest {
  type: "job_errors";
  request: string;
}
export interface CheckScheduleMsg {
  type: "check_schedule";
  request: string;
  schedule: string;
}
export interface SaveMsg {
  type: "save";
  request: string;
  id: string | null;
  fields: Record<string, string>;
}
export interface ActionMsg {
  type: "action";
  request: string;
  action: "pause" | "resume" | "run" | "delete";
  id: string;
}
export interface GetPromptMsg {
  type: "get_prompt";
  request: string;
  id: string;
}
/** A scheduled reproducibility check of a notebook (hermes.jobs.reproduce), answered like a save. */
export interface ReproduceMsg {
  type: "reproduce";
  request: string;
  notebook: string;
  schedule: string;
}
export interface RunsMsg {
  type: "runs";
  request: string;
  id: string;
}
export interface TranscriptMsg {
  type: "transcript";
  request: string;
  run_id: string;
}
/** Jobs: browser -> kernel. */
export type JobsViewMsg = JobsRefreshMsg | JobErrorsRequest | CheckScheduleMsg | SaveMsg | ActionMsg | GetPromptMsg | ReproduceMsg | RunsMsg | TranscriptMsg;
export type JobsQuestion = Extract<JobsViewMsg, { request: string }>;

/** A schedule as the kernel checked it (hermes_notebook/cron/schedules.py `ScheduleCheck.to_dict`). */
export interface ScheduleCheckMsg {
  type: "schedule_check";
  request: string;
  ok: boolean;
  text: string;
  message: string;
  example: string;
  kind: string;
  description: string;
  next_runs: string[];
  warnings: string[];
}
export interface SaveResultMsg {
  type: "save_result";
  request: string;
  ok: boolean;
  /** the form field the error belongs to */
  field: string | null;
  message: string;
  job: Record<string, unknown> | null;
}
export interface ActionResultMsg {
  type: "action_result";
  request: string;
  action: string;
  id: string;
  ok: boolean;
  message: string;
}
/** A listed job's whole prompt, for the edit form (never synced). */
export interface PromptMsg {
  type: "prompt";
  request: string;
  id: string;
  ok: boolean;
  prompt: string | null;
}
/** The listed jobs' last errors (jobs with an error only), answering `job_errors`; also pushed, without a request,
 *  after every refresh. */
export interface JobErrorsMsg {
  type: "job_errors";
  request?: string;
  errors: Record<string, { last_error: string | null; last_delivery_error: string | null }>;
}
export interface RunsResultMsg {
  type: "runs_result";
  request: string;
  id: string;
  ok: boolean;
  runs: Record<string, unknown>[];
  message: string;
}
export interface TranscriptResultMsg {
  type: "transcript_result";
  request: string;
  run_id: string;
  ok: boolean;
  messages: Message[];
  message: string;
}
/** Jobs: kernel -> browser. */
export type JobsKernelMsg =
  | ScheduleCheckMsg
  | SaveResultMsg
  | ActionResultMsg
  | PromptMsg
  | JobErrorsMsg
  | RunsResultMsg
  | TranscriptResultMsg
  | ErrorMsg;
