// anywidget entry for hermes_notebook.widgets.progress.MapProgress (bundled to hermes_notebook/static/progress.js):
// the one progress bar of `hermes.map` (done / failed / running, elapsed, ETA) with a Stop button.
//
// The kernel sends counts only when a prompt starts or ends; this view ticks the elapsed time itself from
// `started` and counts down to `eta_end` once a second. When the map ends the kernel replaces this output with a
// static line and closes the widget, so nothing here outlives it.

import { createDelivery, type Delivery } from "./delivery";
import { h, setAttr, setText } from "./dom";
import type { AnyModel, RenderProps } from "./types/widget";

export interface ProgressState {
  total: number;
  done: number;
  failed: number;
  running: number;
  /** epoch milliseconds */
  started: number;
  /** epoch milliseconds the batch should end at, at the pace so far; 0: not known yet */
  eta_end: number;
  state: "running" | "stopping" | "ended";
}

/** `75`, `1:15`, `1:02:03`: a duration the way a progress line reads it. */
export function clock(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  const hh = Math.floor(s / 3600);
  const mm = Math.floor((s % 3600) / 60);
  const ss = String(s % 60).padStart(2, "0");
  return hh > 0 ? `${hh}:${String(mm).padStart(2, "0")}:${ss}` : `${mm}:${ss}`;
}

/** The counts line: "12 done · 1 failed · 4 running · 23 waiting". */
export function countsText(s: Pick<ProgressState, "total" | "done" | "failed" | "running">): string {
  const waiting = Math.max(0, s.total - s.done - s.failed - s.running);
  return `${s.done} done · ${s.failed} failed · ${s.running} running · ${waiting} waiting`;
}

/** The time line: "0:14 elapsed · about 0:31 left" (no estimate before the first prompt ends). */
export function timeText(s: Pick<ProgressState, "started" | "eta_end" | "state">, nowMs: number): string {
  const elapsed = `${clock((nowMs - s.started) / 1000)} elapsed`;
  if (s.state === "stopping") return `${elapsed} · stopping: the running prompts are ending, no more start`;
  if (!s.eta_end) return `${elapsed} · estimating time left`;
  return `${elapsed} · about ${clock((s.eta_end - nowMs) / 1000)} left`;
}

export class ProgressView {
  readonly root: HTMLElement;
  private readonly bar: HTMLProgressElement;
  private readonly counts: HTMLElement;
  private readonly times: HTMLElement;
  private readonly stop: HTMLButtonElement;
  private readonly timer: ReturnType<typeof setInterval>;
  private readonly delivery: Delivery;
  private readonly onChange = (): void => this.render();

  constructor(private readonly model: AnyModel<ProgressState>, private readonly now: () => number = Date.now) {
    this.delivery = createDelivery(model);
    this.bar = h("progress", { class: "hn-progress-bar", "aria-label": "Prompts ended" });
    this.counts = h("span", { class: "hn-progress-counts" });
    this.times = h("span", { class: "hn-progress-time" });
    this.stop = h("button", { type: "button", class: "hn-progress-stop" }, "Stop");
    this.stop.addEventListener("click", () => {
      this.stop.disabled = true;
      this.delivery.send({ type: "stop" });
    });
    const label = h("span", { class: "hn-progress-title" }, "hermes.map");
    const status = h("div", { class: "hn-progress-status", role: "status", "aria-live": "polite" }, this.counts, this.times);
    this.root = h(
      "div",
      { class: "hn-progress", role: "group", "aria-label": "hermes.map progress" },
      h("div", { class: "hn-progress-row" }, label, this.bar, this.stop),
      status,
      this.delivery.el,
    );
    for (const key of ["total", "done", "failed", "running", "eta_end", "state"]) model.on(`change:${key}`, this.onChange);
    this.timer = setInterval(() => this.render(), 1000);
    this.render();
  }

  render(): void {
    const s = {
      total: this.model.get("total"),
      done: this.model.get("done"),
      failed: this.model.get("failed"),
      running: this.model.get("running"),
      started: this.model.get("started"),
      eta_end: this.model.get("eta_end"),
      state: this.model.get("state"),
    };
    this.bar.max = Math.max(1, s.total);
    this.bar.value = s.done + s.failed;
    setAttr(this.root, "data-state", s.state);
    setAttr(this.root, "data-failed", s.failed > 0 ? String(s.failed) : null);
    setText(this.counts, countsText(s));
    setText(this.times, timeText(s, this.now()));
    if (s.state !== "running") {
      this.stop.disabled = true;
      setText(this.stop, s.state === "stopping" ? "Stopping…" : "Stop");
    }
  }

  dispose(): void {
    clearInterval(this.timer);
    for (const key of ["total", "done", "failed", "running", "eta_end", "state"]) this.model.off(`change:${key}`, this.onChange);
    this.delivery.dispose();
  }
}

function render({ model, el }: RenderProps<ProgressState>): () => void {
  const view = new ProgressView(model);
  el.append(view.root);
  return () => view.dispose();
}

export default { render };
