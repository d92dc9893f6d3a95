// The one message idiom of both widgets (after anywidget's `invoke`): a question to the kernel carries a request
// id, and the answer comes back with it. `invoke(model, question, handlers)` sends `{...question, request: id}`;
// the kernel's message carrying that `request` goes to `handlers.answer` (typed by `Answers` in types/answers.ts), an
// `{type: "error", request, message}` to `handlers.failed` as a `KernelRefused`, and no answer within the timeout
// (`AbortSignal.timeout`) to `handlers.failed` as a `KernelTimeout`. Aborting the returned controller (a newer question
// superseding this one, a view disposed) stops the wait the same way, silently: a late answer is then ignored.
// The answer is handled in the message listener itself, so what it shows is on screen when the message has been
// handled. Commands (send, stop, ...) carry no id: their effects arrive as state and change records.
// Kernel side: hermes_notebook/widgets/replies.py.

import type { AnyModel, Asked } from "./types/widget";

import type { Answers, Question } from "./types/answers";

/** How long a question waits for its answer unless told otherwise (ms). */
export const DEFAULT_TIMEOUT_MS = 10_000;

/** No answer within the timeout (the kernel may be busy running a cell). */
export class KernelTimeout extends Error {
  override name = "KernelTimeout";
}

/** The kernel answered that it could not answer (its message says why). */
export class KernelRefused extends Error {
  override name = "KernelRefused";
}

export interface Handlers<A> {
  answer(message: A): void;
  /** no answer in time, or the kernel's refusal; not called when the caller aborted */
  failed?(error: KernelTimeout | KernelRefused): void;
}

/** What `invoke` uses of a widget's model: its custom messages. */
export type MessageChannel = Pick<AnyModel<unknown>, "on" | "off" | "send">;

export interface InvokeOptions {
  /** ms before giving up (default DEFAULT_TIMEOUT_MS) */
  timeout?: number;
}

let counter = 0;

/** A request id unique in this page (views of several kernels share it, and each id is one question). */
export function requestId(): string {
  counter += 1;
  return `${Date.now().toString(36)}-${counter.toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
}

/** Ask the kernel `question` (see the module comment); abort the returned controller to stop waiting. */
export function invoke<Q extends Question>(
  model: MessageChannel,
  question: Asked<Q>,
  handlers: Handlers<Answers[Q["type"]]>,
  options: InvokeOptions = {},
): AbortController {
  const request = requestId();
  const timeout = options.timeout ?? DEFAULT_TIMEOUT_MS;
  const controller = new AbortController();
  const deadline = AbortSignal.timeout(timeout);
  const signal = AbortSignal.any([controller.signal, deadline]);
  const onMessage = (msg: { type?: unknown; request?: unknown; message?: unknown } | null): void => {
    if (msg === null || typeof msg !== "object" || msg.request !== request) return;
    stop();
    if (msg.type === "error") handlers.failed?.(new KernelRefused(String(msg.message ?? "the kernel could not answer")));
    else handlers.answer(msg as Answers[Q["type"]]);
  };
  const onAbort = (): void => {
    stop();
    if (deadline.aborted && !controller.signal.aborted) {
      handlers.failed?.(new KernelTimeout(`the kernel did not answer within ${timeout / 1000} s`));
    }
  };
  const stop = (): void => {
    model.off("msg:custom", onMessage);
    signal.removeEventListener("abort", onAbort);
  };
  signal.addEventListener("abort", onAbort);
  model.on("msg:custom", onMessage);
  model.send({ ...question, request });
  return controller;
}
