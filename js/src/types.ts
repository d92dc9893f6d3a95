// Shapes shared with the Python side. Names mirror docs/architecture.md field for field
// ("Turn model" for Message/Part/Interaction and change records, "Widget comm protocol" for the
// traitlets and custom messages). Change them only together with that document.

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
  /** A tool part whose output Hermes flagged (prompt injection, secrets), or from history marked untrusted. */
  risk?: Risk;
  /** A text or tool part naming images; only `inline` and `media` ones (from the connected Hermes) show unasked. */
  images?: ImageRef[];
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
export interface KernelModes {
  reads: "off" | "on";
  edits: "propose" | "off";
  runs: "ask" | "allow" | "never";
  /** a session of this connection reads by a Run card's grant although reads are off */
  granted: boolean;
  server: string;
  /** the cell tools are offered (a notebook page with the extension is attached) */
  cells: boolean;
}

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
  /** What Hermes may do in this notebook's kernel (Chat only, widgets/chat_kernel.py); null: not shared. */
  kernel_modes?: KernelModes | null;
}

// ---- custom messages (js/src/invoke.ts: the one idiom of both widgets) ----
//
// Mirrored name for name in hermes_notebook/widgets/messages.py (kernel -> browser) and the tables of
// hermes_notebook/widgets/inbound.py (browser -> kernel); tests/test_contract.py compares them field by field.
// A question carries a `request` id (set by `invoke`) and is answered once by the message `Answers` names for
// it, with the same `request`, or by an `ErrorMsg`; every other message is a command or a state push.

/** Kernel -> browser: a question could not be answered (the view's `invoke` rejects with `message`). */
export interface ErrorMsg {
  type: "error";
  request: string;
  message: string;
}

