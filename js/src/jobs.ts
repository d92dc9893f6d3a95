// anywidget entry for hermes_notebook.widgets.Jobs (bundled to hermes_notebook/static/jobs.js).
// The view lives in ./jobs/view.ts; the pure logic in ./jobs/logic.ts (tested with vitest).

import type { RenderProps } from "./types/widget";
import type { JobsState } from "./types/jobs";
import { JobsView } from "./jobs/view";

export type { JobRow, JobsState } from "./types/jobs";
export { JobsView } from "./jobs/view";

function render({ model, el }: RenderProps<JobsState>): () => void {
  const view = new JobsView(model);
  el.append(view.root);
  return () => view.dispose();
}

export default { render };
