// Undo with files (actions.ts): which files the last reply's turn changed, asked once per reply when it settles
// (`turn_files`, a question). An answer naming files puts "Undo with files" on that reply (on the view shown now,
// and on any view made later: message views read `files`); an answer saying Hermes takes checkpoints marks the chat
// `data-checkpoints` (Branch with files). A refusal (0.19.0, or not now) shows nothing. Owns: the files by reply,
// the replies already asked about.

import { setAttr } from "../dom";
import type { Messenger } from "../messenger";
import type { ChatModel, TurnFileEntry, TurnFilesMsg, TurnFilesRequest } from "../types/chat";
import type { Message } from "../types/turns";

export interface TurnFiles {
  /** The files each reply's turn changed, where the kernel named some. */
  readonly files: ReadonlyMap<string, readonly TurnFileEntry[]>;
  /** Ask about the newest reply if it settled and was not asked about (not while a turn runs). */
  askFor(messages: readonly Message[]): void;
}

export interface TurnFilesOptions {
  /** Gets `data-checkpoints`. */
  root: HTMLElement;
  /** Offer Undo with files on the reply's view, if one is shown. */
  offer(messageId: string, files: readonly TurnFileEntry[]): void;
}

export function createTurnFiles(model: ChatModel, messenger: Messenger, options: TurnFilesOptions): TurnFiles {
  const files = new Map<string, readonly TurnFileEntry[]>();
  const asked = new Set<string>();
  const show = (msg: TurnFilesMsg): void => {
    setAttr(options.root, "data-checkpoints", msg.checkpoints === true ? "true" : null); // Branch with files
    const named = Array.isArray(msg.files) ? msg.files.filter((f) => f && typeof f.path === "string") : [];
    if (named.length === 0) return;
    files.set(msg.message_id, named);
    options.offer(msg.message_id, named);
  };
  return {
    files,
    askFor(messages) {
      if (model.get("mode") === "turn" || model.get("busy")) return;
      const last = [...messages].reverse().find((m) => m.role === "assistant");
      if (!last || last.status !== "complete" || asked.has(last.id)) return;
      asked.add(last.id);
      // Not offered here (0.19.0) or not now: a refusal shows nothing.
      messenger.ask<TurnFilesRequest>({ type: "turn_files", message_id: last.id }, { answer: show });
    },
  };
}
