// Scroll-follow: keep the newest output in view only while the reader is at (or near) the end of the chat.
// Scrolling up to read stops following; scrolling back down resumes it (jupyter-chat#434's rule).
//
// The chat has no scrollbar of its own: it grows with the conversation inside the notebook, whose own scroll the
// reader uses (a scroll area inside a scrolling notebook traps the wheel and hides the composer). So following
// scrolls the notebook (the nearest ancestor that scrolls; the page elsewhere) by as much as the chat's end, its
// composer, went below the bottom of the view. Only a chat follows: a `%hermes` cell's turn grows like any cell
// output (it has no composer).
//
// No forced layout per update: reading geometry (or setting scrollTop) right after a DOM change makes the browser
// lay out synchronously, on every streamed batch. Instead a ResizeObserver watches the newest message and scrolls
// from its callback, which runs after the frame's own layout, when geometry is already known. Where
// ResizeObserver is missing (jsdom), or in the benchmark's naive mode, it scrolls synchronously.

/** Distance, in pixels, between the transcript's end and the composer that still counts as "at the end". */
export const FOLLOW_THRESHOLD_PX = 48;

export interface ScrollFollower {
  /** Whether the next content change should keep the end in view. */
  readonly following: boolean;
  /** Call after content changed, with the newest element: keeps the end in view if following. */
  afterUpdate(newest?: Element | null): void;
  dispose(): void;
}

/** The element that scrolls `el`: its nearest ancestor that scrolls vertically now (the notebook panel; Lab's
 *  output areas say `overflow: auto` but never scroll), else the page. */
export function scrollParent(el: Element): HTMLElement | null {
  for (let parent = el.parentElement; parent !== null; parent = parent.parentElement) {
    const overflow = getComputedStyle(parent).overflowY;
    if ((overflow === "auto" || overflow === "scroll") && parent.scrollHeight > parent.clientHeight) return parent;
  }
  return (document.scrollingElement as HTMLElement | null) ?? null;
}

/** How far `end` (the composer) reaches below the bottom of `scroller`'s view. */
function overrun(end: HTMLElement, scroller: HTMLElement): number {
  const view = scroller === document.scrollingElement ? window.innerHeight : scroller.getBoundingClientRect().bottom;
  return end.getBoundingClientRect().bottom - view;
}

/**
 * Follow the end of the chat (`composer`, below the transcript `list`) by scrolling its scroll parent. Without a
 * composer shown (a `%hermes` turn) nothing is scrolled.
 */
export function followScroll(
  list: HTMLElement,
  options: { synchronous?: boolean; composer?: HTMLElement | null } = {},
): ScrollFollower {
  const composer = options.composer ?? null;
  let following = true;
  let scroller: HTMLElement | null = null;
  let ours: number | null = null; // where our own last scroll put the view: its event is not the reader's
  const shown = (): boolean => composer !== null && composer.getClientRects().length > 0;
  const onScroll = (): void => {
    // A scroll event comes after layout, so reading geometry here forces nothing. Our own scroll's event may come a
    // frame later, after more output arrived: it must not count as the reader scrolling away.
    if (scroller === null || !shown() || scroller.scrollTop === ours) return;
    following = overrun(composer!, scroller) <= FOLLOW_THRESHOLD_PX;
  };
  const target = (): EventTarget | null => (scroller === document.scrollingElement ? window : scroller);
  const attach = (): void => {
    // the notebook may only start to scroll once the chat grew: look again until something does
    if (scroller !== null && scroller.isConnected && scroller !== document.scrollingElement) return;
    const found = scrollParent(list);
    if (found === scroller) return;
    target()?.removeEventListener("scroll", onScroll);
    scroller = found;
    target()?.addEventListener("scroll", onScroll, { passive: true });
  };
  const toEnd = (): void => {
    if (!following || !shown()) return;
    attach();
    if (scroller === null) return;
    const by = overrun(composer!, scroller);
    if (by > 0) {
      scroller.scrollTop += by;
      ours = scroller.scrollTop;
    }
  };
  const observer = options.synchronous || typeof ResizeObserver !== "function" ? null : new ResizeObserver(toEnd);
  let watched: Element | null = null;
  return {
    get following() {
      return following;
    },
    afterUpdate(newest) {
      if (observer === null) {
        toEnd();
        return;
      }
      if (newest !== undefined && newest !== null && newest !== watched) {
        if (watched !== null) observer.unobserve(watched);
        watched = newest;
        observer.observe(newest); // also reports its first size: a new message is scrolled to
      }
    },
    dispose() {
      target()?.removeEventListener("scroll", onScroll);
      observer?.disconnect();
    },
  };
}
