import { describe, expect, it, vi } from "vitest";

import { createComposer, MAX_IMAGE_BYTES } from "../src/chat/composer";
import type { ChatOutgoing } from "../src/types/chat";

function setup() {
  const sent: ChatOutgoing[] = [];
  const composer = createComposer((m) => sent.push(m));
  document.body.replaceChildren(composer.el);
  const $ = <E extends HTMLElement = HTMLElement>(selector: string) => composer.el.querySelector<E>(selector)!;
  const textarea = $<HTMLTextAreaElement>("textarea");
  const key = (init: KeyboardEventInit) => {
    const event = new KeyboardEvent("keydown", { key: "Enter", cancelable: true, ...init });
    textarea.dispatchEvent(event);
    return event;
  };
  const pick = (files: File[]) => {
    const input = $<HTMLInputElement>("input[type=file]");
    Object.defineProperty(input, "files", { configurable: true, value: files });
    input.dispatchEvent(new Event("change"));
  };
  return { sent, composer, $, textarea, key, pick };
}

const PNG = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

describe("composer", () => {
  it("sends on Ctrl+Enter and Cmd+Enter, but Enter alone is a newline", async () => {
    const { sent, textarea, key } = setup();
    textarea.value = "line one";
    const plain = key({});
    expect(plain.defaultPrevented).toBe(false);
    expect(sent).toEqual([]);
    const ctrl = key({ ctrlKey: true });
    expect(ctrl.defaultPrevented).toBe(true);
    await vi.waitFor(() => expect(sent).toEqual([{ type: "send", text: "line one", images: [] }]));
    expect(textarea.value).toBe("");
    textarea.value = "two";
    key({ metaKey: true });
    await vi.waitFor(() => expect(sent).toHaveLength(2));
  });

  it("does not send an empty prompt", async () => {
    const { sent, textarea, composer } = setup();
    textarea.value = "   \n ";
    await composer.submit();
    expect(sent).toEqual([]);
  });

  it("attaches images from the file picker and sends them base64", async () => {
    const { sent, textarea, composer, $, pick } = setup();
    pick([new File([PNG], "shot.png", { type: "image/png" })]);
    expect($(".hn-attachments").textContent).toContain("shot.png");
    textarea.value = "what is this?";
    await composer.submit();
    expect(sent).toEqual([{ type: "send", text: "what is this?", images: [{ mime: "image/png", data: "iVBORw0KGgo=" }] }]);
    expect($(".hn-attachments").childElementCount).toBe(0);
  });

  it("refuses other files with a visible message", async () => {
    const { sent, composer, $, pick } = setup();
    pick([new File(["PK"], "data.zip", { type: "application/zip" }), new File([PNG], "ok.png", { type: "image/png" })]);
    const error = $(".hn-composer-error");
    expect(error.hidden).toBe(false);
    expect(error.getAttribute("role")).toBe("alert");
    expect(error.textContent).toBe("Only images, PDFs and text files can be attached; refused: data.zip.");
    await composer.submit();
    expect(sent).toEqual([{ type: "send", text: "", images: [{ mime: "image/png", data: "iVBORw0KGgo=" }] }]);
  });

  it("refuses SVG (it can carry script) and more than eight images", async () => {
    const { sent, composer, $, pick } = setup();
    pick([new File(["<svg onload=alert(1)>"], "x.svg", { type: "image/svg+xml" })]);
    expect($(".hn-composer-error").textContent).toBe("Only PNG, JPEG, GIF and WebP images can be attached; refused: x.svg.");
    pick(Array.from({ length: 9 }, (_, i) => new File([PNG], `p${i}.png`, { type: "image/png" })));
    expect($(".hn-composer-error").textContent).toBe("At most 8 images per message.");
    expect($(".hn-attachments").childElementCount).toBe(8);
    await composer.submit();
    expect((sent[0] as { images: unknown[] }).images).toHaveLength(8);
  });

  it("refuses images over the size limit", () => {
    const { $, pick } = setup();
    const big = new File(["x"], "huge.png", { type: "image/png" });
    Object.defineProperty(big, "size", { value: MAX_IMAGE_BYTES + 1 });
    pick([big]);
    expect($(".hn-composer-error").textContent).toBe("Images must be under 10 MB; refused: huge.png.");
    expect($(".hn-attachments").childElementCount).toBe(0);
  });

  it("takes pasted images and leaves a plain text paste alone", async () => {
    const { sent, composer, textarea } = setup();
    const paste = (files: File[]) => {
      const event = new Event("paste", { cancelable: true });
      Object.defineProperty(event, "clipboardData", { value: { files } });
      textarea.dispatchEvent(event);
      return event;
    };
    expect(paste([]).defaultPrevented).toBe(false);
    expect(paste([new File([PNG], "", { type: "image/png" })]).defaultPrevented).toBe(true);
    await composer.submit();
    expect(sent).toEqual([{ type: "send", text: "", images: [{ mime: "image/png", data: "iVBORw0KGgo=" }] }]);
  });

  it("removes an attachment with its button", async () => {
    const { sent, composer, textarea, $, pick } = setup();
    pick([new File([PNG], "a.png", { type: "image/png" })]);
    $<HTMLButtonElement>(".hn-attachment-remove").click();
    textarea.value = "no image";
    await composer.submit();
    expect(sent).toEqual([{ type: "send", text: "no image", images: [] }]);
  });

  it("has labelled, real buttons", () => {
    const { composer } = setup();
    for (const button of Array.from(composer.el.querySelectorAll("button"))) {
      expect(button.type).toBe("button");
      expect(button.getAttribute("aria-label") ?? button.textContent).not.toBe("");
    }
  });
});
