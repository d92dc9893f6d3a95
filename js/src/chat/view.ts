// The chat view: header (session title, picker, new session), connection banner, transcript,
// composer. Wires the model (docs/architecture.md, "Widget comm protocol") to the pure reducer in
// state.ts and renders at most once per animation frame.
//
// Stable DOM hooks (for Playwright and user CSS; keep them stable):
//   .hn-chat[data-mode]                       root; mode: chat|turn (turn: conversation + stop only)
//   .hn-header .hn-title                      session title
//   .hn-header .hn-model, .hn-session-usage   the session's model and context gauge (session_header.ts)
//   .hn-slash-menu, .hn-command-output        the composer's / menu and a command's output (slash.ts)
//   select.hn-session-picker                  session picker: opening it sends list_sessions, the kernel answers
//                                             with a `sessions` message (kept here, never in saved state);
//                                             change -> switch_session
//   select.hn-profile-picker                  Hermes profile (profiles.ts): asked once (`profiles`), hidden without
//                                             profiles; change -> switch_profile
//   select.hn-send-mode                       Queue/Steer while a turn runs (composer.ts, steer.ts)
//   button.hn-new-session, button.hn-refresh  new_session, refresh
//   select.hn-export-format, button.hn-export export -> the kernel writes the file, the notice names it
//   .hn-banner[data-status]                   connection (connected|disconnected|reconnecting|reconnected)
//   .hn-notice                                the `notice` traitlet
//   .hn-loading                               shown while `loading` (history / session switch)
//   .hn-messages[.hn-filled]                  the scrolling transcript (hn-filled: at its full height, see scroll.ts)
//   .hn-message[data-message-id][data-role][data-status]
//   .hn-part[data-part-id][data-kind]         kind: reasoning|text|tool|marker (.hn-marker[role=separator])
//   .hn-reasoning (a <details>)               reasoning, collapsed by default
//   .hn-tool[data-status] .hn-tool-name, .hn-tool-status, .hn-tool-duration, .hn-tool-result, .hn-show-all
//   .hn-interaction[data-kind][data-status][data-request-id] button[data-choice]
//        data-status: pending|answered|cancelled|expired, or "sent" (answered here, not yet confirmed)
//   .hn-interaction input.hn-answer + .hn-answer-submit (clarify free text)
//   .hn-interaction input.hn-secret-input[type=password] + .hn-secret-submit (sudo/secret)
//   .hn-code button.hn-copy                   copy button per code block
//   .hn-usage                                 token usage of a message
//   Esc anywhere in .hn-chat while busy      stop (same as .hn-stop)
//   .hn-composer textarea, .hn-send, .hn-stop, .hn-queued, .hn-attach, .hn-composer-error

import { animationFrame, h, setAttr, setText } from "../dom";
import { benchHooks } from "./bench";
import type { Message } from "../types/turns";

import type { Asked } from "../types/widget";

import type { ChatModel, ChatOutgoing, ChatQuestion, CommandOutputMsg, Connection, ImageMsg, ImageRequest, IndexEntry, KernelMsg, SessionInfo, TurnFileEntry, TurnFilesMsg } from "../types/chat";
import { invoke, type KernelRefused, type KernelTimeout, type MessageChannel } from "../invoke";
import { createComposer } from "./composer";
import { createKernelModes } from "./kernel_modes";
import { createProfilePicker } from "./profiles";
import { createSessionHeader } from "./session_header";
import { createCommandOutput } from "./slash";
import { createExportControl } from "./export";
import { createPendingNotifier } from "../notify";
import { createMessageView, type MessageView } from "./message";
import { markLatest, offerUndoWithFiles, setActionsDisabled } from "./actions";
import { reconcile } from "./reconcile";
import { followScroll } from "./scroll";
import { createWireDecoder } from "./wire";
import { hideStaticTwin } from "../twin";
import { createDelivery } from "../delivery";
import {
  awaitSnapshot,
  initialState,
  prependOlder,
  receiveChanges,
  receiveSnapshot,
  staleEntries,
  type SyncState,
} from "./state";

/** How long a slash command may run before the view stops waiting for its output (ms). */
export const COMMAND_TIMEOUT_MS = 120_000;
/** How long a view waits for a media image read through the kernel (ms). */
export const IMAGE_TIMEOUT_MS = 60_000;

