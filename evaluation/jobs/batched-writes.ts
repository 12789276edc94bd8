/**
 * The evaluation worker's writes, made together: a job's score row (or its judge run's events) joins those of the jobs
 * finishing in the same few milliseconds, and one ClickHouse insert (one log append) writes them all. One write per
 * job made the per-insert cost of chDB and the per-append fsync of the file log the workers' ceiling. Each job waits
 * for the write that carries its items, so a job is finished only once they are stored; a failed write fails every job
 * in it (each runs again: its score id and event ids are fixed).
 */
export type BatchedWrite<T> = (items: readonly T[]) => Promise<void>;

export function batchedWrites<T>(write: (items: T[]) => Promise<void>, opts: { windowMs?: number; maxItems?: number } = {}): BatchedWrite<T> {
  const windowMs = opts.windowMs ?? 20;
  const maxItems = opts.maxItems ?? 1_000;
  let items: T[] = [];
  let waiting: { resolve: () => void; reject: (err: unknown) => void }[] = [];
  let timer: NodeJS.Timeout | undefined;
  const flush = () => {
    clearTimeout(timer);
    timer = undefined;
    const [batch, settle] = [items, waiting];
    items = [];
    waiting = [];
    write(batch).then(() => settle.forEach((w) => w.resolve()), (err) => settle.forEach((w) => w.reject(err)));
  };
  return (more) =>
    more.length === 0
      ? Promise.resolve()
      : new Promise<void>((resolve, reject) => {
          items.push(...more);
          waiting.push({ resolve, reject });
          if (items.length >= maxItems) flush();
          else timer ??= setTimeout(flush, windowMs);
        });
}
