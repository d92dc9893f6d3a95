// Hermes' slash commands, the chat's side of them: the composer's `/` menu asks for the catalog (`commands`) and a
// `/name ...` line runs a command (`command`), both questions; the answers fill the menu and the output panel
// (slash.ts: .hn-command-output), whose suggested prompt goes back into the composer. The kernel also pushes a
// catalog or an output without a request (a command run from elsewhere). Owns: the output panel.

import type { Messenger } from "../messenger";
import type { CommandMsg, CommandOutputMsg, CommandsMsg, CommandsRequest } from "../types/chat";
import type { Asked } from "../types/widget";
import type { Composer } from "./composer";
import { createCommandOutput } from "./slash";

/** How long a slash command may run before the view stops waiting for its output (ms). */
export const COMMAND_TIMEOUT_MS = 120_000;

export interface Commands {
  /** The output panel (.hn-command-output). */
  readonly el: HTMLElement;
  /** Ask the composer's question: the catalog, or a command's output. */
  ask(question: Asked<CommandsRequest> | Asked<CommandMsg>): void;
}

export function createCommands(messenger: Messenger, composer: Composer): Commands {
  const output = createCommandOutput();
  const catalog = (msg: CommandsMsg): void => composer.setCommands(Array.isArray(msg.commands) ? msg.commands : []);
  const show = (msg: CommandOutputMsg): void => {
    output.show(msg.command, msg.output, msg.warning);
    if (msg.prefill) composer.prefill(msg.prefill);
  };
  messenger.listen("msg:custom", (msg: CommandsMsg | CommandOutputMsg | null) => {
    if (msg?.request !== undefined) return; // an answer: its question's own handler shows it
    if (msg?.type === "commands") catalog(msg);
    else if (msg?.type === "command_output") show(msg);
  });
  return {
    el: output.el,
    ask(question) {
      if (question.type === "commands") {
        messenger.ask<CommandsRequest>(question, { answer: catalog, failed: () => composer.setCommands([]) });
      } else {
        messenger.ask<CommandMsg>(question, {
          answer: show,
          failed: (error) => output.show(question.line, `No output: ${error.message}.`, ""),
        }, { timeout: COMMAND_TIMEOUT_MS });
      }
    },
  };
}
