import { afterEach, describe, expect, it } from "vitest";

import { loadView } from "../src/turn";
import { FakeModel } from "./fake-model";

type State = { bundle_hash: string } & Record<string, unknown>;

afterEach(() => {
  delete (globalThis as Record<string, unknown>).__hermesNotebookTurnViews;
  document.head.querySelectorAll("style[data-hn-turn-bundle]").forEach((s) => s.remove());
});

function model(hash = "abc") {
  return new FakeModel<State>({ bundle_hash: hash }) as unknown as FakeModel<State> & Parameters<typeof loadView>[0];
}

describe("a %hermes live view's loader", () => {
  it("asks the kernel for the chat view once per page and bundle, and adds its stylesheet once", async () => {
    const imported: string[] = [];
    const importer = async (url: string) => (imported.push(url), { default: { render: () => undefined } });
    const first = model();
    const loading = loadView(first, importer);
    expect(first.sent).toEqual([{ type: "bundle", request: expect.any(Number) }]);
    const { request } = first.sent[0] as { request: number };
    first.kernelSend({ type: "bundle", request: request + 1, esm: "wrong", css: "" }); // another view's answer
    first.kernelSend({ type: "bundle", request, esm: "export default {}", css: ".hn-chat{}" });
    const view = await loading;
    expect(typeof view.default.render).toBe("function");
    expect(imported).toHaveLength(1);
    const second = model();
    expect(await loadView(second, importer)).toBe(view);
    expect(second.sent).toEqual([]); // the page has it: no second 250 KB answer
    expect(document.head.querySelectorAll("style[data-hn-turn-bundle='abc']")).toHaveLength(1);
    const rebuilt = model("def"); // another build of the view (the package was upgraded): asked for again
    void loadView(rebuilt, importer);
    expect(rebuilt.sent).toHaveLength(1);
  });

  it("asks again after a failed load", async () => {
    const first = model();
    const loading = loadView(first, async () => ({ default: { render: () => undefined } }));
    const { request } = first.sent[0] as { request: number };
    first.kernelSend({ type: "bundle", request });
    await expect(loading).rejects.toThrow("no view code");
    const second = model();
    void loadView(second);
    expect(second.sent).toHaveLength(1);
  });
});