/** A change batch; `index` only when the batch settles messages. */
export interface ChangesMsg {
  type: "changes";
  seq: number;
  changes: WireChange[];
  index?: IndexEntry[];
}
/** A batch of one `append` of `text` to the part the previous batch (seq - 1) ended appending to. */
export interface MoreMsg {
  type: "more";
  seq: number;
  text: string;
}
export interface IndexMsg {
  type: "index";
  index: IndexEntry[];
}
export interface SnapshotMsg {
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
/** The page of messages before `before`, as of `seq`, answering `{type: "older"}`; `older` more precede it. */
export interface OlderMsg {
  type: "older";
  seq: number;
  before: string;
  messages: Message[];
  revs: Record<string, number>;
  older: number;
}
/** The session picker's list, answering `list_sessions` (and sent again after every re-list, without a request). */
export interface SessionsMsg {
  type: "sessions";
  request?: string;
  sessions: SessionInfo[];
}
/** Hermes' slash commands, answering `commands` (never synced state). */
export interface CommandsMsg {
  type: "commands";
  request?: string;
  commands: CommandEntry[];
}
/** What a slash command printed, answering `command` (shown as text). */
export interface CommandOutputMsg {
  type: "command_output";
  request?: string;
  command: string;
  output: string;
  warning: string;
  prefill: string;
}
/** A part's image read in the kernel, answering `image`: base64 of a sniffed `mime` image (never widget state). */
export interface ImageMsg {
  type: "image";
  request?: string;
  mime: string;
  data: string;
}
/** One profile of the Hermes the chat talks to (server text: shown as text only). */
export interface ProfileEntry {
  name: string;
  default: boolean;
  model: string;
  description: string;
}
/** The profiles this Hermes serves and the chat's own (`current`), answering `profiles`. */
export interface ProfilesMsg {
  type: "profiles";
  request?: string;
  profiles: ProfileEntry[];
  current: string | null;
}

/** One file a turn changed (its path is server text: shown inert). */
export interface TurnFileEntry {
  path: string;
  status: string;
  added: number;
  removed: number;
}
/** The files the last reply's turn changed, answering `turn_files` (empty: no Undo with files for it). */
export interface TurnFilesMsg {
  type: "turn_files";
  request?: string;
  message_id: string;
  files: TurnFileEntry[];
  /** Hermes takes checkpoints here: Branch with files is offered */
  checkpoints: boolean;
}

/** Which controls a running subagent's part offers on this Hermes, answering `subagent_controls`. */
export interface SubagentControlsMsg {
  type: "subagent_controls";
  request?: string;
  steer: boolean;
  stop: boolean;
}

/** The chat view's code and stylesheet, answering a `%hermes` live view's `bundle` question (js/src/turn.ts). */
export interface BundleMsg {
  type: "bundle";
  request?: string;
  esm: string;
  css: string;
}

/** Chat: kernel -> browser. */
export type KernelMsg =
  | ChangesMsg
  | MoreMsg
  | IndexMsg
  | SnapshotMsg
  | OlderMsg
  | SessionsMsg
  | CommandsMsg
  | CommandOutputMsg
  | ImageMsg
  | ProfilesMsg
  | TurnFilesMsg
  | SubagentControlsMsg
  | BundleMsg
  | ErrorMsg;

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

export interface SnapshotRequest {
  type: "snapshot";
}
export interface OlderRequest {
  type: "older";
  before: string;
}
export interface SendMsg {
  type: "send";
  text: string;
  images: ImageAttachment[];
}
export interface SendFilesMsg {
  type: "send_files";
  text: string;
  images: ImageAttachment[];
  files: FileAttachment[];
}
/** Message buttons (chat/actions.ts): the kernel checks the message is the last reply / prompt. */
export interface UndoMsg {
  type: "undo";
  message_id: string;
  /** put the files the turn changed back too (offered after a `turn_files` answer named some) */
  files?: boolean;
}
/** Which files the last reply's turn changed: answered by a `TurnFilesMsg` (refused where Hermes cannot say). */
export interface TurnFilesRequest {
  type: "turn_files";
  request: string;
  message_id: string;
}
export interface RegenerateMsg {
  type: "regenerate";
  message_id: string;
}
export interface BranchMsg {
  type: "branch";
  message_id: string;
  /** put back the files changed after this message too (offered where Hermes takes checkpoints) */
  files?: boolean;
}
export interface EditMsg {
  type: "edit";
  message_id: string;
  text: string;
}
export interface StopMsg {
  type: "stop";
}
export interface RespondMsg {
  type: "respond";
  message_id: string;
  part_id: string;
  request_id: string;
  response: string;
}
export interface SecretMsg {
  type: "secret";
  message_id: string;
  part_id: string;
  request_id: string;
  kind: "sudo" | "secret";
  value: string;
}
export interface NewSessionMsg {
  type: "new_session";
}
export interface SwitchSessionMsg {
  type: "switch_session";
  session_id: string;
}
export interface RefreshMsg {
  type: "refresh";
}
export interface ExportMsg {
  type: "export";
  format: "md" | "html" | "ipynb";
}
/** The header's Revoke: what was allowed in the kernel for this session (chat/kernel_modes.ts). */
export interface KernelRevokeMsg {
  type: "kernel_revoke";
}
/** The picker opened: answered by a `SessionsMsg`. */
export interface ListSessionsMsg {
  type: "list_sessions";
  request: string;
}
/** The composer's `/` menu opened: answered by a `CommandsMsg`. */
export interface CommandsRequest {
  type: "commands";
  request: string;
}
/** A composer text starting `/name`: answered by a `CommandOutputMsg`. */
export interface CommandMsg {
  type: "command";
  request: string;
  line: string;
}
/** A view shows `images[index]` of a part: answered by an `ImageMsg` (the kernel reads a `media` file). */
export interface ImageRequest {
  type: "image";
  request: string;
  message_id: string;
  part_id: string;
  index: number;
}

/** The header's profile picker opened: answered by a `ProfilesMsg`. */
export interface ProfilesRequest {
  type: "profiles";
  request: string;
}
/** The picker's choice: the chat moves to a new session in that profile (or a notice says why not). */
export interface SwitchProfileMsg {
  type: "switch_profile";
  profile: string;
}
/** The composer's Steer choice while a turn runs: `text` goes into the running turn, not the queue. */
export interface SteerMsg {
  type: "steer";
  text: string;
}

/** Which subagent controls this Hermes offers: answered by a `SubagentControlsMsg`. */
export interface SubagentControlsRequest {
  type: "subagent_controls";
  request: string;
}
/** A `%hermes` live view's loader asks for the chat view's code (once per page): answered by a `BundleMsg`. */
export interface BundleRequest {
  type: "bundle";
  request: string;
}
/** A running subagent part's Steer: `text` goes to that subagent (`subagent.steer`). */
export interface SubagentSteerMsg {
  type: "subagent_steer";
  subagent_id: string;
  text: string;
}
/** A running subagent part's Stop (`subagent.interrupt`). */
export interface SubagentStopMsg {
  type: "subagent_stop";
  subagent_id: string;
}

/** Chat: browser -> kernel, commands (no answer: their effects come as state and change records). */
export type ChatCommand =
  | SnapshotRequest
  | OlderRequest
  | SendMsg
  | SendFilesMsg
  | UndoMsg
  | RegenerateMsg
  | BranchMsg
  | EditMsg
  | StopMsg
  | RespondMsg
  | SecretMsg
  | NewSessionMsg
  | SwitchSessionMsg
  | RefreshMsg
  | ExportMsg
  | KernelRevokeMsg
  | SwitchProfileMsg
  | SteerMsg
  | SubagentSteerMsg
  | SubagentStopMsg;
/** Chat: browser -> kernel, questions (each answered once: `Answers`). */
export type ChatQuestion =
  | ListSessionsMsg
  | CommandsRequest
  | CommandMsg
  | ImageRequest
  | ProfilesRequest
  | TurnFilesRequest
  | SubagentControlsRequest;
/** Chat: browser -> kernel. */
export type ViewMsg = ChatCommand | ChatQuestion;
/** Everything the kernel takes on a chat-protocol comm: the view's messages and the `%hermes` loader's question. */
export type ChatChannelMsg = ViewMsg | BundleRequest;
/** A question as a view writes it: the request id is `invoke`'s to add (js/src/invoke.ts). */
export type Asked<Q extends { request: string }> = Q extends unknown ? Omit<Q, "request"> : never;
/** What the chat's parts send: commands, and questions before `invoke` gives them an id. */
export type ChatOutgoing = ChatCommand | Asked<ChatQuestion>;

// ---- the jobs widget's messages ----

export interface JobsRefreshMsg {
  type: "refresh";
}
export interface JobErrorsRequest {
  type: "job_errors";
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
export type JobsViewMsg = JobsRefreshMsg | JobErrorsRequest | CheckScheduleMsg | SaveMsg | ActionMsg | GetPromptMsg | RunsMsg | TranscriptMsg;
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
/** The listed jobs' last errors (jobs with an error only); also sent after every refresh. */
export interface JobErrorsMsg {
  type: "job_errors";
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

/** Each question's answer, by the question's `type` (both widgets). */
export interface Answers {
  list_sessions: SessionsMsg;
  commands: CommandsMsg;
  command: CommandOutputMsg;
  image: ImageMsg;
  profiles: ProfilesMsg;
  turn_files: TurnFilesMsg;
  subagent_controls: SubagentControlsMsg;
  bundle: BundleMsg;
  check_schedule: ScheduleCheckMsg;
  save: SaveResultMsg;
  action: ActionResultMsg;
  get_prompt: PromptMsg;
  runs: RunsResultMsg;
  transcript: TranscriptResultMsg;
}
export type Question = ChatQuestion | JobsQuestion;

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
