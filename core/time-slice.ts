/**
 * Cooperative time slicing for long loops on a shared event loop. In the embedded default, ingest, the
 * pipeline and the gateway share one Node event loop: a loop over a 5,000-event batch that never yields
 * stalls every HTTP request for its whole duration. Such loops check `slice.due()` now and then and, when the
 * slice's budget is used up, `await slice.next()`: a setImmediate turn, in which pending I/O (requests,
 * fsync completions) runs first.
 */

/** Default budget of one slice: short enough that ingest latency stays low, long enough to batch well. */
export const SLICE_MS = 3;

/**
 * The budget of a slice on a thread whose event loop nothing else must get promptly: the pipeline's own thread
 * (pipeline/thread/worker.ts), where the only other work is mapping the next part of a batch. There, a step of
 * the part being stored (its plugins, its rows, its frames) runs to its end instead of letting that mapping in
 * every few ms; the mapping (record-handler.ts, in SLICE_MS slices) fills the waits on storage instead.
 */
export const DEDICATED_THREAD_SLICE_MS = 50;

let defaultBudgetMs = SLICE_MS;
/** Sets the budget of slices made without one, for this thread (each thread has its own). */
export function setDefaultSliceMs(ms: number): void {
  defaultBudgetMs = ms;
}

export const nextTurn = (): Promise<void> => new Promise<void>((resolve) => setImmediate(resolve));

export class TimeSlice {
  private start = performance.now();

  constructor(readonly budgetMs: number = defaultBudgetMs) {}

  /** True once this slice has run for its budget. */
  due(): boolean {
    return performance.now() - this.start >= this.budgetMs;
  }

  /** Gives the event loop a turn and starts a new slice. */
  async next(): Promise<void> {
    await nextTurn();
    this.start = performance.now();
  }
}

/** items.map(f) in time slices (checked every 64 items). */
export async function mapInSlices<T, U>(items: readonly T[], f: (item: T) => U, slice = new TimeSlice()): Promise<U[]> {
  const out: U[] = new Array(items.length);
  for (let i = 0; i < items.length; i++) {
    out[i] = f(items[i]!);
    if ((i & 63) === 63 && slice.due()) await slice.next();
  }
  return out;
}
