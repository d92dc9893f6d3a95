// hermes-notebook's JupyterLab 4 / Notebook 7 extension: Hermes' cell tools meet the notebook here.
//
// For each notebook panel it registers the comm target the kernel opens when it is shared
// (hermes_notebook/kernel/document.py), says hello on it (and on one already open when the page loads), and answers
// the kernel's requests (notebook/protocol.ts) from the notebook model. Proposed changes wait in a PendingChanges
// store (notebook/pending.ts) and show on their cell as a diff with Keep and Discard (notebook/view.ts): nothing in
// the notebook changes until Keep; they outlive a page reload in the tab (notebook/shelf.ts). The chat's "Show in
// notebook" dispatches REVEAL_EVENT on window; the panel holding that change scrolls to it and focuses it.

import type { JupyterFrontEnd, JupyterFrontEndPlugin } from "@jupyterlab/application";
import type { Cell, CodeCellModel } from "@jupyterlab/cells";
import { INotebookTracker, NotebookActions, type NotebookPanel } from "@jupyterlab/notebook";
import type { Kernel, KernelMessage } from "@jupyterlab/services";
import type { SharedCell } from "@jupyter/ydoc";
import { type PanelLayout, Widget } from "@lumino/widgets";

import { PendingChanges, type DocCell, type NotebookDoc, type PendingChange } from "./notebook/pending";
import { answer, PROTOCOL, requestFor, TARGET, type Host, type HostCell, type RunOutcome } from "./notebook/protocol";
import { REVEAL_EVENT, type RevealDetail } from "./notebook/reveal";
import { ShelfOwners, TabShelf } from "./notebook/shelf";
import { parseReport, previewPanel, type PreviewState } from "./notebook/preview";
import { tabLocks } from "./notebook/tab_claim";
import { pendingView } from "./notebook/view";

/** The notebook document as the pending-change store sees it: JupyterLab's shared model. */
class LabDoc implements NotebookDoc {
  constructor(private readonly panel: NotebookPanel) {}

  cells(): DocCell[] {
    const model = this.panel.content.model;
    const out: DocCell[] = [];
    if (model === null) return out;
    for (let i = 0; i < model.cells.length; i++) {
      const cell = model.cells.get(i);
      out.push({ id: cell.id, type: cell.type, source: cell.sharedModel.getSource() });
    }
    return out;
  }

  insert(index: number, type: string, source: string): void {
    const cell = { cell_type: type, source, metadata: {} } as SharedCell.Cell;
    this.panel.content.model?.sharedModel.insertCell(index, cell);
  }

  setSource(cellId: string, source: string): void {
    this.cellModel(cellId)?.sharedModel.setSource(source);
  }

  remove(cellId: string): void {
    const index = this.cells().findIndex((cell) => cell.id === cellId);
    if (index >= 0) this.panel.content.model?.sharedModel.deleteCell(index);
  }

  private cellModel(cellId: string) {
    const model = this.panel.content.model;
    if (model === null) return undefined;
    for (let i = 0; i < model.cells.length; i++) if (model.cells.get(i).id === cellId) return model.cells.get(i);
    return undefined;
  }
}

/** The Lumino widget a pending change lives in, inside its cell's layout (above the cell, or below the last). */
class PendingWidget extends Widget {
  shown = "";

  constructor(readonly changeId: string) {
    super();
    this.addClass("hn-pending-host");
  }
}

/** Which view of each notebook keeps its pending changes on the tab's shelf (the first opened). */
const SHELF_OWNERS = new ShelfOwners();
/** The page's locks on its shelves (a duplicated tab's copy of them is not taken back while the first tab lives). */
const TAB_LOCKS = tabLocks();

/** One notebook panel: its comm with the kernel, its pending changes and their views. */
class NotebookSession implements Host {
  readonly store: PendingChanges;
  readonly client: string;
  private comm: Kernel.IComm | null = null;
  private kernel: Kernel.IKernelConnection | null = null;
  private readonly views = new Map<string, PendingWidget>();
  /** Each pending change's preview, by change id (running, or its report). */
  private readonly previews = new Map<string, PreviewState>();
  private frame = 0;
  private savedPath: string;

