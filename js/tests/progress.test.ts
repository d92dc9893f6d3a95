import { afterEach, describe, expect, it, vi } from "vitest";

import progress, { clock, countsText, timeText, type ProgressState } from "../src/progress";
import { FakeModel } from "./fake-model";

const NOW = Date.parse("2030-03-01T08:00:00Z");

function state(over: Partial<ProgressState> = {}): ProgressState {
  return { total: 40, done: 0, failed: 0, running: 0, started: NOW - 14_000, eta_end: 0, state: "running", ...over };
}

afterEach(() => {
  vi.useRealTimers();
  document.body.replaceChildren();
});

describe("the map's progress line", () => {
  it("reads durations as a clock and counts what waits", () => {
    expect([clock(0), clock(75), clock(3723), clock(-5)]).toEqual(["0:00", "1:15", "1:02:03", "0:00"]);
    expect(countsText(state({ done: 12, failed: 1, running: 4 }))).toBe("12 done · 1 failed · 4 running · 23 waiting");
    expect(timeText(state(), NOW)).toBe("0:14 elapsed · estimating time left");
    expect(timeText(state({ eta_end: NOW + 31_000 }), NOW)).toBe("0:14 elapsed · about 0:31 left");
    expect(timeText(state({ state: "stopping" }), NOW)).toContain("stopping");
  });

  it("shows one bar that moves with the counts, ticks by itself, and sends one stop", () => {
    vi.useFakeTimers();
    vi.setSystemTime(NOW);
    const model = new FakeModel<ProgressState>(state({ running: 4 }));
    const host = document.createElement("div");
    document.body.append(host);
    const dispose = progress.render({ model, el: host });
    const bar = host.querySelector("progress")!;
    expect(host.querySelectorAll("progress")).toHaveLength(1);
    expect([bar.max, bar.value]).toEqual([40, 0]);
    model.set("done", 10);
    model.set("failed", 1);
    expect(bar.value).toBe(11);
    expect(host.querySelector(".hn-progress")!.getAttribute("data-failed")).toBe("1");
    vi.advanceTimersByTime(2000);
    expect(host.textContent).toContain("0:16 elapsed");
    const stop = host.querySelector<HTMLButtonElement>(".hn-progress-stop")!;
    expect(stop.textContent).toBe("Stop");
    stop.click();
    stop.click();
    expect(model.sent).toEqual([{ type: "stop" }]);
    model.set("state", "stopping");
    expect([stop.disabled, stop.textContent]).toEqual([true, "Stopping…"]);
    dispose();
  });
});
