// Shapes shared with the Python side. Names mirror docs/architecture.md field for field
// ("Turn model" for Message/Part/Interaction and change records, "Widget comm protocol" for the
// traitlets and custom messages). Change them only together with that document.

export type MessageStatus = "streaming" | "queued" | "complete" | "interrupted" | "error" | "cancelled";
export type PartKind = "reasoning" | "text" | "tool" | "marker" | "todo" | "subagent";
export type ToolStatus = "running" | "completed" | "error" | "cancelled";
export type InteractionKind = "approval" | "clarify" | "sudo" | "secret" | "code";
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
  /** A tool part whose output Hermes flagged (prompt injection, secrets), or from history marked untrusted. */
  risk?: Risk;
  /** A text or tool part naming images; only `inline` and `media` ones (from the connected Hermes) show unasked. */
  images?: ImageRef[];
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

// ---- synced traitlets ----

/** One category of the session's context window (from session.context_breakdown). */
export interface ContextCategory {
  id: string;
  label: string;
  tokens: number;
}

/** The `context_usage` traitlet: how full the session's context window is, and with what. */
export interface ContextUsage {
  used: number;
  max: number;
  percent: number;
  categories: ContextCategory[];
}

export interface SessionInfo {
  id: string;
  title: string | null;
  /** The start of the first prompt (stored sessions; shown until a title arrives). */
  preview?: string | null;
}
export type ConnectionStatus = "connected" | "disconnected" | "reconnecting" | "reconnected";
export interface Connection {
  status: ConnectionStatus;
  retry_in: number | null;
  message: string | null;
}

/** One index entry: a message without its parts, plus its revision (sent in `changes` batches). */
export interface IndexEntry {
  id: string;
  role: Message["role"];
  status: MessageStatus;
  usage: Usage | null;
  error: string | null;
  /** Sum of the change-record weights applied to the message (see `changeWeight` in chat/state.ts). */
  rev: number;
}

export interface ChatState {
  /** "chat": composer and session controls; "turn": the conversation only (the `%hermes` live turn).
   *  Not in docs/architecture.md yet; set by hermes_notebook/widgets/_stream.py. */
  mode?: "chat" | "turn";
  /** True while history or a session switch loads (Chat only; not in docs/architecture.md yet). */
  loading?: boolean;
  /** Seq of the last batch that carried index entries: a view behind it lost a batch. */
  settled_seq?: number;
  session: SessionInfo | null;
  connection: Connection | null;
  busy: boolean;
  queued: number;
  notice: string;
  /** The open session's model ("" until known; Chat only, widgets/chat_session.py). */
  model?: string;
  /** The session's context window and its categories (Chat only, widgets/chat_session.py). */
  context_usage?: ContextUsage | null;
}

// ---- custom messages ----

/** Kernel -> browser. */
export type KernelMsg =
  | { type: "changes"; seq: number; changes: WireChange[]; index?: IndexEntry[] }
  /** a batch of one `append` of `text` to the part the previous batch (seq - 1) ended appending to */
  | { type: "more"; seq: number; text: string }
  | { type: "index"; index: IndexEntry[] }
  | {
      type: "snapshot";
      seq: number;
      messages: Message[];
      revs?: Record<string, number>;
      /** only the newest messages: `older` more precede them in the kernel, sent a page at a time on request */
      partial?: boolean;
      older?: number;
      /** sent by a reset (a new conversation), not in answer to some view's request */
      reset?: boolean;
    }
  /** the page of messages before `before`, as of `seq`, answering `{type: "older"}`; `older` more precede it */
  | { type: "older"; seq: number; before: string; messages: Message[]; revs: Record<string, number>; older: number }
  /** the session picker's list, answering `{type: "list_sessions"}` (never synced state: that is saved) */
  | { type: "sessions"; sessions: SessionInfo[] }
  /** Hermes' slash commands, answering `{type: "commands"}` (never synced state) */
  | { type: "commands"; commands: CommandEntry[] }
  /** what a slash command printed, answering `{type: "command"}` (shown as text) */
  | { type: "command_output"; command: string; output: string; warning: string; prefill: string };

/** One entry of Hermes' command catalog. */
export interface CommandEntry {
  name: string;
  description: string;
  category: string;
}

export interface ImageAttachment {
  mime: string;
  /** base64, no `data:` prefix */
  data: string;
}

export interface FileAttachment {
  /** the file's name (shown in the prompt as sent) */
  name: string;
  /** base64, no `data:` prefix */
  data: string;
}

/** Browser -> kernel. */
export type ViewMsg =
  | { type: "snapshot" }
  | { type: "older"; before: string }
  | { type: "send"; text: string; images: ImageAttachment[] }
  | { type: "send_files"; text: string; images: ImageAttachment[]; files: FileAttachment[] }
  /** message buttons (chat/actions.ts): the kernel checks the message is the last reply / prompt */
  | { type: "undo" | "regenerate" | "branch"; message_id: string }
  | { type: "edit"; message_id: string; text: string }
  | { type: "stop" }
  | { type: "respond"; message_id: string; part_id: string; request_id: string; response: string }
  | {
      type: "secret";
      message_id: string;
      part_id: string;
      request_id: string;
      kind: "sudo" | "secret";
      value: string;
    }
  | { type: "new_session" }
  | { type: "switch_session"; session_id: string }
  | { type: "refresh" }
  | { type: "list_sessions" }
  | { type: "export"; format: "md" | "html" | "ipynb" }
  | { type: "commands" }
  | { type: "command"; line: string };

// ---- the anywidget model, typed over its state (after @anywidget/types AnyModel<T>) ----

export type Callback = (...args: any[]) => void;

export interface AnyModel<T> {
  get<K extends keyof T & string>(key: K): T[K];
  set<K extends keyof T & string>(key: K, value: T[K]): void;
  on(name: string, callback: Callback): void;
  off(name?: string | null, callback?: Callback | null): void;
  save_changes(): void;
  send(content: unknown, callbacks?: unknown, buffers?: ArrayBuffer[] | ArrayBufferView[]): void;
}

export type ChatModel = AnyModel<ChatState>;

export interface RenderProps<T> {
  model: AnyModel<T>;
  el: HTMLElement;
}
