// The chat view: header (session title, picker, new session), connection banner, transcript, composer. It places
// components that each own their state and wires them to the model (docs/architecture.md, "Widget comm protocol"):
// the messenger (../messenger.ts: commands, questions, the busy note), the conversation sync (sync.ts: the state,
// the snapshot and older-page requests, the stale index), the transcript (transcript.ts: the history window and the
// rendering, at most once per animation frame), the header (header.ts: the session picker, profiles, modes), the
// slash commands (commands.ts), the files each turn changed (turn_files.ts) and the banner (banner.ts).
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
//   .hn-messages                              the transcript (it grows: the notebook scrolls, see scroll.ts)
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

import { h, setAttr, setText } from "../dom";
import { createMessenger } from "../messenger";
import { hideStaticTwin } from "../twin";
import type { BranchFilesRequest, ChatModel, ChatOutgoing, TurnFileEntry } from "../types/chat";
import { createBanner } from "./banner";
import { createCommands } from "./commands";
import { createComposer } from "./composer";
import { createChatHeader } from "./header";
import { imageAsker } from "./images";
import { askServerOffers } from "./server_offers";
import { createConversationSync } from "./sync";
import { createTranscript } from "./transcript";
import { createTurnFiles } from "./turn_files";

export { HISTORY_WINDOW } from "./history_window";
export { sessionLabel } from "./session_picker";

export interface ChatViewOptions {
  /** Schedules a render; defaults to requestAnimationFrame (tests pass their own). */
  schedule?: (callback: () => void) => () => void;
  /** Debounce of the stale-index check, in ms (default STALE_DEBOUNCE_MS, stale_index.ts). */
  staleDelay?: number;
}

export interface ChatView {
  readonly el: HTMLElement;
  /** Render pending state now. */
  flush(): void;
  dispose(): void;
}

export function createChatView(model: ChatModel, host: HTMLElement, options: ChatViewOptions = {}): ChatView {
  const messenger = createMessenger(model);
  // What the parts send: commands go as they are; the composer's questions go to the slash commands, which show
  // their answers.
  const send = (message: ChatOutgoing): void => {
    if (message.type === "commands" || message.type === "command") commands.ask(message);
    else messenger.command({ ...message });
  };

  const header = createChatHeader(model, messenger, send);
  const banner = createBanner(model, messenger);
  const notice = h("div", { class: "hn-notice", role: "status", "aria-live": "polite" });
  const loading = h("div", { class: "hn-loading", role: "status", hidden: true }, "Loading history…");
  const composer = createComposer(send);
  const commands = createCommands(messenger, composer);
  const root = h("div", { class: "hn-chat" });
  const turnFiles = createTurnFiles(model, messenger, { root, offer: (id, files) => transcript.offerUndoWithFiles(id, files) });
  const busy = (): boolean => Boolean(model.get("busy"));
  const branchFiles = (id: string, files: (files: readonly TurnFileEntry[]) => void, refused: (why: string) => void): void => {
    messenger.ask<BranchFilesRequest>({ type: "branch_files", message_id: id }, {
      answer: (msg) => files(msg.files),
      failed: (error) => refused(error.message),
    });
  };
  const context = { send, answered: new Set<string>(), busy, image: imageAsker(messenger), turnFiles: turnFiles.files, branchFiles };
  const transcript = createTranscript({
    root,
    messages: () => sync.state.messages,
    askOlder: () => sync.askOlder(),
    context,
    rendered: (messages) => turnFiles.askFor(messages),
    composer: composer.el,
    ...(options.schedule ? { schedule: options.schedule } : {}),
  });
  const twin = hideStaticTwin(root, ".hn-transcript");
  const sync = createConversationSync(model, messenger, {
    window: transcript.window,
    changed: transcript.invalidate,
    // Only a view that got content from a kernel replaces the static transcript.
    live: () => {
      root.dataset.live = "true";
      twin.activate();
    },
    ...(options.staleDelay !== undefined ? { staleDelay: options.staleDelay } : {}),
  });
  root.append(header.el, banner.el, notice, loading, transcript.el, transcript.announcer, commands.el, messenger.note, composer.el);
  // Esc stops a running turn from anywhere in the widget. Only while busy: otherwise Esc stays with
  // JupyterLab (leaving the cell editor for command mode).
  root.addEventListener("keydown", (event) => {
    if (event.key !== "Escape" || event.isComposing || !busy()) return;
    event.preventDefault();
    event.stopPropagation();
    send({ type: "stop" });
  });
  host.append(root);

  const showNotice = (): void => {
    const text = model.get("notice") ?? "";
    setText(notice, text);
    notice.hidden = text === "";
  };
  const showMode = (): void => setAttr(root, "data-mode", model.get("mode") === "turn" ? "turn" : "chat");
  const showLoading = (): void => void (loading.hidden = !model.get("loading"));
  const showBusy = (): void => {
    composer.setBusy(busy());
    transcript.setBusy(busy());
    turnFiles.askFor(sync.state.messages);
    composer.setQueued(model.get("queued") ?? 0);
  };
  messenger.listen("change:notice", showNotice);
  messenger.listen("change:mode", showMode);
  messenger.listen("change:loading", showLoading);
  messenger.listen("change:busy", showBusy);
  messenger.listen("change:queued", showBusy);
  showMode();
  showLoading();
  showNotice();
  showBusy();
  transcript.flush();
  // Custom messages sent before this view existed are lost, so rebuild from a snapshot.
  sync.requestSnapshot();
  header.sessions.list(); // so the picker lists the sessions before anyone opens it
  askServerOffers(model, messenger, root, header.profiles); // the profile picker shows only where there are some

  return {
    el: root,
    flush: transcript.flush,
    dispose() {
      messenger.dispose();
      transcript.dispose();
      sync.dispose();
      banner.dispose();
      twin.dispose();
      root.remove();
    },
  };
}
