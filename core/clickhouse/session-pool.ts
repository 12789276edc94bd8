/**
 * How several chDB sessions (connections) on one data directory share one database's queries: chDB runs one query
 * at a time per session, so with one a quick page waited for any slow read (a run of 20,000 spans) in front of it.
 * Writes all go to the first session, and so does a query issued while a write is under way: it runs after the
 * write, as on a single connection (the pipeline's look-ups beside its own inserts rely on that order to hold run
 * versions back). Other queries take the least busy of the others. The embedded adapter (chdb.ts) and the
 * development endpoint deploy/clickhouse/chdb-http.ts both route this way.
 *
 * A query that fails after it began to answer leaves its partial answer in its chDB session, and the session's next
 * query answers it in front of its own rows (chdb 3.4 / libchdb 26.7: a JSONEachRow read would return another
 * query's rows as its own). So a session's reads go one after the other (chDB runs them so anyway), and after one
 * fails `afterFailure` runs a query of its own on that session, which takes the leftover, before the next read.
 */
export interface SessionPoolOptions<S> {
  /** Run on a session after an operation on it failed, before its next read: a query whose answer is dropped. */
  readonly afterFailure?: (session: S) => Promise<unknown>;
}

export class SessionPool<S> {
  private readonly busy: number[];
  /** Each session's last read, settled: the next one starts after it. */
  private readonly reads: Promise<unknown>[];
  private writing = 0;

  constructor(readonly sessions: readonly S[], private readonly options: SessionPoolOptions<S> = {}) {
    if (sessions.length === 0) throw new Error("a session pool needs a session");
    this.busy = sessions.map(() => 0);
    this.reads = sessions.map(() => Promise.resolve());
  }

  async write<T>(op: (session: S) => Promise<T>): Promise<T> {
    this.writing++;
    try {
      return await this.on(0, op, false);
    } finally {
      this.writing--;
    }
  }

  read<T>(op: (session: S) => Promise<T>): Promise<T> {
    if (this.writing > 0) return this.on(0, op, true);
    let pick = this.sessions.length > 1 ? 1 : 0;
    for (let i = 2; i < this.sessions.length; i++) if (this.busy[i]! < this.busy[pick]!) pick = i;
    return this.on(pick, op, true);
  }

  private async on<T>(i: number, op: (session: S) => Promise<T>, isRead: boolean): Promise<T> {
    const session = this.sessions[i]!;
    const attempt = async (): Promise<T> => {
      try {
        return await op(session);
      } catch (err) {
        if (this.options.afterFailure) await this.options.afterFailure(session).catch(() => {});
        throw err;
      }
    };
    this.busy[i]!++;
    try {
      if (!isRead) return await attempt();
      const done = this.reads[i]!.then(attempt);
      this.reads[i] = done.catch(() => {});
      return await done;
    } finally {
      this.busy[i]!--;
    }
  }
}
