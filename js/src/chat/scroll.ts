// Scroll-follow: keep the newest output in view only while the reader is at (or near) the bottom.
// Scrolling up to read stops following; scrolling back down resumes it (jupyter-chat#434's rule).
//
// No forced layout per update: reading scrollHeight (or setting scrollTop) right after a DOM change
// makes the browser lay out synchronously, on every streamed batch. Instead a ResizeObserver watches
// the newest message and scrolls from its callback, which runs after the frame's own layout, when
// geometry is already known. Where ResizeObserver is missing (jsdom), or in the benchmark's naive
// mode, it scrolls synchronously as before.
//
// The same callback marks the transcript `hn-filled` once its content overflows its max-height: it is
// then as tall as it will get, and chat.css fixes its height and contains it (`contain: strict`). A box
// of fixed size with contained layout is the browser's layout root, so a streamed batch lays out the
// transcript alone instead of the whole notebook page (about 0.5 ms a batch in JupyterLab). No visible
// change: the height it gets is the one it had.

/** Distance from the bottom, in pixels, that still counts as "at the bottom". */
export const FOLLOW_THRESHOLD_PX = 48;

/** Set on the transcript while its content overflows it (chat.css fixes its height then). */
export const FILLED_CLASS = "hn-filled";

export function isNearBottom(el: HTMLElement, threshold = FOLLOW_THRESHOLD_PX): boolean {
  return el.scrollHeight - el.scrollTop - el.clientHeight <= threshold;
}

export interface ScrollFollower {
  /** Whether the next content change should scroll to the bottom. */
  readonly following: boolean;
  /** Call after content changed, with the newest element: keeps the bottom in view if following. */
  afterUpdate(newest?: Element | null): void;
  dispose(): void;
}

export function followScroll(el: HTMLElement, options: { synchronous?: boolean } = {}): ScrollFollower {
  let following = true;
  // Our own scrollTop assignment fires a scroll event too; it keeps `following` true, as it should.
  // A scroll event comes after layout, so reading geometry here forces nothing.
  const onScroll = (): void => {
    following = isNearBottom(el);
  };
  el.addEventListener("scroll", onScroll, { passive: true });
  const toBottom = (): void => {
    if (following) el.scrollTop = el.scrollHeight;
  };
  const measured = (): void => {
    el.classList.toggle(FILLED_CLASS, el.scrollHeight > el.clientHeight); // no change, no restyle
    toBottom();
  };
  const observer =
    options.synchronous || typeof ResizeObserver !== "function" ? null : new ResizeObserver(measured);
  let watched: Element | null = null;
  return {
    get following() {
      return following;
    },
    afterUpdate(newest) {
      if (observer === null) {
        toBottom();
        return;
      }
      if (newest !== undefined && newest !== null && newest !== watched) {
        if (watched !== null) observer.unobserve(watched);
        watched = newest;
        observer.observe(newest); // also reports its first size: a new message is scrolled to
      }
    },
    dispose() {
      el.removeEventListener("scroll", onScroll);
      observer?.disconnect();
    },
  };
}
