// The chat's kernel pieces: the run card (an approved kernel run with Stop), the images a tool sent to the model,
// and the header's permission modes with Revoke.

import { afterEach, describe, expect, it } from "vitest";

import { modesText, revocable } from "../src/chat/kernel_modes";
import xssPayloads from "../../tests/fixtures/xss_payloads.json";
import { renderSentImages } from "../src/chat/sent_images";
import { createChatView } from "../src/chat/view";
import type { Interaction, SentImage } from "../src/types/turns";

import type { ChatState, KernelModes } from "../src/types/chat";
import { FakeModel } from "./fake-model";
import { chatState, interaction, message, toolPart } from "./fixtures";

const A = "assistant:t1";
const TOOL = "tool:call_1";

function chat(parts = [toolPart(TOOL, { name: "mcp__notebook_1__run_code" })], state: Partial<ChatState> = {}) {
  const model = new FakeModel<ChatState>({ ...chatState(), ...state });
  const host = document.createElement("div");
  document.body.append(host);
  const frames: (() => void)[] = [];
  createChatView(model, host, { schedule: (cb) => (frames.push(cb), () => undefined) });
  const flush = () => frames.splice(0).forEach((cb) => cb());
  model.kernelSend({ type: "snapshot", seq: 1, messages: [message({ id: A, parts })] });
  flush();
  return { model, host, flush };
}

afterEach(() => document.body.replaceChildren());

describe("a run card (an approved kernel run in progress)", () => {
  const running: Interaction = interaction({
    kind: "run",
    request_id: "run-2",
    command: "df.plot()",
    description: "Waiting for the running cell In[7] to finish; it runs then (the cell is not interrupted). Stop cancels it.",
    choices: ["stop"],
  });

  it("shows the code, what it waits for and Stop, sends Stop once, and shows how the run ended", () => {
    const { model, host, flush } = chat([toolPart(TOOL, { name: "run_code", interaction: running })]);
    const card = () => host.querySelector<HTMLElement>(".hn-interaction")!;
    expect(card().dataset.kind).toBe("run");
    expect(card().querySelector(".hn-interaction-title")!.textContent).toBe("Hermes' code in your kernel");
    expect(card().querySelector(".hn-interaction-command")!.textContent).toBe("df.plot()");
    expect(card().querySelector(".hn-interaction-description")!.textContent).toContain("Waiting for the running cell In[7]");
    const stop = card().querySelector<HTMLButtonElement>("button")!;
    expect(stop.textContent).toBe("Stop");
    stop.click();
    stop.click();
    expect(model.sentOfType("respond")).toEqual([
      { type: "respond", message_id: A, part_id: TOOL, request_id: "run-2", response: "stop" },
    ]);
    model.kernelSend({ type: "changes", seq: 2, changes: [{ op: "patch", message_id: A, part_id: TOOL,
      fields: { interaction: { ...running, status: "answered", response: "timed_out" } } }] });
    flush();
    expect(card().querySelector(".hn-interaction-outcome")!.textContent).toBe("Stopped at the time limit");
    // Settled: the code and how it ended stay; what it said while running (Stop, its wait) is gone.
    expect(card().querySelector(".hn-interaction-command")!.textContent).toBe("df.plot()");
    expect(card().querySelector(".hn-interaction-description")).toBeNull();
    expect(card().querySelector("button")).toBeNull();
  });

  it("shows the title its owner gave it (a preview runs in a copy), as plain text, in its name too", () => {
    const title = "Hermes' preview in a copy of your kernel <b>x</b>";
    const { host } = chat([toolPart(TOOL, { name: "preview", interaction: { ...running, title } })]);
    const card = host.querySelector<HTMLElement>(".hn-interaction")!;
    expect(card.querySelector(".hn-interaction-title")!.textContent).toBe(title);
    expect(card.querySelector("b")).toBeNull();
    expect(card.getAttribute("aria-label")).toBe(`${title} request`);
  });
});