  constructor(
    private readonly app: JupyterFrontEnd,
    readonly panel: NotebookPanel,
    page: string,
  ) {
    this.client = `${page}:${panel.id}`;
    this.savedPath = panel.context.path;
    const shelf = SHELF_OWNERS.claim(this.savedPath, this) ? new TabShelf(() => panel.context.path) : null;
    this.store = new PendingChanges(new LabDoc(panel), shelf);
    this.store.onChange(() => this.render());
    // Changes proposed before a reload wait again once the cells are loaded (they are matched by cell id), unless
    // another tab still shows them (this tab is its duplicate).
    void panel.context.ready
      .then(() => shelf?.claim(TAB_LOCKS))
      .then(() => {
        if (!panel.isDisposed) this.store.restore();
      });
    panel.context.pathChanged.connect((_, path) => {
      this.send({ type: "path", client: this.client, path }); // the chat header names the notebook
      if (shelf === null) return;
      shelf.forget(this.savedPath);
      SHELF_OWNERS.moved(this.savedPath, path, this);
      this.savedPath = path;
      this.store.persist();
    });
    const context = panel.sessionContext;
    context.kernelChanged.connect((_, change) => this.watch(change.newValue));
    context.statusChanged.connect((_, status) => {
      if (status === "restarting" || status === "autorestarting" || status === "dead") this.comm = null;
    });
    void context.ready.then(() => this.watch(context.session?.kernel ?? null));
    panel.content.modelChanged.connect(() => this.followModel());
    this.followModel();
    panel.disposed.connect(() => this.dispose());
  }

  path(): string {
    return this.panel.context.path;
  }

  cells(): HostCell[] {
    const model = this.panel.content.model;
    const out: HostCell[] = [];
    if (model === null) return out;
    for (let i = 0; i < model.cells.length; i++) {
      const cell = model.cells.get(i);
      const json = cell.toJSON() as { execution_count?: number | null; outputs?: unknown[] };
      out.push({
        id: cell.id,
        type: cell.type,
        source: cell.sharedModel.getSource(),
        execution_count: cell.type === "code" ? (json.execution_count ?? null) : null,
        outputs: cell.type === "code" ? (json.outputs ?? []) : [],
      });
    }
    return out;
  }

  async run(cellId: string): Promise<RunOutcome> {
    const cell = this.panel.content.widgets.find((c) => c.model.id === cellId);
    if (cell === undefined) throw new Error("the cell is gone");
    await NotebookActions.runCells(this.panel.content, [cell], this.panel.sessionContext);
    const json = cell.model.toJSON() as { execution_count?: number | null; outputs?: unknown[] };
    return { execution_count: json.execution_count ?? null, outputs: json.outputs ?? [] };
  }

  restartAndRunAll(): void {
    // The kernel asked after its card's Run; it goes with the restart, so its reply is sent first.
    const { content, sessionContext } = this.panel;
    setTimeout(() => {
      void sessionContext.restartKernel().then(() => NotebookActions.runAll(content, sessionContext));
    }, 0);
  }

  setOutputs(cellId: string, outputs: Record<string, unknown>[]): void {
    const cell = this.panel.content.widgets.find((c) => c.model.id === cellId);
    if (cell === undefined || cell.model.type !== "code") throw new Error("the cell is gone");
    const model = cell.model as CodeCellModel;
    model.outputs.clear();
    for (const output of outputs) model.outputs.add(output as never);
    model.executionCount = null;
  }

  /** Scroll to a pending change and focus it; false when this notebook has no such change. */
  reveal(changeId: string): boolean {
    const view = this.views.get(changeId);
    if (view === undefined || this.store.get(changeId) === undefined) return false;
    this.app.shell.activateById(this.panel.id);
    const cell = view.parent instanceof Widget && this.panel.content.widgets.includes(view.parent as Cell)
      ? (view.parent as Cell)
      : null;
    const scrolled = cell !== null ? this.panel.content.scrollToCell(cell, "center") : Promise.resolve();
    void scrolled.then(() => {
      view.node.scrollIntoView({ block: "nearest" });
      (view.node.querySelector(".hn-pending") as HTMLElement | null)?.focus();
    });
    return true;
  }

