// Scroll-follow: keep the newest output in view only while the reader is at (or near) the bottom.
// Scrolling up to read stops following; scrolling back down resumes it (jupyter-chat#434's rule).

/** Distance from the bottom, in pixels, that still counts as "at the bottom". */
export const FOLLOW_THRESHOLD_PX = 48;

export function isNearBottom(el: HTMLElement, threshold = FOLLOW_THRESHOLD_PX): boolean {
  return el.scrollHeight - el.scrollTop - el.clientHeight <= threshold;
}

export interface ScrollFollower {
  /** Whether the next content change should scroll to the bottom. */
  readonly following: boolean;
  /** Call after content changed: scrolls to the bottom if the reader was following. */
  afterUpdate(): void;
  dispose(): void;
}

export function followScroll(el: HTMLElement): ScrollFollower {
  let following = true;
  // Our own scrollTop assignment fires a scroll event too; it keeps `following` true, as it should.
  const onScroll = (): void => {
    following = isNearBottom(el);
  };
  el.addEventListener("scroll", onScroll, { passive: true });
  return {
    get following() {
      return following;
    },
    afterUpdate() {
      if (following) el.scrollTop = el.scrollHeight;
    },
    dispose() {
      el.removeEventListener("scroll", onScroll);
    },
  };
}
