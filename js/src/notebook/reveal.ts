// The one event between the chat widget and the notebook extension: the chat's "Show in notebook" dispatches it on
// window with the change's id; the notebook panel holding that pending change scrolls to it, focuses it and cancels
// the event (so the chat knows it was shown). Two bundles, one name.
export const REVEAL_EVENT = "hermes-notebook:reveal";

export interface RevealDetail {
  change: string;
}

/** Ask the notebook to show pending change `change`; true when a notebook did. */
export function revealChange(change: string): boolean {
  const event = new CustomEvent<RevealDetail>(REVEAL_EVENT, { detail: { change }, cancelable: true });
  return !window.dispatchEvent(event);
}
