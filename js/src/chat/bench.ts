// Hidden hooks for benchmarks/bench_streaming_browser.py (never set by users or the widget itself).
//
// A page sets `window.__hnBench = { naive: boolean, samples: [] }` before a view is created:
// - `naive: true` makes that view render the way chat widgets commonly do (and this one did): every
//   text part fully re-rendered and re-highlighted per update, and the scroll-follow reading
//   scrollHeight right after each update (a forced layout); the baseline the benchmark compares with;
// - while `samples` is an array, each applied batch pushes {ms, chars}: main-thread time of the render
//   plus the style and layout it causes (forced at once, only while measuring), and the text size.

export interface BenchSample {
  /** render + style + layout */
  ms: number;
  /** the render alone (script) */
  script: number;
  chars: number;
  /** which view (1, 2, ... in creation order among views sharing these hooks) */
  view: number;
}

interface BenchHooks {
  naive?: boolean;
  samples?: BenchSample[];
  /** views created with these hooks so far */
  views?: number;
}

/** The benchmark's hooks, or null in normal use. */
export function benchHooks(): BenchHooks | null {
  const hooks = (globalThis as { __hnBench?: unknown }).__hnBench;
  return typeof hooks === "object" && hooks !== null ? (hooks as BenchHooks) : null;
}
