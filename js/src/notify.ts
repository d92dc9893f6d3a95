// Notebook notifications: "a job finished a run", "Hermes is waiting for your approval".
// JupyterLab 4 and Notebook 7 expose their command registry as `window.jupyterapp`; the `apputils:notify`
// command shows a toast in the corner, wherever the user has scrolled. Where there is no such command
// (VS Code, Colab, classic notebook), nothing happens and the widget's own notice line still says it.

type Kind = "info" | "warning" | "success" | "error";

interface Commands {
  hasCommand(id: string): boolean;
  execute(id: string, args: Record<string, unknown>): Promise<unknown>;
}

/** Show a notebook notification; true when the host application took it. */
export function notify(message: string, kind: Kind = "info", host: unknown = globalThis): boolean {
  const commands = (host as { jupyterapp?: { commands?: Commands } }).jupyterapp?.commands;
  if (!commands || typeof commands.hasCommand !== "function" || !commands.hasCommand("apputils:notify")) return false;
  commands.execute("apputils:notify", { message, type: kind, options: { autoClose: 10000 } }).catch(() => undefined);
  return true;
}

import { reveal } from "./chat/reveal";

/** The toast's words for a command Hermes partly hid (the card says the same: chat/interactions.ts). */
const MASKED = "Hermes hid part of this command";

interface PendingLike {
  id: string;
  readonly role?: string;
  readonly status?: string;
  readonly parts: readonly {
    id: string;
    interaction: {
      kind: string; status: string; request_id: string; command: string | null; question: string | null; masked?: boolean;
    } | null;
  }[];
}

/** Tells about each newly pending interaction once, only while `el` is off-screen (otherwise the buttons show it). */
export function createPendingNotifier(el: HTMLElement, host: unknown = globalThis): (messages: readonly PendingLike[]) => void {
  const told = new Set<string>();
  return (messages) => {
    // Only the open turn can hold a pending prompt (a turn's end cancels them): walk back from the newest
    // message and stop at the first settled reply, so a batch costs the same at 10 or 10,000 messages.
    let start = messages.length;
    while (start > 0 && !settledReply(messages[start - 1]!)) start--;
    for (const message of messages.slice(start)) {
      for (const part of message.parts) {
        const inter = part.interaction;
        if (!inter || inter.status !== "pending") continue;
        const key = `${message.id}/${part.id}/${inter.request_id}`;
        if (told.has(key)) continue;
        told.add(key);
        if (isOnScreen(el)) continue;
        // Shown as it will run (hidden characters made visible, nothing replaced), cut to a toast's length.
        const what = reveal(inter.command ?? inter.question ?? "");
        const label = inter.kind === "approval" ? "your approval" : inter.kind === "clarify" ? "an answer" : `a ${inter.kind}`;
        const hid = inter.masked ? ` (${MASKED}; what runs is not fully shown)` : "";
        notify(`Hermes is waiting for ${label}${hid}${what ? `: ${what.slice(0, 80)}` : ""}`, "warning", host);
      }
    }
  };
}

const SETTLED = new Set(["complete", "interrupted", "error", "cancelled"]);

function settledReply(message: PendingLike): boolean {
  return message.role === "assistant" && message.status !== undefined && SETTLED.has(message.status);
}

function isOnScreen(el: HTMLElement): boolean {
  if (typeof document !== "undefined" && document.visibilityState === "hidden") return false;
  if (!el.isConnected) return false;
  const rect = el.getBoundingClientRect();
  const height = (globalThis as { innerHeight?: number }).innerHeight ?? 0;
  if (rect.width === 0 && rect.height === 0) return false;
  return rect.bottom > 0 && rect.top < height;
}
