// Hiding a widget's static twin: the output beside a live view that holds a plain copy for viewers without widget
// JS (hermes_notebook/widgets/static_twin.py). Once the live view shows the same thing, the copy would repeat it.
//
// Not with CSS `:has()` (`.jp-OutputArea:has(.hn-chat[data-live]) .jp-OutputArea-child:has(.hn-transcript)`): an
// element a `:has()` rule may match is restyled by testing its whole subtree whenever a node is inserted anywhere
// inside it, so every streamed batch cost a style pass over the whole conversation (6-9 ms at 1 MB). Instead the
// view marks the twin's output; a MutationObserver on the output area's own children (not its subtree: streaming
// deep inside it never wakes it) marks a twin output that is added or replaced later.

import { animationFrame } from "./dom";

/** Class of an output hidden because a live view shows its content (in chat.css and jobs.css). */
export const HIDDEN_TWIN_CLASS = "hn-twin-hidden";

export interface TwinHider {
  /** The live view has its content: hide the twin output(s) in this view's output area, now and later. */
  activate(): void;
  /** Show them again (the live view is going away). */
  dispose(): void;
}

/**
 * Hide the outputs matching `twinSelector` beside `view` in a JupyterLab / Notebook 7 output area (elsewhere, no
 * output area: nothing to do). `schedule` waits for the view to be attached (a frame, by default).
 */
export function hideStaticTwin(
  view: HTMLElement,
  twinSelector: string,
  schedule: (callback: () => void) => () => void = animationFrame,
): TwinHider {
  let cancel: (() => void) | null = null;
  let observer: MutationObserver | null = null;
  let area: Element | null = null;
  let active = false;
  let disposed = false;
  const hidden = new Set<Element>();

  const mark = (): void => {
    if (area === null) return;
    for (const child of Array.from(area.children)) {
      if (hidden.has(child) || child.contains(view) || child.querySelector(twinSelector) === null) continue;
      child.classList.add(HIDDEN_TWIN_CLASS);
      hidden.add(child);
    }
  };
  const attach = (tries: number): void => {
    if (disposed || area !== null) return;
    if (!view.isConnected) {
      if (tries > 0) cancel = schedule(() => attach(tries - 1));
      return;
    }
    area = view.closest(".jp-OutputArea");
    if (area === null) return;
    mark();
    if (typeof MutationObserver === "function") {
      observer = new MutationObserver(mark);
      observer.observe(area, { childList: true });
    }
  };
  return {
    activate() {
      if (active || disposed) return;
      active = true;
      attach(120);
    },
    dispose() {
      disposed = true;
      cancel?.();
      observer?.disconnect();
      for (const child of hidden) child.classList.remove(HIDDEN_TWIN_CLASS);
      hidden.clear();
    },
  };
}
