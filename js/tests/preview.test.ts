import { describe, expect, it, vi } from "vitest";

import { CARD_SENTENCE, parseReport, previewPanel } from "../src/notebook/preview";
import { pendingView } from "../src/notebook/view";
import { lineDiff } from "../src/notebook/diff";
import type { PendingChange } from "../src/notebook/pending";

const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

describe("a preview's report", () => {
  it("shows the headline, the sentence, text and figures, the error and the variables (not checked too)", () => {
    const report = parseReport({
      ended: "error",
      seconds: 0.25,
      outputs: [
        { output_type: "stream", name: "stdout", text: "12\n" },
        { output_type: "display_data", data: { "image/png": PNG, "text/plain": "<Figure>" } },
        { output_type: "display_data", data: { "image/png": "not base64 <script>" } },
        { output_type: "error", ename: "ZeroDivisionError", evalue: "", traceback: [] },
      ],
      error: "ZeroDivisionError: division by zero",
      variables: [
        { name: "df", change: "changed in place", type: "DataFrame", shape: "3x2" },
        { name: "big", change: "not checked", type: "ndarray", shape: "10x10" },
        { name: "evil", change: "unchanged", type: "x", shape: "" },
      ],
    });
    expect(report).not.toBeNull();
    const panel = previewPanel({ status: "done", click: "k1", report: report! }, () => undefined);
    expect(panel.querySelector(".hn-preview-headline")!.textContent).toBe("Preview raised an error after 0.25 s.");
    expect(panel.querySelector(".hn-preview-sentence")!.textContent).toBe(CARD_SENTENCE);
    expect(panel.querySelector(".hn-preview-text")!.textContent).toBe("12\n");
    const images = panel.querySelectorAll("img");
    expect(images.length).toBe(1);
    expect(images[0]!.getAttribute("src")).toBe(`data:image/png;base64,${PNG}`);
    expect(panel.querySelector(".hn-preview-error")!.textContent).toContain("ZeroDivisionError");
    const rows = [...panel.querySelectorAll("tbody tr")].map((tr) => tr.textContent);
    expect(rows).toEqual(["dfchanged in placeDataFrame3x2", "bignot checkedndarray10x10"]);
    expect(parseReport({ ended: "exploded" })).toBeNull();
  });

  it("a running preview offers Stop; a refusal is one line with no sentence or table", () => {
    const stop = vi.fn();
    const running = previewPanel({ status: "running", click: "k1" }, stop);
    running.querySelector("button")!.click();
    expect(stop).toHaveBeenCalledOnce();
    const refused = previewPanel(
      { status: "done", click: "k2", report: parseReport({ ended: "refused", reason: "a cell is running now." })! },
      stop,
    );
    expect(refused.textContent).toBe("Preview refused: a cell is running now.");
  });

  it("the diff offers Preview on a proposed code cell only", () => {
    const change = (kind: "insert" | "edit" | "delete", cellType: string): PendingChange => ({
      id: "c1", kind, cellType, cellId: null, base: "", source: "x = 1",
    });
    const actions = { keep: vi.fn(), discard: vi.fn(), preview: vi.fn() };
    const labels = (c: PendingChange) =>
      [...pendingView(c, lineDiff("", c.source), false, actions, -10_000).querySelectorAll("button")].map(
        (b) => b.textContent,
      );
    expect(labels(change("insert", "code"))).toEqual(["Keep", "Discard", "Preview"]);
    expect(labels(change("edit", "markdown"))).toEqual(["Keep", "Discard"]);
    expect(labels(change("delete", "code"))).toEqual(["Keep", "Discard"]);
  });
});
