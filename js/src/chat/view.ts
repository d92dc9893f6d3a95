// The chat view: header (session title, picker, new session), connection banner, transcript,
// composer. Wires the model (docs/architecture.md, "Widget comm protocol") to the pure reducer in
// state.ts and renders at most once per animation frame.
//
// Stable DOM hooks (for Playwright and user CSS; keep them stable):
//   .hn-chat[data-mode]                       root; mode: chat|turn (turn: conversation + stop only)
//   .hn-header .hn-title                      session title
//   select.hn-session-picker                  session picker (`sessions`); change -> switch_session
//   button.hn-new-session, button.hn-refresh  new_session, refresh
//   select.hn-export-format, button.hn-export export -> the kernel writes the file, the notice names it
//   .hn-banner[data-status]                   connection (connected|disconnected|reconnecting|reconnected)
//   .hn-notice                                the `notice` traitlet
//   .hn-loading                               shown while `loading` (history / session switch)
//   .hn-messages                              the scrolling transcript
//   .hn-message[data-message-id][data-role][data-status]
//   .hn-part[data-part-id][data-kind]         kind: reasoning|text|tool
//   .hn-reasoning (a <details>)               reasoning, collapsed by default
//   .hn-tool[data-status] .hn-tool-name, .hn-tool-status, .hn-tool-duration, .hn-tool-result, .hn-show-all
//   .hn-interaction[data-kind][data-status][data-request-id] button[data-choice]
//        data-status: pending|answered|cancelled|expired, or "sent" (answered here, not yet confirmed)
//   .hn-interaction input.hn-answer + .hn-answer-submit (clarify free text)
//   .hn-interaction input.hn-secret-input[type=password] + .hn-secret-submit (sudo/secret)
//   .hn-code button.hn-copy                   copy button per code block
//   .hn-usage                                 token usage of a message
//   .hn-composer textarea, .hn-send, .hn-stop, .hn-queued, .hn-attach, .hn-composer-error

import { h, setAttr, setText } from "../dom";
import type { ChatModel, Connection, KernelMsg, Message, SessionInfo, ViewMsg } from "../types";
import { createComposer } from "./composer";
import { createExportControl } from "./export";
import { createPendingNotifier } from "../notify";
import { createMessageView, type MessageView } from "./message";
import { reconcile } from "./reconcile";
import { followScroll } from "./scroll";
import { awaitSnapshot, initialState, receiveChanges, receiveSnapshot, staleEntries, type SyncState } from "./state";

/** How long the view waits, after the index changed, before asking for a snapshot for stale messages. */
export const STALE_DEBOUNCE_MS = 150;

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

function animationFrame(callback: () => void): () => void {
  if (typeof requestAnimationFrame === "function") {
    const id = requestAnimationFrame(callback);
    return () => cancelAnimationFrame(id);
  }
  const id = setTimeout(callback, 16);
  return () => clearTimeout(id);
}

