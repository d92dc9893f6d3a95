// The turn model's shapes, shared by both widgets (the chat streams them, the jobs widget shows a run's transcript).
// Mirrored field for field by hermes_notebook/turns/changes.py ("Turn model" in docs/architecture.md);
// tests/test_contract.py compares them. Change them only together.

export type MessageStatus = "streaming" | "queued" | "complete" | "interrupted" | "error" | "cancelled";
export type PartKind = "reasoning" | "text" | "tool" | "marker" | "todo" | "subagent";
export type ToolStatus = "running" | "completed" | "error" | "cancelled";
export type InteractionKind = "approval" | "clarify" | "sudo" | "secret" | "code" | "run";
export type InteractionStatus = "pending" | "answered" | "cancelled" | "expired";
export type TodoStatus = "pending" | "in_progress" | "completed" | "cancelled";
export type SubagentStatus = "queued" | "running" | "completed" | "failed" | "error" | "timeout" | "interrupted";
export type RiskLevel = "high" | "medium" | "low" | "untrusted";
export type ImageSource = "inline" | "media" | "remote";

export interface Interaction {
  kind: InteractionKind;
  request_id: string;
  status: InteractionStatus;
  command: string | null;
  question: string | null;
  description: string | null;
  choices: string[];
  /** A sudo/secret answer is recorded as "********", never the value. */
  response: string | null;
  /** Newer Hermes: a clarify with several (or multi-select) questions, answered as one JSON object by qid. */
  questions?: ClarifyQuestion[];
  /** Why the server withdrew the request (request.cancel): timeout, interrupted, resolved, ... */
  reason?: string;
  /** Hermes hid part of the command before sending it (turns/masked.py): only "once" and "deny" are offered. */
  masked?: boolean;
  /** A kernel card's own title (a preview runs in a copy of the kernel); else the card is titled by its kind. */
  title?: string;
}

export interface ClarifyQuestion {
  qid: string;
  question: string;
  /** empty: open-ended (free text only) */
  choices: string[];
  multi_select: boolean;
}

export interface Part {
  id: string;
  kind: PartKind;
  text: string;
  name: string | null;
  status: ToolStatus | null;
  arguments: string | Record<string, unknown> | null;
  preview: string | null;
  result: unknown;
  duration: number | null;
  interaction: Interaction | null;
  /** A tool part: the file change the server rendered with its completion (plain lines, never HTML). */
  diff?: string;
  /** The `todo` part: the agent's task list, latest full snapshot. */
  todos?: TodoItem[];
  /** A `subagent:<id>` part: a delegated child agent. */
  subagent?: Subagent;
  /** A kernel cell tool's part: the change it proposed, pending on a notebook cell until the user decides. */
  cell_change?: CellChange;
  /** A kernel tool's part: the images its result sent to the model (PNGs the kernel produced). */
  sent_images?: SentImage[];
  /** An approved run_code part: Undo variables offered, or why not (kernel/undo/last_run.py). */
  run_undo?: RunUndo;
  /** A tool part whose output Hermes flagged (prompt injection, secrets), or from history marked untrusted. */
  risk?: Risk;
  /** A text or tool part naming images; only `inline` and `media` ones (from the connected Hermes) show unasked. */
  images?: ImageRef[];
  /** A tool part: what its header shows (turns/labels.py): the name as a person reads it, one line of detail. */
  label?: ToolLabel;
}

export interface ToolLabel {
  name: string;
  detail: string | null;
}

export interface RunUndo {
  /** which approved run (only the kernel's last one can be undone) */
  run: number;
  offered: boolean;
  /** what Undo would restore and delete, or why it is not offered */
  text: string;
}

export interface SentImage {
  mime: string;
  width: number;
  height: number;
  bytes: number;
  /** where it came from: "In[5] display 1", "run_code figure 1" */
  label: string;
  /** the PNG, base64: exactly what was sent */
  data: string;
}

/** The kernel's permission modes for the chat's connection (the `kernel_modes` traitlet; kernel/grants.py). */

export type CellChangeKind = "insert" | "edit" | "delete";

export interface CellChange {
  /** the change's id in the notebook's front end ("c3") */
  id: string;
  kind: CellChangeKind;
  /** the cell (edit, delete) or the place (insert), counted from 0 when it was proposed */
  index: number;
  cell_type: string;
}

export interface Risk {
  level: RiskLevel;
  /** Hermes' pattern ids (server text: shown inert) */
  findings: string[];
  redacted: boolean;
}

export interface ImageRef {
  source: ImageSource;
  mime: string | null;
  /** inline: base64 of a PNG/JPEG/GIF/WebP within the size bound */
  data: string | null;
  /** media: a file on the Hermes host, read through its Dashboard (/api/media) */
  path: string | null;
  /** remote: shown as a link until the user clicks it */
  url: string | null;
  alt: string;
  bytes: number | null;
  /** why it is not shown (too large, not an image) */
  note: string | null;
}

export interface TodoItem {
  id: string;
  content: string;
  status: TodoStatus;
  /** a nested subtask: the id of its parent item */
  parent: string | null;
}

export interface SubagentTool {
  name: string;
  preview: string | null;
}

export interface Subagent {
  id: string;
  /** the subagent that spawned it; null: the turn's own agent did */
  parent_id: string | null;
  depth: number;
  goal: string;
  status: SubagentStatus;
  model: string | null;
  task_index: number;
  task_count: number;
  /** the latest thinking or progress line */
  activity: string | null;
  tools: SubagentTool[];
  summary: string | null;
}

export type Usage = Record<string, unknown>;

export interface Message {
  id: string;
  role: "user" | "assistant";
  status: MessageStatus;
  parts: Part[];
  usage: Usage | null;
  error: string | null;
}

// ---- change records (applied in order by every view) ----

export interface MessageChange {
  op: "message";
  message: Message;
}
export interface PartChange {
  op: "part";
  message_id: string;
  part: Part;
}
export interface AppendChange {
  op: "append";
  message_id: string;
  part_id: string;
  text: string;
}
export interface PatchChange {
  op: "patch";
  message_id: string;
  part_id: string;
  fields: Partial<Omit<Part, "id" | "kind">>;
}
export interface FinishChange {
  op: "finish";
  message_id: string;
  status: MessageStatus;
  usage: Usage | null;
  error: string | null;
}
export type Change = MessageChange | PartChange | AppendChange | PatchChange | FinishChange;

/** Wire only ("Widget comm protocol"): a `patch` of a part's whole `text` that keeps its first `keep`
 *  UTF-16 units and appends `text` (the end-of-turn trim, without resending the text). */
export interface SpliceChange {
  op: "splice";
  message_id: string;
  part_id: string;
  keep: number;
  text: string;
}
export type WireChange = Change | SpliceChange;
