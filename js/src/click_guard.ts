// A click meant for what was on the screen must not act on what just replaced it: buttons whose content
// changed ignore clicks for CLICK_DELAY_MS (Keep / Discard on a proposed change, Run / Deny on a Run card).
// They stay focusable meanwhile (aria-disabled, not disabled), so the keyboard keeps its place.

/** Milliseconds freshly shown content ignores clicks on the buttons that act on it. */
export const CLICK_DELAY_MS = 1_000;

/** The monotonic clock the guard measures with. */
export function now(): number {
  return typeof performance !== "undefined" ? performance.now() : Date.now();
}

/** Whether a click now may act on content shown at `shownAt`. */
export function armed(shownAt: number): boolean {
  return now() >= shownAt + CLICK_DELAY_MS;
}

/** Mark `buttons` unavailable (aria-disabled: they keep their focus) until `shownAt + CLICK_DELAY_MS`. */
export function holdClicks(buttons: HTMLElement[], shownAt: number): void {
  const wait = shownAt + CLICK_DELAY_MS - now();
  if (wait <= 0) return;
  for (const button of buttons) button.setAttribute("aria-disabled", "true");
  setTimeout(() => buttons.forEach((button) => button.removeAttribute("aria-disabled")), wait);
}

const KEPT = 256;

/**
 * When content first showed under `key` (a card's request): a re-render of the same content keeps its time,
 * new content under the same key starts the delay again. Bounded: the oldest keys are forgotten first.
 */
export class FirstShown {
  private readonly seen = new Map<string, { content: string; at: number }>();

  at(key: string, content: string): number {
    const known = this.seen.get(key);
    if (known && known.content === content) return known.at;
    this.seen.delete(key);
    this.seen.set(key, { content, at: now() });
    if (this.seen.size > KEPT) this.seen.delete(this.seen.keys().next().value as string);
    return this.seen.get(key)!.at;
  }
}