  bye(): void {
    this.send({ type: "bye", client: this.client });
  }

  // --- the comm ----------------------------------------------------------------------------------------------

  private watch(kernel: Kernel.IKernelConnection | null): void {
    if (kernel === this.kernel) return; // already followed (the session's ready and kernelChanged both name it)
    this.kernel = kernel;
    this.comm = null;
    if (kernel === null) return;
    kernel.registerCommTarget(TARGET, (comm) => this.attach(comm));
    // A page that (re)loads while the kernel already shares finds the kernel's comm and says hello on it.
    void kernel
      .requestCommInfo({ target_name: TARGET })
      .then((reply) => {
        const comms = reply.content.status === "ok" ? reply.content.comms : {};
        for (const id of Object.keys(comms)) {
          if (!kernel.hasComm(id) && this.comm === null) this.attach(kernel.createComm(TARGET, id));
        }
      })
      .catch(() => undefined); // a kernel without comm_info: it opens the comm itself when shared
  }

  private attach(comm: Kernel.IComm): void {
    this.comm = comm;
    comm.onMsg = (msg: KernelMessage.ICommMsgMsg) => this.receive(msg.content.data);
    comm.onClose = () => {
      if (this.comm === comm) this.comm = null;
    };
    this.send({
      type: "hello", client: this.client, app: this.app.name === "JupyterLab" ? "lab" : "notebook", protocol: PROTOCOL,
      path: this.panel.context.path,
    });
  }

  private receive(data: unknown): void {
    if (this.previewed(data)) return;
    const request = requestFor(data, this.client);
    if (request === null) return;
    void answer(request, this).then((reply) => this.send({ ...reply, type: "reply", id: request.id, client: this.client }));
  }

  private send(data: Record<string, unknown>): void {
    const comm = this.comm;
    if (comm === null || comm.isDisposed) return;
    try {
      comm.send(data as never);
    } catch {
      this.comm = null; // the kernel went away
    }
  }

  // --- the views -------------------------------------------------------------------------------------------

  private followModel(): void {
    const model = this.panel.content.model;
    if (model === null) return;
    model.cells.changed.connect(() => {
      this.store.sync();
      this.schedule();
    });
    model.contentChanged.connect(() => this.schedule()); // a diff follows the cell the user is typing in
  }