/** How long the view waits, after the index changed, before asking for a snapshot for stale messages. */
export const STALE_DEBOUNCE_MS = 150;

/**
 * Messages rendered at first from a long history (the newest ones); scrolling up to the top (or the
 * "Show earlier messages" button) renders this many more. A 10,000-message session paints at once,
 * and its DOM grows only as far as the reader goes back.
 */
export const HISTORY_WINDOW = 60;

export interface ChatViewOptions {
  /** Schedules a render; defaults to requestAnimationFrame (tests pass their own). */
  schedule?: (callback: () => void) => () => void;
  /** Debounce of the stale-index check, in ms (default STALE_DEBOUNCE_MS). */
  staleDelay?: number;
}

export interface ChatView {
  readonly el: HTMLElement;
  /** Render pending state now. */
  flush(): void;
  dispose(): void;
}

/** What the picker shows for a session: its title, else the start of its first prompt; never a stored id. */
export function sessionLabel(s: SessionInfo): string {
  const text = (s.title || s.preview || "").replace(/\s+/g, " ").trim();
  if (text === "") return "New session";
  return text.length <= 60 ? text : `${text.slice(0, 59)}…`;
}

export function createChatView(model: ChatModel, host: HTMLElement, options: ChatViewOptions = {}): ChatView {
  const schedule = options.schedule ?? animationFrame;
  const listeners: [string, (...args: any[]) => void][] = [];
  const listen = (name: string, callback: (...args: any[]) => void): void => {
    model.on(name, callback);
    listeners.push([name, callback]);
  };
  // Every message goes through `delivery`: a note says so when the kernel, busy with a cell, has not taken it.
  const delivery = createDelivery(model);
  // Questions go through `invoke` over the same delivery (a request id, a timeout); commands straight to it.
  const channel: MessageChannel = { on: (n, c) => model.on(n, c), off: (n, c) => model.off(n, c), send: (m) => delivery.send(m as Record<string, unknown>) };
  const asking = new Set<AbortController>(); // questions waiting for their answer (aborted on dispose)
  const send = (message: ChatOutgoing): void => {
    if (message.type === "list_sessions" || message.type === "commands" || message.type === "command" || message.type === "profiles" || message.type === "turn_files" || message.type === "subagent_controls") ask(message);
    else delivery.send({ ...message });
  };

  // ---- DOM ----
  const title = h("span", { class: "hn-title" });
  const picker = h("select", { class: "hn-session-picker", "aria-label": "Session" });
  const newSession = h("button", { type: "button", class: "hn-new-session" }, "New session");
  const refresh = h("button", { type: "button", class: "hn-refresh", "aria-label": "Refresh history" }, "Refresh");
  const exporter = createExportControl(send);
  const sessionHeader = createSessionHeader();
  const kernelModes = createKernelModes(send);
  const profilePicker = createProfilePicker(send);
  const header = h("div", { class: "hn-header" }, title, sessionHeader.el, kernelModes.el, h("span", { class: "hn-spacer" }), profilePicker.el, picker, newSession, refresh, exporter);
  const banner = h("div", { class: "hn-banner", role: "status", "aria-live": "polite" });
  const notice = h("div", { class: "hn-notice", role: "status", "aria-live": "polite" });
  const loading = h("div", { class: "hn-loading", role: "status", hidden: true }, "Loading history…");
  // The transcript isn't a live region (streaming would flood screen readers); `announcer` says
  // when a response starts and ends instead.
  const list = h("div", { class: "hn-messages", tabindex: 0, "aria-label": "Conversation" });
  const earlier = h("button", { type: "button", class: "hn-earlier", hidden: true }, "Show earlier messages");
  list.append(earlier);
  const announcer = h("div", { class: "hn-sr-only", role: "status", "aria-live": "polite" });
  const composer = createComposer(send);
  // The transcript sits in a plain block, not straight in the flex column: a flex item can't be the browser's layout
  // root, so its batches would lay out the notebook around it too (see .hn-filled in scroll.ts).
  const listHost = h("div", { class: "hn-messages-host" }, list);
  const commandOutput = createCommandOutput();
  const root = h("div", { class: "hn-chat" }, header, banner, notice, loading, listHost, announcer, commandOutput.el, delivery.el, composer.el);
  // Esc stops a running turn from anywhere in the widget. Only while busy: otherwise Esc stays with
  // JupyterLab (leaving the cell editor for command mode).
  root.addEventListener("keydown", (event) => {
    if (event.key !== "Escape" || event.isComposing || !model.get("busy")) return;
    event.preventDefault();
    event.stopPropagation();
    send({ type: "stop" });
  });
  host.append(root);
  const bench = benchHooks();
  const benchView = bench === null ? 0 : (bench.views = (bench.views ?? 0) + 1);
  const follower = followScroll(list, { synchronous: bench?.naive === true });
  const notifyPending = createPendingNotifier(root); // a toast when an approval waits off-screen (../notify.ts)
  const twin = hideStaticTwin(root, ".hn-transcript");

  newSession.addEventListener("click", () => send({ type: "new_session" }));
  refresh.addEventListener("click", () => send({ type: "refresh" }));
  picker.addEventListener("change", () => {
    if (picker.value) send({ type: "switch_session", session_id: picker.value });
  });
  // The profiles this Hermes serves: asked when the view opens and when the session changes (a profile switch).
  const listProfiles = (): void => {
    if (model.get("mode") !== "turn") send({ type: "profiles" });
    if (model.get("mode") !== "turn") send({ type: "subagent_controls" }); // which subagent buttons work here
  };
  // The list of other sessions is not synced state (a saved notebook would keep every title): ask when it opens.
  let sessions: SessionInfo[] = [];
  let listing: number | null = null; // when the unanswered request went (a click focuses and presses: one request)
  const listSessions = (): void => {
    if (model.get("mode") === "turn" || (listing !== null && Date.now() - listing < 5000)) return;
    listing = Date.now();
    send({ type: "list_sessions" });
  };
  picker.addEventListener("focus", listSessions);
  picker.addEventListener("pointerdown", listSessions);
  const showSessions = (list: SessionInfo[]): void => {
    sessions = Array.isArray(list) ? list : [];
    listing = null;
    showSession();
  };
  const showOutput = (msg: CommandOutputMsg): void => {
    commandOutput.show(msg.command, msg.output, msg.warning);
    if (msg.prefill) composer.prefill(msg.prefill);
  };
  // Questions go through `invoke`: a request id, and a timeout after which the view stops waiting.
  const ask = (question: Asked<Exclude<ChatQuestion, ImageRequest>>): void => {
    const settle = (controller: AbortController): void => void asking.delete(controller);
    let controller: AbortController;
    const unanswered = (error: KernelTimeout | KernelRefused): void => {
      settle(controller);
      if (question.type === "list_sessions") listing = null;
      else if (question.type === "commands") composer.setCommands([]);
      else if (question.type === "profiles") profilePicker.hide();
      else if (question.type === "turn_files") return; // not offered here (0.19.0) or not now: nothing to show
      else if (question.type === "subagent_controls") return; // no subagent controls here: none shown
      else commandOutput.show(question.line, `No output: ${error.message}.`, "");
    };
    if (question.type === "list_sessions") {
      controller = invoke<ChatQuestion & { type: "list_sessions" }>(channel, question, {
        answer: (msg) => (settle(controller), showSessions(msg.sessions)), failed: unanswered });
    } else if (question.type === "commands") {
      controller = invoke<ChatQuestion & { type: "commands" }>(channel, question, {
        answer: (msg) => (settle(controller), composer.setCommands(Array.isArray(msg.commands) ? msg.commands : [])),
        failed: unanswered });
    } else if (question.type === "profiles") {
      controller = invoke<ChatQuestion & { type: "profiles" }>(channel, question, {
        answer: (msg) => (settle(controller), profilePicker.show(msg)), failed: unanswered });
    } else if (question.type === "subagent_controls") {
      controller = invoke<ChatQuestion & { type: "subagent_controls" }>(channel, question, {
        answer: (msg) => {
          settle(controller);
          setAttr(root, "data-subagent-steer", msg.steer === true ? "true" : null);
          setAttr(root, "data-subagent-stop", msg.stop === true ? "true" : null);
        }, failed: unanswered });
    } else if (question.type === "turn_files") {
      controller = invoke<ChatQuestion & { type: "turn_files" }>(channel, question, {
        answer: (msg) => (settle(controller), showTurnFiles(msg)), failed: unanswered });
    } else {
      controller = invoke<ChatQuestion & { type: "command" }>(channel, question, {
        answer: (msg) => (settle(controller), showOutput(msg)), failed: unanswered }, { timeout: COMMAND_TIMEOUT_MS });
    }
    asking.add(controller);
  };

  // ---- state ----
  // Content comes only from `changes` and `snapshot` messages; index entries (what exists, settled, at
  // which rev) ride in them: a snapshot implies every entry, a batch carries those of messages it settled.
  let state: SyncState = initialState();
  const views = new Map<string, { view: MessageView; item: Message }>();
  // A part's image from the kernel (images.ts): a question per media image, answered with its base64.
  const image = (question: Asked<ImageRequest>): Promise<ImageMsg> => new Promise((resolve, reject) => {
    const controller = invoke<ImageRequest>(channel, question, {
      answer: (msg) => (asking.delete(controller), resolve(msg)),
      failed: (error) => (asking.delete(controller), reject(error)) }, { timeout: IMAGE_TIMEOUT_MS });
    asking.add(controller);
  });
  // Undo with files (actions.ts): the files each last reply's turn changed, asked once per reply when it settles.
  const turnFiles = new Map<string, readonly TurnFileEntry[]>();
  const askedFiles = new Set<string>();
  const askTurnFiles = (): void => {
    if (model.get("mode") === "turn" || model.get("busy")) return;
    const last = [...state.messages].reverse().find((m) => m.role === "assistant");
    if (!last || last.status !== "complete" || askedFiles.has(last.id)) return;
    askedFiles.add(last.id);
    send({ type: "turn_files", message_id: last.id });
  };
  const showTurnFiles = (msg: TurnFilesMsg): void => {
    setAttr(root, "data-checkpoints", msg.checkpoints === true ? "true" : null); // Branch with files (actions.ts)
    const files = Array.isArray(msg.files) ? msg.files.filter((f) => f && typeof f.path === "string") : [];
    if (files.length === 0) return;
    turnFiles.set(msg.message_id, files);
    for (const el of list.querySelectorAll<HTMLElement>(".hn-message")) {
      const group = el.dataset.messageId === msg.message_id ? el.querySelector<HTMLElement>(".hn-msg-actions") : null;
      if (group) offerUndoWithFiles(group, msg.message_id, files, ctx);
    }
  };
  const ctx = { send, answered: new Set<string>(), busy: () => Boolean(model.get("busy")), image, turnFiles };
  let cancelFrame: (() => void) | null = null;
  let wasStreaming = false;

  // The rendered window: messages from `windowStart` (an id, so appends and snapshots keep it) on.
  let windowStart: string | null = null;
  // Messages the kernel holds before the first one here: a long conversation's snapshot brings only its newest
  // messages; older ones come a page at a time when the reader scrolls up to the oldest one held.
  let older = 0;
  let wantEarlier = false;
  let olderInFlight = false;
  const requestOlder = (): void => {
    const first = state.messages[0];
    if (olderInFlight || state.seq === null || first === undefined) return;
    olderInFlight = true;
    send({ type: "older", before: first.id });
  };
  const visibleMessages = (): readonly Message[] => {
    const all = state.messages;
    let start = windowStart === null ? -1 : all.findIndex((m) => m.id === windowStart);
    if (start < 0) start = Math.max(0, all.length - HISTORY_WINDOW);
    windowStart = all[start]?.id ?? null;
    const hidden = start === 0 && older === 0;
    if (earlier.hidden !== hidden) earlier.hidden = hidden; // an unchanged write still restyles
    return start === 0 ? all : all.slice(start);
  };
  const showEarlier = (): void => {
    const at = windowStart === null ? -1 : state.messages.findIndex((m) => m.id === windowStart);
    if (older > 0 && at - HISTORY_WINDOW < 0) {
      // The next slice reaches past the oldest message held: ask for the page before it now, and show the
      // slice before the first one shown once it is here.
      wantEarlier = true;
      requestOlder();
    }
    if (at <= 0) return;
    windowStart = state.messages[Math.max(0, at - HISTORY_WINDOW)]!.id;
    invalidate();
  };
  earlier.addEventListener("click", showEarlier);
  // Reaching the top renders the next older slice; the browser's scroll anchoring keeps the reader's place.
  const topObserver =
    typeof IntersectionObserver === "function"
      ? new IntersectionObserver((entries) => entries.some((e) => e.isIntersecting) && showEarlier(), {
          root: list,
          rootMargin: "600px 0px 0px 0px",
        })
      : null;
  topObserver?.observe(earlier);

  const flush = (): void => {
    cancelFrame?.();
    cancelFrame = null;
    const started = bench?.samples ? performance.now() : 0;
    if (bench?.samples) performance.mark("hn-batch"); // finds this frame in a trace (CPU time)
    reconcile(list, visibleMessages(), views, (message) => createMessageView(message, ctx), earlier);
    markLatest(list, state.messages);
    askTurnFiles();
    notifyPending(state.messages);
    const streaming = state.messages.some((m) => m.status === "streaming");
    if (streaming !== wasStreaming) {
      announcer.textContent = streaming ? "Hermes is responding" : "Hermes finished responding";
      wasStreaming = streaming;
    }
    follower.afterUpdate(list.lastElementChild);
    if (bench?.samples) {
      const script = performance.now() - started;
      void list.offsetHeight; // measuring only: style and layout now, so they count for this batch
      const ms = performance.now() - started;
      bench.samples.push({ ms, script, chars: newestTextLength(state.messages), view: benchView });
    }
  };
  const invalidate = (): void => {
    cancelFrame ??= schedule(flush);
  };
  // At most one snapshot request in flight: any snapshot answer (ours, another view's, or a reset's)
  // settles it, since the kernel sends every custom message to every view.
  let inFlight = false;
  const requestSnapshot = (): void => {
    if (inFlight) return;
    inFlight = true;
    state = awaitSnapshot(state);
    send({ type: "snapshot" });
  };

  // Stale check: settled messages in the index that this view lacks or holds at another rev. The
  // kernel updates the index only after the batch with the boundary went out, so a mismatch is
  // normally real; the debounce lets a burst of index updates (and any straggling batch) settle
  // first. Each (message, rev) is asked for once: if a snapshot can't fix it, asking again won't.
  const staleDelay = options.staleDelay ?? STALE_DEBOUNCE_MS;
  const askedFor = new Map<string, number>();
  const index = new Map<string, IndexEntry>();
  let askedForSeq = 0;
  let staleTimer: ReturnType<typeof setTimeout> | null = null;
  const checkStale = (): void => {
    staleTimer = null;
    if (inFlight) return; // checked again when the answer lands
    // A batch that carried index entries never arrived (custom messages are not replayed).
    const settledSeq = model.get("settled_seq") ?? 0;
    const behind = state.seq !== null && settledSeq > state.seq && askedForSeq !== settledSeq;
    const stale = staleEntries(state, [...index.values()]).filter((e) => askedFor.get(e.id) !== e.rev);
    if (stale.length === 0 && !behind) return;
    for (const entry of stale) askedFor.set(entry.id, entry.rev);
    if (behind) askedForSeq = settledSeq;
    requestSnapshot();
  };
  const receiveIndex = (entries: readonly IndexEntry[] | undefined): void => {
    if (!Array.isArray(entries) || entries.length === 0) return;
    for (const entry of entries) index.set(entry.id, entry);
    scheduleStaleCheck();
  };
  const scheduleStaleCheck = (): void => {
    staleTimer ??= setTimeout(checkStale, staleDelay);
  };

  const wire = createWireDecoder();
  // Replies that show the kernel handled a message (where the front end reports no kernel status for it).
  const acknowledge = (msg: KernelMsg | null): void => {
    if (msg?.type === "changes") {
      for (const change of msg.changes) {
        if (change.op !== "message" || change.message.role !== "user") continue;
        const text = change.message.parts[0]?.text ?? "";
        delivery.answered("send", (sent) => sent.text === text);
        delivery.answered("send_files", (sent) => typeof sent.text === "string" && text.startsWith(sent.text));
      }
    } else if (msg?.type === "snapshot") {
      if (msg.reset !== true) delivery.answered("snapshot"); // a reset's snapshot answers no request
    } else if (msg?.type === "older") {
      delivery.answered("older");
    } else if (msg?.type === "sessions") {
      delivery.answered("list_sessions");
    } else if (msg?.type === "commands") {
      delivery.answered("commands");
    } else if (msg?.type === "command_output") {
      delivery.answered("command");
    }
  };
  listen("msg:custom", (received: KernelMsg) => {
    let msg: KernelMsg | null = received;
    if (msg?.type === "more") {
      msg = wire.expand(msg);
      if (msg === null) {
        // Its part was named in a batch this view never got: rebuild from a snapshot (unless one is due anyway).
        if (state.seq !== null) requestSnapshot();
        return;
      }
    }
    if (msg != null && typeof msg === "object") wire.seen(msg);
    acknowledge(msg);
    if (msg?.type === "changes") {
      // Batches go to every view with consecutive seqs: a gap means one was lost.
      const gap = state.seq !== null && msg.seq > state.seq + 1;
      state = receiveChanges(state, { seq: msg.seq, changes: msg.changes });
      // A change about a message we don't have means we missed something: resync.
      if ((state.missed > 0 || gap) && state.seq !== null) requestSnapshot();
      receiveIndex(msg.index);
    } else if (msg?.type === "index") {
      receiveIndex(msg.index);
      return;
    } else if (msg?.type === "snapshot") {
      // Another view's first answer, only the newest messages: this view, not waiting, holds them already.
      if (msg.partial === true && msg.reset !== true && !inFlight && state.seq !== null) return;
      inFlight = false;
      state = receiveSnapshot(state, msg.seq, msg.messages, msg.revs);
      older = msg.partial === true && typeof msg.older === "number" ? Math.max(0, msg.older) : 0;
      if (msg.reset === true) wantEarlier = false; // another conversation: the reader starts at its end
      index.clear();
      for (const m of msg.messages) {
        const { id, role, status, usage, error } = m;
        index.set(id, { id, role, status, usage, error, rev: msg.revs?.[id] ?? state.revs.get(id) ?? 0 });
      }
      // Only a view that got content from a kernel replaces the static transcript.
      root.dataset.live = "true";
      twin.activate();
      scheduleStaleCheck();
      if (wantEarlier && older > 0) requestOlder();
      else if (wantEarlier) {
        wantEarlier = false;
        showEarlier();
      }
    } else if (msg?.type === "sessions" || msg?.type === "commands" || msg?.type === "command_output") {
      if (msg.request !== undefined) return; // an answer: the question's own handler shows it
      if (msg.type === "sessions") showSessions(msg.sessions); // a re-list the kernel pushes after a turn
      else if (msg.type === "commands") composer.setCommands(Array.isArray(msg.commands) ? msg.commands : []);
      else showOutput(msg);
      return;
    } else if (msg?.type === "error") {
      return;
    } else if (msg?.type === "older") {
      olderInFlight = false;
      const next = prependOlder(state, msg.seq, msg.before, msg.messages, msg.revs);
      // A page that no longer fits is dropped; a resync's snapshot (or the reader's next scroll) asks again.
      if (next === null) return;
      state = next;
      older = Math.max(0, msg.older);
      for (const m of msg.messages) {
        const { id, role, status, usage, error } = m;
        index.set(id, { id, role, status, usage, error, rev: msg.revs[id] ?? 0 });
      }
      if (wantEarlier) {
        wantEarlier = false;
        showEarlier();
      }
    } else {
      return;
    }
    invalidate();
  });
  listen("change:settled_seq", scheduleStaleCheck);

  const showSession = (): void => {
    const session = model.get("session");
    setText(title, session?.title || (session ? "Untitled session" : "Hermes"));
    const all: SessionInfo[] = session && !sessions.some((s) => s.id === session.id) ? [session, ...sessions] : sessions;
    picker.replaceChildren(
      ...all.map((s) => h("option", { value: s.id, selected: s.id === session?.id, title: s.id }, sessionLabel(s))),
    );
    if (all.length === 0) picker.append(h("option", { value: "" }, "No sessions"));
    picker.value = session?.id ?? "";
    picker.disabled = all.length === 0;
  };
  listen("change:session", showSession);
  listen("change:session", listProfiles); // after a profile switch (or a refused one)

  const showSessionInfo = (): void => {
    sessionHeader.showModel(model.get("model"));
    sessionHeader.showContext(model.get("context_usage"));
  };
  listen("change:model", showSessionInfo);
  listen("change:context_usage", showSessionInfo);
  const showKernelModes = (): void => kernelModes.show(model.get("kernel_modes"));
  listen("change:kernel_modes", showKernelModes);

  const banners = createBanner(banner);
  const showConnection = (): void => banners.show(model.get("connection"));
  listen("change:connection", showConnection);

  const showNotice = (): void => {
    const text = model.get("notice") ?? "";
    setText(notice, text);
    notice.hidden = text === "";
  };
  listen("change:notice", showNotice);

  const showMode = (): void => {
    setAttr(root, "data-mode", model.get("mode") === "turn" ? "turn" : "chat");
  };
  listen("change:mode", showMode);
  const showLoading = (): void => {
    loading.hidden = !model.get("loading");
  };
  listen("change:loading", showLoading);

  const showBusy = (): void => {
    composer.setBusy(Boolean(model.get("busy")));
    setActionsDisabled(list, Boolean(model.get("busy")));
    askTurnFiles();
    composer.setQueued(model.get("queued") ?? 0);
  };
  listen("change:busy", showBusy);
  listen("change:queued", showBusy);

  showMode();
  showLoading();
  showSession();
  showSessionInfo();
  showKernelModes();
  showConnection();
  showNotice();
  showBusy();
  flush();
  // Custom messages sent before this view existed are lost, so rebuild from a snapshot.
  requestSnapshot();
  listSessions(); // so the picker lists the sessions before anyone opens it
  listProfiles(); // the profile picker shows only where this Hermes lists more than one

  return {
    el: root,
    flush,
    dispose() {
      for (const controller of asking) controller.abort();
      asking.clear();
      for (const [name, callback] of listeners) model.off(name, callback);
      listeners.length = 0;
      cancelFrame?.();
      cancelFrame = null;
      if (staleTimer !== null) clearTimeout(staleTimer);
      staleTimer = null;
      banners.dispose();
      follower.dispose();
      topObserver?.disconnect();
      twin.dispose();
      delivery.dispose();
      root.remove();
    },
  };
}