export function createChatView(model: ChatModel, host: HTMLElement, options: ChatViewOptions = {}): ChatView {
  const schedule = options.schedule ?? animationFrame;
  const listeners: [string, (...args: any[]) => void][] = [];
  const listen = (name: string, callback: (...args: any[]) => void): void => {
    model.on(name, callback);
    listeners.push([name, callback]);
  };
  const send = (message: ViewMsg): void => model.send(message);

  // ---- DOM ----
  const title = h("span", { class: "hn-title" });
  const picker = h("select", { class: "hn-session-picker", "aria-label": "Session" });
  const newSession = h("button", { type: "button", class: "hn-new-session" }, "New session");
  const refresh = h("button", { type: "button", class: "hn-refresh", "aria-label": "Refresh history" }, "Refresh");
  const exporter = createExportControl(send);
  const header = h("div", { class: "hn-header" }, title, h("span", { class: "hn-spacer" }), picker, newSession, refresh, exporter);
  const banner = h("div", { class: "hn-banner", role: "status", "aria-live": "polite" });
  const notice = h("div", { class: "hn-notice", role: "status", "aria-live": "polite" });
  const loading = h("div", { class: "hn-loading", role: "status", hidden: true }, "Loading history…");
  // The transcript isn't a live region (streaming would flood screen readers); `announcer` says
  // when a response starts and ends instead.
  const list = h("div", { class: "hn-messages", tabindex: 0, "aria-label": "Conversation" });
  const announcer = h("div", { class: "hn-sr-only", role: "status", "aria-live": "polite" });
  const composer = createComposer(send);
  const root = h("div", { class: "hn-chat" }, header, banner, notice, loading, list, announcer, composer.el);
  host.append(root);
  const follower = followScroll(list);
  const notifyPending = createPendingNotifier(root); // a toast when an approval waits off-screen (../notify.ts)

  newSession.addEventListener("click", () => send({ type: "new_session" }));
  refresh.addEventListener("click", () => send({ type: "refresh" }));
  picker.addEventListener("change", () => {
    if (picker.value) send({ type: "switch_session", session_id: picker.value });
  });

  // ---- state ----
  // Content comes only from `changes` and `snapshot` messages; the `index` traitlet says what exists.
  let state: SyncState = initialState();
  const views = new Map<string, { view: MessageView; item: Message }>();
  const ctx = { send, answered: new Set<string>() };
  let cancelFrame: (() => void) | null = null;
  let wasStreaming = false;

  const flush = (): void => {
    cancelFrame?.();
    cancelFrame = null;
    reconcile(list, state.messages, views, (message) => createMessageView(message, ctx));
    notifyPending(state.messages);
    const streaming = state.messages.some((m) => m.status === "streaming");
    if (streaming !== wasStreaming) {
      announcer.textContent = streaming ? "Hermes is responding" : "Hermes finished responding";
      wasStreaming = streaming;
    }
    follower.afterUpdate();
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
  let staleTimer: ReturnType<typeof setTimeout> | null = null;
  const checkStale = (): void => {
    staleTimer = null;
    if (inFlight) return; // checked again when the answer lands
    const stale = staleEntries(state, model.get("index") ?? []).filter((e) => askedFor.get(e.id) !== e.rev);
    if (stale.length === 0) return;
    for (const entry of stale) askedFor.set(entry.id, entry.rev);
    requestSnapshot();
  };
  const scheduleStaleCheck = (): void => {
    staleTimer ??= setTimeout(checkStale, staleDelay);
  };

  listen("msg:custom", (msg: KernelMsg) => {
    if (msg?.type === "changes") {
      state = receiveChanges(state, { seq: msg.seq, changes: msg.changes });
      // A change about a message we don't have means we missed something: resync.
      if (state.missed > 0 && state.seq !== null) requestSnapshot();
    } else if (msg?.type === "snapshot") {
      inFlight = false;
      state = receiveSnapshot(state, msg.seq, msg.messages, msg.revs);
      // Only a view that got content from a kernel replaces the static transcript (see chat.css).
      root.dataset.live = "true";
      scheduleStaleCheck();
    } else {
      return;
    }
    invalidate();
  });
  listen("change:index", scheduleStaleCheck);

  const showSession = (): void => {
    const session = model.get("session");
    const sessions = model.get("sessions") ?? [];
    setText(title, session?.title || (session ? "Untitled session" : "Hermes"));
    const all: SessionInfo[] = session && !sessions.some((s) => s.id === session.id) ? [session, ...sessions] : sessions;
    picker.replaceChildren(
      ...all.map((s) => h("option", { value: s.id, selected: s.id === session?.id }, s.title || s.id)),
    );
    if (all.length === 0) picker.append(h("option", { value: "" }, "No sessions"));
    picker.value = session?.id ?? "";
    picker.disabled = all.length === 0;
  };
  listen("change:session", showSession);
  listen("change:sessions", showSession);

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
    composer.setQueued(model.get("queued") ?? 0);
  };
  listen("change:busy", showBusy);
  listen("change:queued", showBusy);

  showMode();
  showLoading();
  showSession();
  showConnection();
  showNotice();
  showBusy();
  flush();
  // Custom messages sent before this view existed are lost, so rebuild from a snapshot.
  requestSnapshot();

  return {
    el: root,
    flush,
    dispose() {
      for (const [name, callback] of listeners) model.off(name, callback);
      listeners.length = 0;
      cancelFrame?.();
      cancelFrame = null;
      if (staleTimer !== null) clearTimeout(staleTimer);
      staleTimer = null;
      banners.dispose();
      follower.dispose();
      root.remove();
    },
  };
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
