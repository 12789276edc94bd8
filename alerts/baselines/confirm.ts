/**
 * An anomaly fires only once its metric has stayed out of band for a while (RUNWATCH_ANOMALY_CONFIRM_MS, 1 min): on
 * every sweep since one at least that long ago (a sweep runs every 15 s; bench:baselines judges once a simulated minute, so there it means two
 * consecutive sweeps). A single out-of-band judgement is most often one slow or failed run entering a small window;
 * a real step stays out. An open episode is not held back: it resolves on the first sweep back in band.
 *
 * The memory is this process's: the sweep runs in the one process holding the sweep lease, and when the lease moves
 * the new holder starts counting afresh (a firing is then at most that much later, never lost or doubled: the
 * episode itself is in alert_firings). Keys are deleted when back in band, so the map holds at most one entry per
 * rule and agent.
 */
export class OutOfBandSince {
  private readonly since = new Map<string, number>();

  /** Records one judgement of `key` at `now`; true when it has been out of band for at least `confirmMs`. */
  confirmed(key: string, outside: boolean, now: number, confirmMs: number): boolean {
    if (!outside) {
      this.since.delete(key);
      return false;
    }
    const first = this.since.get(key);
    if (first === undefined) this.since.set(key, now);
    return now - (first ?? now) >= confirmMs;
  }
}
