// One page at a time shows a shelf's pending changes. A duplicated browser tab copies the tab's sessionStorage, so
// the copy would find the changes still waiting in the first tab and offer a second Keep for each (two Keeps of one
// insertion: the cell twice). Each shelf entry therefore names its holder (a random token), and the page showing
// those changes holds a lock of that name for as long as it lives: a reloaded page (the old one gone) takes the lock
// and the changes back; a duplicate (the holder still open in its tab) cannot, and starts an empty shelf of its own.
// The lock is the browser's Web Locks API; where a page lacks it (an http:// page on another host is not a secure
// context), a BroadcastChannel asks the tabs of the same origin whether one holds the name.

/** Locks that live as long as the page holding them. */
export interface TabLocks {
  /** Take the lock `name` and hold it until this page ends (true also when this page holds it already: a notebook
   * closed and opened again in the tab); false when another page still holds it after `waitMs` (a reloaded page may
   * find its predecessor's lock a moment before the browser frees it). */
  hold(name: string, waitMs: number): Promise<boolean>;
}

export const LOCK_PREFIX = "hermes-notebook:shelf:";
/** How long a loading page waits for a shelf's lock before it leaves those changes to the tab that holds them. */
export const CLAIM_WAIT_MS = 1_500;

/** A new holder token (random; not a secret, it only tells two tabs' shelves apart). */
export function newHolder(): string {
  return Math.random().toString(36).slice(2, 10) + Date.now().toString(36);
}

/** The page's locks: Web Locks, else a BroadcastChannel, else none (each page then takes its shelf back, as before). */
export function tabLocks(): TabLocks | null {
  const locks = (globalThis.navigator as Navigator | undefined)?.locks;
  if (locks !== undefined && typeof locks.request === "function") return new WebLocks(locks);
  if (typeof globalThis.BroadcastChannel === "function") return new ChannelLocks(new BroadcastChannel(LOCK_PREFIX));
  return null;
}

class WebLocks implements TabLocks {
  private readonly held = new Set<string>();

  constructor(private readonly locks: LockManager) {}

  hold(name: string, waitMs: number): Promise<boolean> {
    if (this.held.has(name)) return Promise.resolve(true);
    return new Promise((resolve) => {
      const options: LockOptions = waitMs > 0 ? { signal: AbortSignal.timeout(waitMs) } : { ifAvailable: true };
      this.locks
        .request(name, options, (lock) => {
          if (lock !== null) this.held.add(name);
          resolve(lock !== null);
          return lock === null ? undefined : new Promise<void>(() => undefined); // held until the page ends
        })
        .catch(() => resolve(false)); // the wait ran out: another page holds it
    });
  }
}

/** Locks by asking: a page holding a name answers any page that asks for it (all of the origin's tabs hear). */
export class ChannelLocks implements TabLocks {
  private readonly held = new Set<string>();

  constructor(private readonly channel: Pick<BroadcastChannel, "postMessage" | "addEventListener" | "removeEventListener">) {
    channel.addEventListener("message", (event) => {
      const asked = (event as MessageEvent).data?.ask;
      if (typeof asked === "string" && this.held.has(asked)) channel.postMessage({ held: asked });
    });
  }

  async hold(name: string, waitMs: number): Promise<boolean> {
    if (this.held.has(name)) return true;
    if (waitMs > 0) {
      let taken = false;
      const heard = (event: Event) => {
        if ((event as MessageEvent).data?.held === name) taken = true;
      };
      this.channel.addEventListener("message", heard);
      this.channel.postMessage({ ask: name });
      await new Promise((resolve) => setTimeout(resolve, Math.min(waitMs, 500)));
      this.channel.removeEventListener("message", heard);
      if (taken) return false;
    }
    this.held.add(name);
    return true;
  }
}
