// A part's images (chat/images.ts) and a tool part's risk badge (chat/risk.ts): what loads, what is text.

import { afterEach, describe, expect, it } from "vitest";

import { imageSrc, renderImages, withoutMediaTags } from "../src/chat/images";
import { renderRisk, riskText } from "../src/chat/risk";
import { createChatView } from "../src/chat/view";
import type { ImageRef, Part } from "../src/types/turns";

import type { ChatState, ImageMsg } from "../src/types/chat";
import { FakeModel } from "./fake-model";
import { chatState, message, part, toolPart } from "./fixtures";

const A = "assistant:t1";
const PNG = "iVBORw0KGgoAAAANSUhEUg==";
const ids = { message_id: A, part_id: "text:1" };

function ref(fields: Partial<ImageRef>): ImageRef {
  return { source: "inline", mime: "image/png", data: PNG, path: null, url: null, alt: "chart.png", bytes: 2048, note: null, ...fields };
}

function chat(parts: Part[]) {
  const model = new FakeModel<ChatState>(chatState());
  const host = document.createElement("div");
  document.body.append(host);
  const frames: (() => void)[] = [];
  createChatView(model, host, { schedule: (cb) => (frames.push(cb), () => undefined) });
  const flush = () => frames.splice(0).forEach((cb) => cb());
  model.kernelSend({ type: "snapshot", seq: 1, messages: [message({ id: A, parts })] });
  flush();
  return { model, host, flush };
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 0));

afterEach(() => document.body.replaceChildren());

describe("a part's images", () => {
  it("shows an inline image as a data: URL built here, and only PNG, JPEG, GIF or WebP base64", () => {
    expect(imageSrc("image/png", PNG)).toBe(`data:image/png;base64,${PNG}`);
    expect(imageSrc("image/svg+xml", PNG)).toBeNull();
    expect(imageSrc("image/png", 'x" onerror="alert(1)')).toBeNull();
    const slot = document.createElement("div");
    renderImages(slot, [ref({}), ref({ mime: "image/svg+xml", alt: "svg" }), ref({ data: null, note: "not shown: 9 MB", alt: "big" })], ids);
    expect(Array.from(slot.querySelectorAll("img")).map((i) => i.getAttribute("src"))).toEqual([`data:image/png;base64,${PNG}`]);
    expect(slot.querySelector("img")!.getAttribute("alt")).toBe("chart.png");
    const states = Array.from(slot.querySelectorAll<HTMLElement>(".hn-image")).map((f) => f.dataset.state);
    expect(states).toEqual(["shown", "unshown", "unshown"]);
    expect(slot.textContent).toContain("Image not shown: not shown: 9 MB");
    renderImages(slot, undefined, ids);
    expect(slot.hidden).toBe(true);
  });

  it("never loads a remote image: a link naming its host, opened in a new tab only by the user; alt text stays text", () => {
    const slot = document.createElement("div");
    const hostile = '<img src=x onerror="alert(1)">';
    renderImages(slot, [ref({ source: "remote", mime: null, data: null, url: "https://evil.example/p.png", alt: hostile }),
      ref({ source: "remote", mime: null, data: null, url: "javascript:alert(1)", alt: "js" })], ids);
    expect(slot.querySelectorAll("img")).toHaveLength(0);
    const links = Array.from(slot.querySelectorAll<HTMLAnchorElement>("a.hn-image-link"));
    expect(links.map((a) => [a.getAttribute("href"), a.target, a.rel, a.textContent])).toEqual([
      ["https://evil.example/p.png", "_blank", "noopener noreferrer nofollow", "open it on evil.example ↗"]]);
    expect(slot.querySelector(".hn-image-caption")!.textContent).toContain(hostile);
  });

  it("asks the kernel once for a media image and shows the answer's bytes; a refusal says why", async () => {
    const asked: unknown[] = [];
    const answers: ((msg: ImageMsg) => void)[] = [];
    const ask = (q: unknown) => (asked.push(q), new Promise<ImageMsg>((resolve) => answers.push(resolve)));
    const slot = document.createElement("div");
    const media = [ref({ source: "media", mime: "image/png", data: null, path: "/h/images/a.png", alt: "a.png" })];
    renderImages(slot, media, ids, ask);
    renderImages(slot, media, ids, ask); // the same refs again (another batch): not asked twice
    expect(asked).toEqual([{ type: "image", ...ids, index: 0 }]);
    expect(slot.querySelector(".hn-image-waiting")!.textContent).toBe("Loading the image from Hermes…");
    answers[0]!({ type: "image", mime: "image/png", data: PNG });
    await settle();
    expect(slot.querySelector("img")!.getAttribute("src")).toBe(`data:image/png;base64,${PNG}`);
    const failing = document.createElement("div");
    renderImages(failing, media, ids, () => Promise.reject(new Error("the image '/h/x.png' is outside the Hermes media folders")));
    await settle();
    expect(failing.querySelector("img")).toBeNull();
    expect(failing.textContent).toContain("Image not shown: the image '/h/x.png' is outside the Hermes media folders");
  });

  it("asks for a media image only once it comes near the screen (a long history reads no file it does not show)", () => {
    const observed: { callback: (entries: { isIntersecting: boolean }[]) => void; els: Element[] }[] = [];
    class FakeObserver {
      els: Element[] = [];
      constructor(readonly callback: (entries: { isIntersecting: boolean }[]) => void) { observed.push(this); }
      observe(el: Element) { this.els.push(el); }
      disconnect() { this.els = []; }
    }
    const original = globalThis.IntersectionObserver;
    globalThis.IntersectionObserver = FakeObserver as unknown as typeof IntersectionObserver;
    try {
      const asked: unknown[] = [];
      const slot = document.createElement("div");
      renderImages(slot, [ref({ source: "media", data: null, path: "/h/images/a.png" })], ids,
        (q) => (asked.push(q), new Promise<ImageMsg>(() => undefined)));
      expect(asked).toEqual([]);
      observed[0]!.callback([{ isIntersecting: false }]);
      expect(asked).toEqual([]);
      observed[0]!.callback([{ isIntersecting: true }]);
      observed[0]!.callback([{ isIntersecting: true }]);
      expect(asked).toEqual([{ type: "image", ...ids, index: 0 }]);
    } finally {
      globalThis.IntersectionObserver = original;
    }
  });

  it("in the chat: a text part's media image is asked for with a request id and shown from the kernel's answer", async () => {
    const media = ref({ source: "media", data: null, path: "/h/images/a.png", alt: "a.png" });
    const { model, host } = chat([part({ id: "text:1", kind: "text", text: "Here:\n\nMEDIA:/h/images/a.png", images: [media] })]);
    const [question] = model.sentOfType("image");
    expect(question).toMatchObject({ type: "image", message_id: A, part_id: "text:1", index: 0 });
    expect(typeof question!.request).toBe("string");
    model.kernelSend({ type: "image", request: question!.request, mime: "image/png", data: PNG });
    await settle();
    expect(host.querySelector(".hn-part-text .hn-image img")!.getAttribute("src")).toBe(`data:image/png;base64,${PNG}`);
  });
});

