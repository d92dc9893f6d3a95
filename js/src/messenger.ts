// How a view of ours talks to its kernel: the one message idiom of both widgets (the chat and the jobs table), in
// one object per view. Commands go out as they are; questions go through `invoke` (./invoke.ts: a request id, a
// timeout, one answer); both go through `delivery` (./delivery.ts), whose note says when the kernel, busy with a
// cell, has not taken them yet. A question's answer (or the kernel's refusal of it) also acknowledges the question
// to `delivery`, so no view keeps a table of which reply answers what. Everything a view listens to on its model
// goes through `listen`, and `dispose` stops it all: the listeners, the questions still waiting, the note.
// Kernel side: hermes_notebook/widgets/replies.py.

import { createDelivery, type Delivery } from "./delivery";
import { invoke, type Handlers, type InvokeOptions, type MessageChannel } from "./invoke";
import type { Answers, Question } from "./types/answers";
import type { Asked, Callback } from "./types/widget";

export interface Messenger {
  /** The "kernel is busy" note (delivery.ts), for the view to place. */
  readonly note: HTMLElement;
  /** A command: no answer; its effect arrives as state, change records or pushes. */
  command(message: { type: string } & Record<string, unknown>, buffers?: ArrayBuffer[] | ArrayBufferView[]): void;
  /** A question (see invoke.ts); aborting the returned controller stops the wait silently. */
  ask<Q extends Question>(question: Asked<Q>, handlers: Handlers<Answers[Q["type"]]>, options?: InvokeOptions): AbortController;
  /** A reply the view recognises shows the kernel handled the oldest waiting command of this type (delivery.ts). */
  answered(type: string, match?: (sent: Record<string, unknown>) => boolean): void;
  /** `model.on(name, callback)`, undone by `dispose`. */
  listen(name: string, callback: Callback): void;
  /** The channel `invoke` asks through (what a panel that asks on its own is given). */
  readonly channel: MessageChannel;
  dispose(): void;
}

export function createMessenger(model: MessageChannel, delivery: Delivery = createDelivery(model)): Messenger {
  const listeners: [string, Callback][] = [];
  const asking = new Set<AbortController>();
  const waiting = new Map<string, string>(); // request id -> the question's type, until its answer comes
  const channel: MessageChannel = {
    on: (name, callback) => model.on(name, callback),
    off: (name, callback) => model.off(name, callback),
    send: (content) => {
      const message = content as Record<string, unknown>;
      if (typeof message.request === "string" && typeof message.type === "string") waiting.set(message.request, message.type);
      delivery.send(message);
    },
  };
  const listen = (name: string, callback: Callback): void => {
    model.on(name, callback);
    listeners.push([name, callback]);
  };
  // Any answer, or refusal, names its question's request id: the kernel has handled that question.
  listen("msg:custom", (msg: { request?: unknown } | null) => {
    const request = msg !== null && typeof msg === "object" && typeof msg.request === "string" ? msg.request : null;
    const type = request === null ? undefined : waiting.get(request);
    if (type === undefined) return;
    waiting.delete(request!);
    delivery.answered(type, (sent) => sent.request === request);
  });
  return {
    note: delivery.el,
    channel,
    command: (message, buffers) => delivery.send(message, buffers),
    ask<Q extends Question>(question: Asked<Q>, handlers: Handlers<Answers[Q["type"]]>, options?: InvokeOptions) {
      // invoke settles a question once (answer, refusal or timeout), or the asker aborts it: forget it then.
      const done = (): void => void asking.delete(controller);
      const controller: AbortController = invoke<Q>(channel, question, {
        answer: (msg) => (done(), handlers.answer(msg)),
        failed: (error) => (done(), handlers.failed?.(error)),
      }, options);
      controller.signal.addEventListener("abort", done);
      asking.add(controller);
      return controller;
    },
    answered: (type, match) => delivery.answered(type, match),
    listen,
    dispose() {
      for (const controller of asking) controller.abort();
      asking.clear();
      waiting.clear();
      for (const [name, callback] of listeners) model.off(name, callback);
      listeners.length = 0;
      delivery.dispose();
    },
  };
}
