// anywidget entry for hermes_notebook.widgets.Jobs (bundled to hermes_notebook/static/jobs.js).
// A small read-only table of the `jobs` traitlet; actions come later.

import { h } from "./dom";
import type { AnyModel, RenderProps } from "./types";

export interface JobRow {
  name?: unknown;
  schedule?: unknown;
  state?: unknown;
  [key: string]: unknown;
}

export interface JobsState {
  jobs: JobRow[];
}

const COLUMNS = ["name", "schedule", "state"] as const;

function cell(value: unknown): string {
  if (value === null || value === undefined) return "";
  if (typeof value === "string") return value;
  return JSON.stringify(value);
}

/** Rebuild the table body from the `jobs` list. */
export function renderJobs(tbody: HTMLTableSectionElement, jobs: readonly JobRow[]): void {
  if (jobs.length === 0) {
    tbody.replaceChildren(h("tr", {}, h("td", { colspan: COLUMNS.length, class: "hn-jobs-empty" }, "No jobs.")));
    return;
  }
  tbody.replaceChildren(
    ...jobs.map((job) =>
      h(
        "tr",
        { class: "hn-job", "data-state": cell(job.state) },
        ...COLUMNS.map((column) => h("td", { class: `hn-job-${column}` }, cell(job[column]))),
      ),
    ),
  );
}

function render({ model, el }: RenderProps<JobsState>): () => void {
  const tbody = h("tbody");
  const table = h(
    "table",
    { class: "hn-jobs" },
    h("caption", {}, "Hermes cron jobs"),
    h("thead", {}, h("tr", {}, ...COLUMNS.map((c) => h("th", { scope: "col" }, c[0]!.toUpperCase() + c.slice(1))))),
    tbody,
  );
  el.append(table);
  const update = (): void => renderJobs(tbody, (model as AnyModel<JobsState>).get("jobs") ?? []);
  model.on("change:jobs", update);
  update();
  return () => {
    model.off("change:jobs", update);
    table.remove();
  };
}

export default { render };
