// Builders for contract-shaped dicts (docs/architecture.md), with every field present.

import type { Interaction, Message, Part } from "../src/types/turns";

import type { ChatState, IndexEntry } from "../src/types/chat";

export function part(fields: Partial<Part> & Pick<Part, "id" | "kind">): Part {
  return {
    text: "",
    name: null,
    status: null,
    arguments: null,
    preview: null,
    result: null,
    duration: null,
    interaction: null,
    ...fields,
  };
}

export const textPart = (id: string, text: string): Part => part({ id, kind: "text", text });

export function toolPart(id: string, fields: Partial<Part> = {}): Part {
  return part({ id, kind: "tool", name: "terminal", status: "running", ...fields });
}

export function message(fields: Partial<Message> & Pick<Message, "id">): Message {
  return { role: "assistant", status: "streaming", parts: [], usage: null, error: null, ...fields };
}

export function userMessage(turn: string, text: string): Message {
  return message({ id: `user:${turn}`, role: "user", status: "complete", parts: [textPart("text:0", text)] });
}

export function interaction(fields: Partial<Interaction> & Pick<Interaction, "kind">): Interaction {
  return {
    request_id: "req-1",
    status: "pending",
    command: null,
    question: null,
    description: null,
    choices: [],
    response: null,
    ...fields,
  };
}

export function chatState(fields: Partial<ChatState> = {}): ChatState {
  return {
    settled_seq: 0,
    session: { id: "s1", title: "First session" },
    connection: { status: "connected", retry_in: null, message: null },
    busy: false,
    queued: 0,
    notice: "",
    ...fields,
  };
}

/** The index entry of a message at revision `rev`. */
export function indexEntry(m: Message, rev: number): IndexEntry {
  return { id: m.id, role: m.role, status: m.status, usage: m.usage, error: m.error, rev };
}