describe("the images a kernel tool sent to the model", () => {
  const png: SentImage = { mime: "image/png", width: 640, height: 480, bytes: 34_000, label: "In[5] display 1", data: "iVBORw0KGgo=" };

  it("shows exactly the PNGs sent, with size and origin, as data URLs built here; nothing else", () => {
    const slot = document.createElement("div");
    renderSentImages(slot, [png, { ...png, mime: "image/svg+xml", label: "svg" }, { ...png, data: "x\" onerror=\"alert(1)", label: "bad" }]);
    const images = Array.from(slot.querySelectorAll("img"));
    expect(images.map((i) => i.getAttribute("src"))).toEqual(["data:image/png;base64,iVBORw0KGgo="]);
    expect(slot.querySelector("summary")!.textContent).toBe("Sent to the model: 1 image");
    expect(slot.querySelector(".hn-sent-image-label")!.textContent).toBe("In[5] display 1 · 640×480, 33 KB");
    renderSentImages(slot, undefined);
    expect(slot.hidden).toBe(true);
  });

  it("shows on the tool part", () => {
    const { host } = chat([toolPart(TOOL, { name: "read_output", sent_images: [png] })]);
    expect(host.querySelector(".hn-sent-images img")).not.toBeNull();
  });
});

describe("the header's kernel modes", () => {
  const modes: KernelModes = { reads: "on", edits: "propose", runs: "ask", granted: false, server: "notebook_1", cells: true };

  it("says what Hermes may do, hidden while the kernel is not shared", () => {
    expect(modesText(modes)).toBe("kernel: reads on · edits proposed · runs ask");
    expect(modesText({ ...modes, reads: "off", granted: true, edits: "off", runs: "allow" })).toBe(
      "kernel: reads allowed for this session · edits off · runs allowed for this session");
    expect(revocable(modes)).toBe(false);
    expect(revocable({ ...modes, runs: "allow" })).toBe(true);
    const { host } = chat(undefined, { kernel_modes: null });
    expect(host.querySelector<HTMLElement>(".hn-kernel-modes")!.hidden).toBe(true);
  });

  it("offers Revoke only for what was allowed for this session, and sends it once per change", () => {
    const { model, host } = chat(undefined, { kernel_modes: { ...modes, runs: "allow" } });
    const el = host.querySelector<HTMLElement>(".hn-kernel-modes")!;
    expect(el.hidden).toBe(false);
    expect(el.dataset.runs).toBe("allow");
    const revoke = el.querySelector<HTMLButtonElement>(".hn-kernel-revoke")!;
    expect(revoke.hidden).toBe(false);
    revoke.click();
    expect(revoke.disabled).toBe(true);
    expect(model.sentOfType("kernel_revoke")).toEqual([{ type: "kernel_revoke" }]);
    model.set("kernel_modes", { ...modes, runs: "ask" });
    expect(revoke.hidden).toBe(true);
    expect(el.querySelector(".hn-kernel-modes-text")!.textContent).toBe("kernel: reads on · edits proposed · runs ask");
  });

  it("names the notebook the cell tools act on (its path, as text), only while they are on", () => {
    const { model, host } = chat(undefined, { kernel_modes: { ...modes, notebook: "work/analysis.ipynb" } });
    const named = host.querySelector<HTMLElement>(".hn-kernel-notebook")!;
    expect(named.hidden).toBe(false);
    expect(named.textContent).toBe("· cell tools act on work/analysis.ipynb");
    model.set("kernel_modes", { ...modes, cells: false, notebook: "work/analysis.ipynb" });
    expect(named.hidden).toBe(true);
    for (const payload of xssPayloads.payloads) { // a file name is text too
      model.set("kernel_modes", { ...modes, notebook: payload });
      expect(named.textContent).toBe(`· cell tools act on ${payload}`);
      expect(named.childElementCount).toBe(0);
    }
  });
});