/** Characters of text in the newest message (what the benchmark plots per-batch cost against). */
function newestTextLength(messages: readonly Message[]): number {
  const last = messages[messages.length - 1];
  return last === undefined ? 0 : last.parts.reduce((n, p) => n + (p.text?.length ?? 0), 0);
}

/** The connection banner, with a live countdown while reconnecting. */
function createBanner(el: HTMLElement): { show(connection: Connection | null): void; dispose(): void } {
  let timer: ReturnType<typeof setInterval> | null = null;
  const stop = (): void => {
    if (timer !== null) clearInterval(timer);
    timer = null;
  };
  const show = (connection: Connection | null): void => {
    stop();
    const status = connection?.status ?? "connected";
    setAttr(el, "data-status", status);
    const detail = connection?.message ? ` ${connection.message}` : "";
    if (status === "reconnecting") {
      const until = Date.now() + (connection?.retry_in ?? 0) * 1000;
      const tick = (): void => {
        const left = Math.max(0, Math.ceil((until - Date.now()) / 1000));
        setText(el, left > 0 ? `Connection lost. Reconnecting in ${left} s…${detail}` : `Reconnecting…${detail}`);
        if (left === 0) stop();
      };
      tick();
      if (timer === null && (connection?.retry_in ?? 0) > 0) timer = setInterval(tick, 1000);
    } else if (status === "disconnected") {
      setText(el, `Disconnected from Hermes.${detail}`);
    } else if (status === "reconnected") {
      setText(el, `Reconnected.${detail}`);
    } else {
      setText(el, detail.trim());
    }
    el.hidden = status === "connected" && detail === "";
  };
  return { show, dispose: stop };
}
