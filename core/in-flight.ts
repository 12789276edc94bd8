/**
 * Promises still running, so that a close or an abort can wait for them: chDB's session must not be closed under
 * native work (core/clickhouse/chdb.ts), and a pipeline thread's successor must not read storage before the dead
 * thread's writes have settled (pipeline/thread/port-server.ts). Their failures stay with whoever awaits them.
 */
export class InFlight {
  private readonly pending = new Set<Promise<void>>();

  /** Tracks `p` until it settles; returns `p` itself. */
  track<T>(p: Promise<T>): Promise<T> {
    const settled = p.then(() => undefined, () => undefined);
    this.pending.add(settled);
    void settled.then(() => this.pending.delete(settled));
    return p;
  }

  /** Resolves once every tracked promise has settled, those tracked while it waits included. */
  async settled(): Promise<void> {
    while (this.pending.size > 0) await Promise.all([...this.pending]);
  }
}
