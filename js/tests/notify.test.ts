import { afterEach, describe, expect, it } from "vitest";

import jobs, { type JobsState } from "../src/jobs";
import { createPendingNotifier, notify } from "../src/notify";
import { FakeModel } from "./fake-model";

function fakeApp() {
  const calls: { id: string; args: Record<string, unknown> }[] = [];
  const host = {
    jupyterapp: {
      commands: {
        hasCommand: (id: string) => id === "apputils:notify",
        execute: (id: string, args: Record<string, unknown>) => {
          calls.push({ id, args });
          return Promise.resolve();
        },
      },
    },
  };
  return { host, calls };
}

const pending = (requestId: string, status = "pending") => ({
  id: "assistant:t1",
  parts: [{ id: "tool:1", interaction: { kind: "approval", status, request_id: requestId, command: "rm -rf ./x", question: null } }],
});

afterEach(() => {
  delete (globalThis as { jupyterapp?: unknown }).jupyterapp;
  document.body.replaceChildren();
});

describe("notebook notifications", () => {
  it("uses JupyterLab's apputils:notify, and does nothing elsewhere", () => {
    expect(notify("hello", "info", {})).toBe(false);
    const { host, calls } = fakeApp();
    expect(notify("hello", "success", host)).toBe(true);
    expect(calls).toEqual([{ id: "apputils:notify", args: { message: "hello", type: "success", options: { autoClose: 10000 } } }]);
  });

  it("tells about a pending approval once, and only while the turn is off-screen", () => {
    const { host, calls } = fakeApp();
    const el = document.createElement("div");
    document.body.append(el);
    let rect = { top: 0, bottom: 100, width: 100, height: 100 };
    el.getBoundingClientRect = () => rect as DOMRect;
    const check = createPendingNotifier(el, host);
    check([pending("r1")]); // on screen: the buttons are in view
    expect(calls).toHaveLength(0);
    rect = { top: -500, bottom: -400, width: 100, height: 100 };
    check([pending("r2")]);
    check([pending("r2")]);
    check([pending("r3", "answered")]);
    expect(calls.map((c) => c.args.message)).toEqual(["Hermes is waiting for your approval: rm -rf ./x"]);
    expect(calls[0]!.args.type).toBe("warning");
  });

  it("shows the command as it runs (hidden characters revealed) and says when Hermes hid part of it", () => {
    const { host, calls } = fakeApp();
    const el = document.createElement("div");
    document.body.append(el);
    el.getBoundingClientRect = () => ({ top: -500, bottom: -400, width: 100, height: 100 }) as DOMRect;
    const check = createPendingNotifier(el, host);
    const ask = (requestId: string, command: string, masked?: boolean) => ({
      id: "assistant:t1",
      parts: [{ id: "tool:1", interaction: { kind: "approval", status: "pending", request_id: requestId, command, question: null, masked } }],
    });
    check([ask("r1", "echo ok\u202e; rm -rf ~")]);
    check([ask("r2", "API_KEY=*** rm -rf ./dir", true)]);
    expect(calls.map((c) => c.args.message)).toEqual([
      "Hermes is waiting for your approval: echo ok\u27e6U+202E\u27e7; rm -rf ~",
      "Hermes is waiting for your approval (Hermes hid part of this command; what runs is not fully shown): " +
        "API_KEY=*** rm -rf ./dir",
    ]);
  });

  it("the jobs view turns a finished-run notice into one notification", () => {
    const { host, calls } = fakeApp();
    (globalThis as { jupyterapp?: unknown }).jupyterapp = host.jupyterapp;
    const state: JobsState = {
      jobs: [], include_disabled: false, auto_refresh: 0, updated_at: null, loading: false,
      connection: { status: "connected", message: null, url: "" }, notice: {}, presets: [], timezone: "UTC",
    };
    const model = new FakeModel<JobsState>(state);
    const el = document.createElement("div");
    document.body.append(el);
    jobs.render({ model, el });
    model.kernelSet("notice", { kind: "info", text: "Paused 'x'." });
    model.kernelSet("notice", { kind: "run", text: "'nightly' finished a run (ok). Open Runs to see what it did." });
    model.kernelSet("loading", true); // another update with the same notice: no second toast
    expect(calls.map((c) => c.args.message)).toEqual(["'nightly' finished a run (ok). Open Runs to see what it did."]);
  });
});
