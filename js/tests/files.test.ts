import { describe, expect, it } from "vitest";

import { createComposer } from "../src/chat/composer";
import { MAX_FILE_BYTES, isDocument } from "../src/chat/files";
import type { ChatOutgoing } from "../src/types/chat";

function setup() {
  const sent: ChatOutgoing[] = [];
  const composer = createComposer((m) => sent.push(m));
  document.body.replaceChildren(composer.el);
  const $ = <E extends HTMLElement = HTMLElement>(selector: string) => composer.el.querySelector<E>(selector)!;
  const pick = (files: File[]) => {
    const input = $<HTMLInputElement>("input[type=file]");
    Object.defineProperty(input, "files", { configurable: true, value: files });
    input.dispatchEvent(new Event("change"));
  };
  const drop = (files: File[]) => {
    const event = new Event("drop", { cancelable: true });
    Object.defineProperty(event, "dataTransfer", { value: { files, types: ["Files"] } });
    composer.el.dispatchEvent(event);
    return event;
  };
  return { sent, composer, $, pick, drop };
}

const PDF = new TextEncoder().encode("%PDF-1.4\n%%EOF\n");
const b64 = (bytes: Uint8Array) => btoa(String.fromCharCode(...bytes));

describe("file attachments", () => {
  it("sends a PDF and a text file as send_files, named, base64", async () => {
    const { sent, composer, $, pick } = setup();
    pick([new File([PDF], "paper.pdf", { type: "application/pdf" }), new File(["a,b\n1,2\n"], "data.csv", { type: "text/csv" })]);
    expect(Array.from(composer.el.querySelectorAll(".hn-attachment span")).map((e) => e.textContent)).toEqual([
      "paper.pdf",
      "data.csv",
    ]);
    $<HTMLTextAreaElement>("textarea").value = "read these";
    await composer.submit();
    expect(sent).toEqual([
      {
        type: "send_files",
        text: "read these",
        images: [],
        files: [
          { name: "paper.pdf", data: b64(PDF) },
          { name: "data.csv", data: btoa("a,b\n1,2\n") },
        ],
      },
    ]);
  });

  it("takes files dropped on the composer", async () => {
    const { sent, composer, drop } = setup();
    expect(drop([new File(["# notes"], "notes.md", { type: "" })]).defaultPrevented).toBe(true);
    await composer.submit();
    expect(sent).toEqual([{ type: "send_files", text: "", images: [], files: [{ name: "notes.md", data: btoa("# notes") }] }]);
  });

  it("refuses binaries, oversized files and more than eight, saying so", () => {
    const { $, pick } = setup();
    pick([new File(["MZ"], "tool.exe", { type: "application/x-msdownload" })]);
    expect($(".hn-composer-error").textContent).toBe("Only images, PDFs and text files can be attached; refused: tool.exe.");
    const big = new File(["x"], "big.txt", { type: "text/plain" });
    Object.defineProperty(big, "size", { value: MAX_FILE_BYTES + 1 });
    pick([big]);
    expect($(".hn-composer-error").textContent).toBe("Files must be under 10 MB; refused: big.txt.");
    pick(Array.from({ length: 9 }, (_, i) => new File(["t"], `f${i}.txt`, { type: "text/plain" })));
    expect($(".hn-composer-error").textContent).toBe("At most 8 files per message.");
    expect($(".hn-attachments").childElementCount).toBe(8);
  });

  it("shows a hostile file name as text, never markup", () => {
    const { $, pick } = setup();
    const name = '<img src=x onerror="alert(1)">.txt';
    pick([new File(["t"], name, { type: "text/plain" })]);
    expect($(".hn-attachment span").textContent).toBe(name);
    expect($(".hn-attachments").querySelector("img")).toBeNull();
  });

  it("tells documents from other files by type, else by name", () => {
    expect(isDocument(new File([""], "a.PDF", { type: "" }))).toBe(true);
    expect(isDocument(new File([""], "a.py", { type: "" }))).toBe(true);
    expect(isDocument(new File([""], "a.json", { type: "application/json" }))).toBe(true);
    expect(isDocument(new File([""], "a.bin", { type: "application/octet-stream" }))).toBe(false);
    expect(isDocument(new File([""], "a.zip", { type: "application/zip" }))).toBe(false);
  });
});
