// A typed stand-in for anywidget's model (after lonboard's src/tests/fake-widget-model.ts): state in a
// plain object, Backbone-style on/off with listener counting, and a log of everything sent.

import type { AnyModel, Callback } from "../src/types/widget";

export class FakeModel<T extends object> implements AnyModel<T> {
  readonly state: T;
  /** every custom message the view sent, deep-copied at send time */
  readonly sent: unknown[] = [];
  /** keys the view wrote with set() (the Python side would save these) */
  readonly writes: string[] = [];
  saves = 0;
  private readonly listeners = new Map<string, Callback[]>();

  constructor(state: T) {
    this.state = structuredClone(state);
  }

  get<K extends keyof T & string>(key: K): T[K] {
    return this.state[key];
  }

  set<K extends keyof T & string>(key: K, value: T[K]): void {
    this.writes.push(key);
    this.state[key] = value;
    this.emit(`change:${key}`);
  }

  on(name: string, callback: Callback): void {
    const list = this.listeners.get(name) ?? [];
    list.push(callback);
    this.listeners.set(name, list);
  }

  off(name?: string | null, callback?: Callback | null): void {
    if (!name) {
      this.listeners.clear();
      return;
    }
    if (!callback) {
      this.listeners.delete(name);
      return;
    }
    const list = (this.listeners.get(name) ?? []).filter((cb) => cb !== callback);
    if (list.length > 0) this.listeners.set(name, list);
    else this.listeners.delete(name);
  }

  save_changes(): void {
    this.saves += 1;
  }

  send(content: unknown, callbacks?: unknown): void {
    this.sent.push(structuredClone(content));
    this.callbacks.push(callbacks);
  }

  /** The ipywidgets callbacks passed with each message sent (same order as `sent`). */
  readonly callbacks: unknown[] = [];

  /** The kernel published its status for the `index`-th message sent (what acknowledges it: ../src/delivery.ts). */
  kernelStatus(index: number, state: "busy" | "idle" = "busy"): void {
    const callbacks = this.callbacks[index] as { iopub?: { status?: (msg: unknown) => void } } | undefined;
    callbacks?.iopub?.status?.({ header: { msg_type: "status" }, content: { execution_state: state } });
  }

  // ---- test helpers: what the kernel side would do ----

  /** Total number of registered listeners. */
  listenerCount(): number {
    let n = 0;
    for (const list of this.listeners.values()) n += list.length;
    return n;
  }

  /** A traitlet changed on the kernel side. */
  kernelSet<K extends keyof T & string>(key: K, value: T[K]): void {
    this.state[key] = structuredClone(value);
    this.emit(`change:${key}`);
  }

  /** The kernel sent a custom message. */
  kernelSend(content: unknown): void {
    this.emit("msg:custom", structuredClone(content), []);
  }

  sentOfType(type: string): Record<string, unknown>[] {
    return this.sent.filter((m): m is Record<string, unknown> => (m as { type?: string }).type === type);
  }

  private emit(name: string, ...args: unknown[]): void {
    for (const callback of [...(this.listeners.get(name) ?? [])]) callback(...args);
  }
}
