// What the composer sends: a prompt (queued behind a running turn, as always), files, a Hermes command, or, when
// the user chose Steer while a turn runs, `{type: "steer"}`: the text goes into the running turn (Hermes adds it
// to the turn's next tool result) and the turn shows a marker where it went in. Steer carries text only: with
// attachments or a `/command` the message goes the usual way.

import type { ChatOutgoing, FileAttachment, ImageAttachment } from "../types/chat";
import { COMMAND_LINE } from "./slash";

export type SendMode = "queue" | "steer";

export function outgoing(
  text: string,
  images: ImageAttachment[],
  files: FileAttachment[],
  steering: boolean,
): ChatOutgoing {
  if (files.length > 0) return { type: "send_files", text, images, files };
  if (images.length === 0 && COMMAND_LINE.test(text)) return { type: "command", line: text.trim() };
  if (steering && images.length === 0 && text.trim() !== "") return { type: "steer", text };
  return { type: "send", text, images };
}
