// What every part's view is, whatever its kind: the contract between a message (message.ts), the factory that
// picks a view by kind (parts.ts) and the views themselves (parts.ts, activity.ts). Its own module so that the
// views and the factory depend on it, not on each other.

import type { Part } from "../types/turns";
import type { InteractionContext } from "./interactions";

export interface PartView {
  readonly el: HTMLElement;
  part: Part;
  update(part: Part): void;
  /** The message stopped streaming: render what was deferred (a fence's highlighting). */
  settle?(): void;
}

export interface PartContext extends InteractionContext {
  /** user text is shown verbatim, assistant text as markdown */
  role: "user" | "assistant";
}
