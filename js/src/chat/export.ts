// The chat header's Export control: a format picker and a button. The kernel writes the file next to the
// notebook (hermes_notebook/widgets/chat_export.py) and names it in the notice line; the browser only asks.

import { h } from "../dom";
import type { ChatOutgoing } from "../types/chat";

export const EXPORT_FORMATS: [value: "md" | "html" | "ipynb", label: string][] = [
  ["md", "Markdown"],
  ["html", "HTML"],
  ["ipynb", "Notebook"],
];

export function createExportControl(send: (message: ChatOutgoing) => void): HTMLElement {
  const format = h(
    "select",
    { class: "hn-export-format", "aria-label": "Export format" },
    ...EXPORT_FORMATS.map(([value, label]) => h("option", { value }, label)),
  );
  const button = h(
    "button",
    { type: "button", class: "hn-export", "aria-label": "Export the conversation to a file next to the notebook" },
    "Export",
  );
  button.addEventListener("click", () => {
    const value = EXPORT_FORMATS.find(([v]) => v === format.value)?.[0] ?? "md";
    send({ type: "export", format: value });
  });
  return h("span", { class: "hn-export-control" }, format, button);
}
