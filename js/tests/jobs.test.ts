import { describe, expect, it } from "vitest";

import jobs, { type JobsState } from "../src/jobs";
import { FakeModel } from "./fake-model";

const rows = (host: HTMLElement) =>
  Array.from(host.querySelectorAll("tbody tr")).map((tr) => Array.from(tr.querySelectorAll("td")).map((td) => td.textContent));

describe("jobs table", () => {
  it("renders one row per job and follows the traitlet", () => {
    const model = new FakeModel<JobsState>({
      jobs: [
        { name: "nightly report", schedule: "0 2 * * *", state: "scheduled", id: "j1" },
        { name: "canary", schedule: { every: "15m" }, state: "paused" },
      ],
    });
    const host = document.createElement("div");
    const cleanup = jobs.render({ model, el: host });
    expect(Array.from(host.querySelectorAll("th")).map((th) => th.textContent)).toEqual(["Name", "Schedule", "State"]);
    expect(rows(host)).toEqual([
      ["nightly report", "0 2 * * *", "scheduled"],
      ["canary", '{"every":"15m"}', "paused"],
    ]);
    expect(host.querySelector<HTMLElement>("tr.hn-job")!.dataset.state).toBe("scheduled");
    model.kernelSet("jobs", [{ name: "<b>x</b>", schedule: null, state: "error" }]);
    expect(rows(host)).toEqual([["<b>x</b>", "", "error"]]);
    expect(host.querySelector("b")).toBeNull();
    model.kernelSet("jobs", []);
    expect(rows(host)).toEqual([["No jobs."]]);
    cleanup();
    expect(model.listenerCount()).toBe(0);
    expect(host.childElementCount).toBe(0);
  });
});
