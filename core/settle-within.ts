/**
 * The value of `work`, or `fallback` when it rejects or has not settled within `ms`: for probes that must answer
 * in bounded time whatever a dependency does (the pipeline's storage probe, /healthz's dead-letter count).
 */
export async function settleWithin<T>(work: Promise<T>, ms: number, fallback: T): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<T>((resolve) => (timer = setTimeout(() => resolve(fallback), ms)));
  try {
    return await Promise.race([work.catch(() => fallback), late]);
  } finally {
    clearTimeout(timer);
  }
}
