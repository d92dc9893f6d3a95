// What every widget of ours shares: the anywidget model typed over its state (after @anywidget/types AnyModel<T>)
// and the building blocks of the one message idiom (js/src/invoke.ts; kernel side hermes_notebook/widgets/replies.py).
// A question carries a `request` id (set by `invoke`) and is answered once by the message `Answers` (./answers.ts)
// names for it, with the same `request`, or by an `ErrorMsg`; every other message is a command or a state push.

// ---- the anywidget model, typed over its state (after @anywidget/types AnyModel<T>) ----

export type Callback = (...args: any[]) => void;

export interface AnyModel<T> {
  get<K extends keyof T & string>(key: K): T[K];
  set<K extends keyof T & string>(key: K, value: T[K]): void;
  on(name: string, callback: Callback): void;
  off(name?: string | null, callback?: Callback | null): void;
  save_changes(): void;
  send(content: unknown, callbacks?: unknown, buffers?: ArrayBuffer[] | ArrayBufferView[]): void;
}

export interface RenderProps<T> {
  model: AnyModel<T>;
  el: HTMLElement;
}

/** Kernel -> browser: a question could not be answered (the view's `invoke` rejects with `message`). */
export interface ErrorMsg {
  type: "error";
  request: string;
  message: string;
}
/** A question as a view writes it: the request id is `invoke`'s to add (js/src/invoke.ts). */
export type Asked<Q extends { request: string }> = Q extends unknown ? Omit<Q, "request"> : never;
