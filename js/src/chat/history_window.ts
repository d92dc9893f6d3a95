// Which of the messages this view holds it renders: a long history shows its newest HISTORY_WINDOW messages
// first, and older ones as the reader scrolls up (or presses "Show earlier messages"). Past the oldest message
// the view holds, the next page comes from the kernel (`{type: "older"}`, asked through the conversation sync),
// and the slice before the first one shown is rendered once it is here. The browser's scroll anchoring keeps the
// reader's place. Owns: the first message rendered (an id, so appends and snapshots keep it), how many messages
// the kernel holds before the first one here, and whether the reader is waiting for an earlier slice.

import { h } from "../dom";
import type { Message } from "../types/turns";

/**
 * Messages rendered at first from a long history (the newest ones); scrolling up to the top (or the
 * "Show earlier messages" button) renders this many more. A 10,000-message session paints at once,
 * and its DOM grows only as far as the reader goes back.
 */
export const HISTORY_WINDOW = 60;

export interface HistoryWindow {
  /** The "Show earlier messages" button: the first child of the list, hidden while nothing precedes. */
  readonly earlier: HTMLButtonElement;
  /** The messages to render out of all the view holds (the window's start kept by id). */
  visible(all: readonly Message[]): readonly Message[];
  /** A snapshot arrived: `older` messages precede it in the kernel; `reset`: another conversation. */
  snapshotArrived(older: number, reset: boolean): void;
  /** A page of older messages was put in front of what the view holds; `older` more precede it. */
  olderArrived(older: number): void;
  dispose(): void;
}

export interface WindowSource {
  /** Every message the view holds, oldest first. */
  messages(): readonly Message[];
  /** Ask the kernel for the page before the oldest message held (once at a time). */
  askOlder(): void;
  /** The window moved: render again. */
  changed(): void;
}

export function createHistoryWindow(list: HTMLElement, source: WindowSource): HistoryWindow {
  const earlier = h("button", { type: "button", class: "hn-earlier", hidden: true }, "Show earlier messages");
  list.append(earlier);
  let start: string | null = null; // the first message rendered
  let older = 0; // messages the kernel holds before the first one here
  let wantEarlier = false; // the reader asked for a slice that reaches past what the view holds

  const showEarlier = (): void => {
    const messages = source.messages();
    const at = start === null ? -1 : messages.findIndex((m) => m.id === start);
    if (older > 0 && at - HISTORY_WINDOW < 0) {
      // The next slice reaches past the oldest message held: ask for the page before it now, and show the
      // slice before the first one shown once it is here.
      wantEarlier = true;
      source.askOlder();
    }
    if (at <= 0) return;
    start = messages[Math.max(0, at - HISTORY_WINDOW)]!.id;
    source.changed();
  };
  const caughtUp = (): void => {
    if (!wantEarlier) return;
    wantEarlier = false;
    showEarlier();
  };
  earlier.addEventListener("click", showEarlier);
  // Scrolling up to the top of the chat renders the next older slice; the browser's scroll anchoring keeps the
  // reader's place. The notebook scrolls, not the chat (scroll.ts), so this watches the page's viewport.
  const topObserver =
    typeof IntersectionObserver === "function"
      ? new IntersectionObserver((entries) => entries.some((e) => e.isIntersecting) && showEarlier(), {
          rootMargin: "600px 0px 0px 0px",
        })
      : null;
  topObserver?.observe(earlier);

  return {
    earlier,
    visible(all) {
      let at = start === null ? -1 : all.findIndex((m) => m.id === start);
      if (at < 0) at = Math.max(0, all.length - HISTORY_WINDOW);
      start = all[at]?.id ?? null;
      const hidden = at === 0 && older === 0;
      if (earlier.hidden !== hidden) earlier.hidden = hidden; // an unchanged write still restyles
      return at === 0 ? all : all.slice(at);
    },
    snapshotArrived(count, reset) {
      older = count;
      if (reset) wantEarlier = false; // another conversation: the reader starts at its end
      if (wantEarlier && older > 0) source.askOlder();
      else caughtUp();
    },
    olderArrived(count) {
      older = count;
      caughtUp();
    },
    dispose() {
      topObserver?.disconnect();
    },
  };
}