describe("a tool part's risk badge", () => {
  it("names the level and lists the findings as text", () => {
    const slot = document.createElement("div");
    const findings = ["prompt_injection", "<b onmouseover=alert(1)>role_hijack</b>"];
    renderRisk(slot, { level: "high", findings, redacted: false });
    expect(slot.hidden).toBe(false);
    expect(slot.dataset.level).toBe("high");
    expect(slot.querySelector(".hn-risk-label")!.textContent).toBe("⚠ Risky output");
    expect(Array.from(slot.querySelectorAll(".hn-risk-finding")).map((li) => li.textContent)).toEqual(findings);
    expect(slot.querySelector("b")).toBeNull();
    expect(riskText({ level: "untrusted", findings: [], redacted: false })).toBe("Marked untrusted for the model");
    renderRisk(slot, undefined);
    expect(slot.hidden).toBe(true);
  });

  it("shows on the tool part in the chat", () => {
    const { host } = chat([toolPart("tool:1", { name: "mcp__notebook__describe", status: "completed",
      risk: { level: "high", findings: ["prompt_injection"], redacted: false } })]);
    const badge = host.querySelector<HTMLElement>(".hn-tool .hn-risk")!;
    expect(badge.hidden).toBe(false);
    expect(badge.getAttribute("aria-label")).toBe("Risky output: prompt_injection");
  });
});

describe("what a newcomer reads on a part (issue 40)", () => {
  it("a tool part shows its label, its kernel result as text and the untrusted note; no message key", () => {
    const { host } = chat([toolPart("tool:1", {
      name: "mcp__notebook_2f7ef78f__describe", preview: "display.preview.x_y", status: "completed",
      label: { name: "notebook: describe", detail: "sales" },
      result: { result: "sales (DataFrame):\nrevenue: float64" },
      risk: { level: "low", findings: [], redacted: false },
    })]);
    expect(host.querySelector(".hn-tool-name")!.textContent).toBe("notebook: describe");
    expect(host.querySelector(".hn-tool-preview")!.textContent).toBe("sales");
    expect(host.querySelector(".hn-tool-result-body")!.textContent).toBe("sales (DataFrame):\nrevenue: float64");
    expect(host.querySelector(".hn-risk-label")!.textContent).toBe("Marked untrusted for the model");
    expect(host.textContent).not.toContain("display.preview");
  });

  it("a text part drops the MEDIA: tag of an image it shows, and keeps other text", () => {
    const path = "/home/h/images/chart (1).png";
    const images: ImageRef[] = [{ source: "media", mime: "image/png", data: null, path, url: null, alt: "chart (1).png", bytes: null, note: null }];
    expect(withoutMediaTags(`Here is the image:\n\nMEDIA:${path}`, images)).toBe("Here is the image:");
    expect(withoutMediaTags("see MEDIA:`/other.png` too", images)).toBe("see MEDIA:`/other.png` too");
    const { host } = chat([part({ id: "text:0", kind: "text", text: `Here is the image:\n\nMEDIA:${path}`, images })]);
    expect(host.querySelector(".hn-part-text .hn-markdown")!.textContent).not.toContain("MEDIA:");
    expect(host.querySelector(".hn-image")).not.toBeNull();
  });
});
