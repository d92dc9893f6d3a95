// The questions of both widgets and their answers: what `invoke` (js/src/invoke.ts) waits for, by the question's
// `type`. Mirrored by hermes_notebook/widgets/messages.py `QUESTIONS` (tests/test_contract.py).

import type {
  BundleMsg,
  ChatQuestion,
  CommandOutputMsg,
  CommandsMsg,
  ImageMsg,
  ProfilesMsg,
  SessionsMsg,
  SubagentControlsMsg,
  TurnFilesMsg,
  BranchFilesMsg,
} from "./chat";
import type {
  ActionResultMsg,
  JobErrorsMsg,
  JobsQuestion,
  PromptMsg,
  RunsResultMsg,
  SaveResultMsg,
  ScheduleCheckMsg,
  TranscriptResultMsg,
} from "./jobs";

/** Each question's answer, by the question's `type` (both widgets). */
export interface Answers {
  list_sessions: SessionsMsg;
  commands: CommandsMsg;
  command: CommandOutputMsg;
  image: ImageMsg;
  profiles: ProfilesMsg;
  turn_files: TurnFilesMsg;
  branch_files: BranchFilesMsg;
  subagent_controls: SubagentControlsMsg;
  bundle: BundleMsg;
  check_schedule: ScheduleCheckMsg;
  save: SaveResultMsg;
  reproduce: SaveResultMsg;
  action: ActionResultMsg;
  get_prompt: PromptMsg;
  job_errors: JobErrorsMsg;
  runs: RunsResultMsg;
  transcript: TranscriptResultMsg;
}
export type Question = ChatQuestion | JobsQuestion;