  private schedule(): void {
    if (this.frame !== 0 || this.views.size === 0) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      this.render();
    });
  }

  /** Place every pending change's view on its cell (idempotent), and drop the views of settled changes. */
  private render(): void {
    if (this.panel.isDisposed) return;
    const pending = this.store.all();
    const ids = new Set(pending.map((change) => change.id));
    for (const [id, view] of this.views) {
      if (!ids.has(id)) {
        view.dispose();
        this.views.delete(id);
      }
    }
    const cells = this.panel.content.widgets;
    const above = new Map<Cell, PendingWidget[]>();
    const atEnd: PendingWidget[] = [];
    for (const change of pending) {
      const view = this.viewOf(change);
      const cell = change.cellId === null ? undefined : cells.find((c) => c.model.id === change.cellId);
      if (cell === undefined) atEnd.push(view);
      else above.set(cell, [...(above.get(cell) ?? []), view]);
    }
    for (const [cell, views] of above) {
      const layout = cell.layout as PanelLayout;
      views.forEach((view, i) => {
        if (view.parent === null && view.isAttached) Widget.detach(view);
        if (layout.widgets[i] !== view) layout.insertWidget(i, view);
      });
    }
    const last = cells[cells.length - 1];
    for (const view of atEnd) {
      if (last !== undefined) {
        if (view.parent === null && view.isAttached) Widget.detach(view);
        (last.layout as PanelLayout).addWidget(view); // below the last cell
      } else if (!view.isAttached) {
        Widget.attach(view, this.panel.content.node); // an empty notebook: in it
      }
    }
  }

  private viewOf(change: PendingChange): PendingWidget {
    let view = this.views.get(change.id);
    if (view === undefined || view.isDisposed) {
      view = new PendingWidget(change.id);
      this.views.set(change.id, view);
    }
    const diff = this.store.diff(change);
    const stale = this.store.stale(change);
    const preview = this.previews.get(change.id);
    const key = JSON.stringify([diff.rows, stale, preview ?? null]);
    if (view.shown !== key) {
      view.shown = key;
      const hadFocus = view.node.contains(document.activeElement);
      view.node.replaceChildren(
        pendingView(change, diff, stale, {
          keep: () => this.decide(() => this.store.keep(change.id).ok),
          discard: () => this.decide(() => this.store.discard(change.id)),
          preview: () => this.preview(change),
        }, undefined, preview ? previewPanel(preview, () => this.stopPreview(preview)) : null),
      );
      if (hadFocus) (view.node.querySelector(".hn-pending") as HTMLElement | null)?.focus();
    }
    return view;
  }

  // --- Preview (notebook/preview.ts; the kernel's kernel/preview/clicks.py) ---------------------------------

  /** The user clicked Preview: the kernel runs the proposed source, exactly as the diff shows it, in a copy. */
  private preview(change: PendingChange): void {
    if (this.previews.get(change.id)?.status === "running") return;
    const click = randomId();
    this.previews.set(change.id, { status: "running", click });
    this.send({ type: "preview", client: this.client, id: click, change: change.id, source: change.source });
    this.rerender(change.id);
  }

  private stopPreview(state: PreviewState): void {
    this.send({ type: "preview_stop", client: this.client, id: state.click });
  }

  /** A preview's report from the kernel (true when `data` was one). */
  private previewed(data: unknown): boolean {
    if (typeof data !== "object" || data === null) return false;
    const message = data as Record<string, unknown>;
    if (message.type !== "previewed" || message.to !== this.client) return false;
    const report = parseReport(message.report);
    for (const [id, state] of this.previews) {
      if (state.click === message.id && report !== null) {
        this.previews.set(id, { status: "done", click: state.click, report });
        this.rerender(id);
      }
    }
    return true;
  }

  private rerender(changeId: string): void {
    const view = this.views.get(changeId);
    if (view !== undefined) view.shown = "";
    this.render();
  }

  private decide(act: () => boolean): void {
    act();
    this.panel.content.node.focus(); // the view is gone: keep the keyboard in the notebook
  }

  private dispose(): void {
    this.bye();
    SHELF_OWNERS.release(this.savedPath, this);
    if (this.frame !== 0) cancelAnimationFrame(this.frame);
    for (const view of this.views.values()) view.dispose();
    this.views.clear();
  }
}

function randomId(): string {
  return Math.random().toString(36).slice(2, 10) + Date.now().toString(36);
}

const plugin: JupyterFrontEndPlugin<void> = {
  id: "hermes-notebook:document",
  description: "Hermes' cell tools: proposed cell changes shown as diffs you keep or discard, cells run on your click.",
  autoStart: true,
  requires: [INotebookTracker],
  activate(app: JupyterFrontEnd, tracker: INotebookTracker): void {
    const page = randomId();
    const sessions = new Set<NotebookSession>();
    const follow = (panel: NotebookPanel): void => {
      const session = new NotebookSession(app, panel, page);
      sessions.add(session);
      panel.disposed.connect(() => sessions.delete(session));
    };
    tracker.forEach(follow);
    tracker.widgetAdded.connect((_, panel) => follow(panel));
    window.addEventListener(REVEAL_EVENT, (event) => {
      const change = (event as CustomEvent<Partial<RevealDetail> | null>).detail?.change;
      if (typeof change !== "string") return;
      for (const session of sessions) {
        if (session.reveal(change)) {
          event.preventDefault();
          return;
        }
      }
    });
    // Leaving the page: the kernel withdraws the cell tools (a reloaded page says hello again).
    window.addEventListener("pagehide", () => sessions.forEach((session) => session.bye()));
  },
};

export default plugin;
