import { afterEach, describe, expect, it } from "vitest";

import { createChatView } from "../src/chat/view";
import type { ChatState } from "../src/types/chat";
import { FakeModel } from "./fake-model";
import { chatState } from "./fixtures";

function setup() {
  const model = new FakeModel<ChatState>(chatState({}));
  const host = document.createElement("div");
  document.body.append(host);
  createChatView(model, host, { schedule: () => () => undefined });
  const $ = <E extends Element = HTMLElement>(selector: string) => host.querySelector<E>(selector)!;
  return { model, $ };
}

afterEach(() => document.body.replaceChildren());

describe("export button", () => {
  it("asks the kernel to export in the chosen format (Markdown by default)", () => {
    const { model, $ } = setup();
    const button = $<HTMLButtonElement>("button.hn-export");
    expect(button.getAttribute("aria-label")).toContain("Export the conversation");
    button.click();
    const format = $<HTMLSelectElement>("select.hn-export-format");
    format.value = "ipynb";
    button.click();
    format.value = "html";
    button.click();
    expect(model.sentOfType("export")).toEqual([
      { type: "export", format: "md" },
      { type: "export", format: "ipynb" },
      { type: "export", format: "html" },
    ]);
  });

  it("shows the path the kernel wrote in the notice line", () => {
    const { model, $ } = setup();
    model.kernelSet("notice", "Exported to /home/me/hermes-chat-s1-20300101-000000.md");
    expect($(".hn-notice").textContent).toContain("hermes-chat-s1-20300101-000000.md");
  });

  it("sits in the header, which turn mode hides", () => {
    const { $ } = setup();
    expect($(".hn-header").contains($("button.hn-export"))).toBe(true);
  });
});
