// The chat widget's shapes (hermes_notebook/widgets/chat.py and the %hermes live view): its synced traitlets and
// its custom messages both ways ("Widget comm protocol" in docs/architecture.md). Mirrored name for name in
// hermes_notebook/widgets/messages.py (kernel -> browser) and the tables of hermes_notebook/widgets/inbound.py
// (browser -> kernel); tests/test_contract.py compares them field by field.

import type { Asked, AnyModel, ErrorMsg } from "./widget";
import type { Message, MessageStatus, Usage, WireChange } from "./turns";

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
  /** the path of the notebook the cell tools act on (the page the kernel's requests go to) */
  notebook?: string | null;
}

export type ChatModel = AnyModel<ChatState>;

// ---- custom messages ----

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

/** The files a branch with files at `message_id` would put back, answering `branch_files` (listed first). */
export interface BranchFilesMsg {
  type: "branch_files";
  request?: string;
  message_id: string;
  files: TurnFileEntry[];
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
  | BranchFilesMsg
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
/** Which files a branch with files at `message_id` would put back: answered by a `BranchFilesMsg`. */
export interface BranchFilesRequest {
  type: "branch_files";
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
/** A run_code part's Undo variables (chat/run_undo.ts): undo that approved run's variables. */
export interface UndoRunMsg {
  type: "undo_run";
  run: number;
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
  | UndoRunMsg
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
  | BranchFilesRequest
  | SubagentControlsRequest;
/** Chat: browser -> kernel. */
export type ViewMsg = ChatCommand | ChatQuestion;
/** Everything the kernel takes on a chat-protocol comm: the view's messages and the `%hermes` loader's question. */
export type ChatChannelMsg = ViewMsg | BundleRequest;
/** What the chat's parts send: commands, and the composer's questions (the `/` menu's catalog, a command's output)
 *  before `invoke` gives them an id; the view's own components ask the other questions. */
export type ChatOutgoing = ChatCommand | Asked<CommandsRequest | CommandMsg>;
