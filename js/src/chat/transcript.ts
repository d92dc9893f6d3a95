// The conversation on screen: the list of messages (the history window's slice of them), rendered at most
// once per animation frame. Each message keeps a stable view (message.ts) patched in place (reconcile.ts), the
// newest reply and prompt are marked for their buttons (actions.ts), a toast says when an approval waits off-screen
// (../notify.ts), the scroll follows the end while the reader is there (scroll.ts), and a screen reader hears when
// a response starts and ends (the list itself is no live region: streaming would flood it). Owns: the list and its
// message views, the pending frame, the announcer's last word, the benchmark's samples.

import { animationFrame, h } from "../dom";
import { createPendingNotifier } from "../notify";
import type { Message } from "../types/turns";
import { markLatest, offerUndoWithFiles, setActionsDisabled } from "./actions";
import type { TurnFileEntry } from "../types/chat";
import { benchHooks } from "./bench";
import { createHistoryWindow, type HistoryWindow } from "./history_window";
import type { InteractionContext } from "./interactions";
import type { ActionContext } from "./actions";
import { createMessageView, type MessageView } from "./message";
import { reconcile } from "./reconcile";
import { followScroll } from "./scroll";

export interface Transcript {
  /** The list's host (a plain block around the list). */
  readonly el: HTMLElement;
  /** The list of messages (.hn-messages): it grows with the conversation, the notebook scrolls (scroll.ts). */
  readonly list: HTMLElement;
  /** Says when a response starts and ends (role=status). */
  readonly announcer: HTMLElement;
  readonly window: HistoryWindow;
  /** Render at the next frame (once, however often asked). */
  invalidate(): void;
  /** Render pending state now. */
  flush(): void;
  /** A turn started or ended: the message buttons follow. */
  setBusy(busy: boolean): void;
  /** Offer Undo with files on that reply's view, if it is shown (views made later read `context.turnFiles`). */
  offerUndoWithFiles(messageId: string, files: readonly TurnFileEntry[]): void;
  dispose(): void;
}

export interface TranscriptOptions {
  /** The chat's root (the off-screen approval toast watches it). */
  root: HTMLElement;
  /** Every message the view holds, oldest first. */
  messages(): readonly Message[];
  /** Ask the kernel for the page before the oldest message held. */
  askOlder(): void;
  /** What message views need: sending, answering cards, images, the files each turn changed. */
  context: InteractionContext & ActionContext;
  /** After each render (the newest reply may have settled). */
  rendered(messages: readonly Message[]): void;
  /** Schedules a render; defaults to requestAnimationFrame (tests pass their own). */
  schedule?: (callback: () => void) => () => void;
  /** The composer below the list: the chat's end, which the scroll follows (none shown: nothing follows). */
  composer?: HTMLElement;
}

export function createTranscript(options: TranscriptOptions): Transcript {
  const schedule = options.schedule ?? animationFrame;
  const list = h("div", { class: "hn-messages", tabindex: 0, "aria-label": "Conversation" });
  const el = h("div", { class: "hn-messages-host" }, list);
  const announcer = h("div", { class: "hn-sr-only", role: "status", "aria-live": "polite" });
  const views = new Map<string, { view: MessageView; item: Message }>();
  const bench = benchHooks();
  const benchView = bench === null ? 0 : (bench.views = (bench.views ?? 0) + 1);
  const follower = followScroll(list, { synchronous: bench?.naive === true, composer: options.composer ?? null });
  const notifyPending = createPendingNotifier(options.root); // a toast when an approval waits off-screen
  let cancelFrame: (() => void) | null = null;
  let wasStreaming = false;

  const invalidate = (): void => {
    cancelFrame ??= schedule(flush);
  };
  const history = createHistoryWindow(list, { messages: options.messages, askOlder: options.askOlder, changed: invalidate });
  const flush = (): void => {
    cancelFrame?.();
    cancelFrame = null;
    const started = bench?.samples ? performance.now() : 0;
    if (bench?.samples) performance.mark("hn-batch"); // finds this frame in a trace (CPU time)
    const messages = options.messages();
    reconcile(list, history.visible(messages), views, (message) => createMessageView(message, options.context), history.earlier);
    markLatest(list, messages);
    options.rendered(messages);
    notifyPending(messages);
    const streaming = messages.some((m) => m.status === "streaming");
    if (streaming !== wasStreaming) {
      announcer.textContent = streaming ? "Hermes is responding" : "Hermes finished responding";
      wasStreaming = streaming;
    }
    follower.afterUpdate(list.lastElementChild);
    if (bench?.samples) {
      const script = performance.now() - started;
      void list.offsetHeight; // measuring only: style and layout now, so they count for this batch
      const ms = performance.now() - started;
      bench.samples.push({ ms, script, chars: newestTextLength(messages), view: benchView });
    }
  };

  return {
    el,
    list,
    announcer,
    window: history,
    invalidate,
    flush,
    setBusy: (busy) => setActionsDisabled(list, busy),
    offerUndoWithFiles(messageId, files) {
      const group = views.get(messageId)?.view.el.querySelector<HTMLElement>(".hn-msg-actions");
      if (group) offerUndoWithFiles(group, messageId, files, options.context);
    },
    dispose() {
      cancelFrame?.();
      cancelFrame = null;
      follower.dispose();
      history.dispose();
    },
  };
}

/** Characters of text in the newest message (what the benchmark plots per-batch cost against). */
function newestTextLength(messages: readonly Message[]): number {
  const last = messages[messages.length - 1];
  return last === undefined ? 0 : last.parts.reduce((n, p) => n + (p.text?.length ?? 0), 0);
}
