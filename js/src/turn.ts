// anywidget entry for hermes_notebook.widgets.turn.TurnView, the live view of one `%hermes` / `ask()` turn
// (bundled to hermes_notebook/static/turn.js): a loader for the chat view (chat.js), which it asks the kernel for
// once per page.
//
// Why not chat.js as this widget's `_esm`, as the Chat has it: anywidget puts `_esm` in the widget's state, so every
// turn sent 270 KB of code to the page, and the page imported it again from a new blob URL (a module the page keeps
// for its lifetime); a notebook asking a thousand times sent 270 MB and kept a thousand copies, and a headless run
// (nbclient keeps every widget's state) saved them all. Here the state holds this loader and the bundle's hash; the
// first turn view of a page asks for the bundle (`{"type": "bundle", "request"}`), the kernel answers
// `{"type": "bundle", "request", "esm", "css"}`, and every later view of that page reuses the module.

import type { ChatState } from "./types/chat";
import type { AnyModel, RenderProps } from "./types/widget";

type ViewModule = { default: { render(props: RenderProps<ChatState>): (() => void) | void } };
type TurnState = ChatState & { bundle_hash: string };
type Answer = { type?: unknown; request?: unknown; esm?: unknown; css?: unknown };

const KEY = "__hermesNotebookTurnViews";
let requests = 0;

/** Modules per bundle hash, shared by every view of this page (and across loader copies). */
function modules(): Map<string, Promise<ViewModule>> {
  const host = globalThis as unknown as Record<string, Map<string, Promise<ViewModule>>>;
  host[KEY] ??= new Map();
  return host[KEY];
}

/** Ask the kernel for the chat view's code and stylesheet through this view's model. */
function fetchBundle(model: AnyModel<TurnState>): Promise<{ esm: string; css: string }> {
  const request = ++requests;
  return new Promise((resolve, reject) => {
    const onMessage = (msg: Answer): void => {
      if (msg?.type !== "bundle" || msg.request !== request) return;
      model.off("msg:custom", onMessage);
      if (typeof msg.esm === "string" && typeof msg.css === "string") resolve({ esm: msg.esm, css: msg.css });
      else reject(new Error("the kernel sent no view code"));
    };
    model.on("msg:custom", onMessage);
    model.send({ type: "bundle", request });
  });
}

/** The chat view's module for this model's bundle: imported once per page, its stylesheet added once. */
export function loadView(
  model: AnyModel<TurnState>,
  importModule: (url: string) => Promise<ViewModule> = (url) => import(/* @vite-ignore */ url),
): Promise<ViewModule> {
  const hash = model.get("bundle_hash");
  const cache = modules();
  let found = cache.get(hash);
  if (found === undefined) {
    found = fetchBundle(model).then(async ({ esm, css }) => {
      const style = document.createElement("style");
      style.dataset.hnTurnBundle = hash;
      style.textContent = css;
      document.head.append(style);
      const url = URL.createObjectURL(new Blob([esm], { type: "text/javascript" }));
      try {
        return await importModule(url);
      } finally {
        URL.revokeObjectURL(url);
      }
    });
    found.catch(() => cache.delete(hash)); // a failed load is asked for again by the next view
    cache.set(hash, found);
  }
  return found;
}

async function render({ model, el }: RenderProps<TurnState>): Promise<() => void> {
  const view = await loadView(model);
  const dispose = view.default.render({ model, el });
  return () => dispose?.();
}

export default { render };
