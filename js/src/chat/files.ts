// File attachments beside images: which files the composer takes (PDFs and text files), reading them, and
// dropping files on the composer. The kernel checks again what a file holds (client/dashboard/files.py:
// a PDF by its first bytes, text as UTF-8) and stages it on the Dashboard (file.attach / pdf.attach).

import type { FileAttachment } from "../types/chat";

/** Largest file a view sends, before base64 (widgets/inbound.py MAX_VIEW_FILE_BYTES). */
export const MAX_FILE_BYTES = 10 * 1024 * 1024;
/** Files per prompt (client/dashboard/files.py MAX_FILES). */
export const MAX_FILES = 8;

const TEXT_TYPES = ["application/json", "application/xml", "application/x-yaml", "application/yaml", "application/toml",
  "application/x-sh", "application/javascript", "application/sql", "application/x-ipynb+json"];
const TEXT_SUFFIXES = [".txt", ".md", ".csv", ".tsv", ".json", ".jsonl", ".yaml", ".yml", ".toml", ".ini", ".cfg",
  ".log", ".xml", ".html", ".css", ".py", ".ipynb", ".js", ".ts", ".tsx", ".sql", ".sh", ".r", ".rs", ".go",
  ".java", ".c", ".h", ".cpp", ".rst", ".tex"];

/** What the file input offers besides images. */
export const FILE_ACCEPT = ["application/pdf", ".pdf", "text/*", ...TEXT_TYPES, ...TEXT_SUFFIXES].join(",");

/** A PDF or a text file (by type, else by name); anything else is refused before it is read. */
export function isDocument(file: File): boolean {
  const name = file.name.toLowerCase();
  if (file.type === "application/pdf" || name.endsWith(".pdf")) return true;
  if (file.type.startsWith("text/") || TEXT_TYPES.includes(file.type)) return true;
  return (file.type === "" || file.type === "application/octet-stream") && TEXT_SUFFIXES.some((s) => name.endsWith(s));
}

/** Read a file as base64 (without the `data:` prefix), with its name. */
export async function readFile(file: File): Promise<FileAttachment> {
  return { name: file.name || "attachment.txt", data: toBase64(new Uint8Array(await file.arrayBuffer())) };
}

export function toBase64(bytes: Uint8Array): string {
  let binary = "";
  const chunk = 0x8000; // String.fromCharCode has an argument limit
  for (let i = 0; i < bytes.length; i += chunk) binary += String.fromCharCode(...bytes.subarray(i, i + chunk));
  return btoa(binary);
}

/** Files dropped on `el` go to `add`; returns the cleanup. */
export function acceptDrops(el: HTMLElement, add: (files: File[]) => void): () => void {
  const over = (event: DragEvent): void => {
    if (!event.dataTransfer?.types.includes("Files")) return;
    event.preventDefault();
    el.dataset.dropping = "true";
  };
  const leave = (): void => {
    delete el.dataset.dropping;
  };
  const drop = (event: DragEvent): void => {
    const files = Array.from(event.dataTransfer?.files ?? []);
    leave();
    if (files.length === 0) return;
    event.preventDefault();
    add(files);
  };
  el.addEventListener("dragover", over);
  el.addEventListener("dragleave", leave);
  el.addEventListener("drop", drop);
  return () => {
    el.removeEventListener("dragover", over);
    el.removeEventListener("dragleave", leave);
    el.removeEventListener("drop", drop);
  };
}
