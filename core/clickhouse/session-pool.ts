/**
 * How several chDB sessions (connections) on one data directory share one database's queries: chDB runs one query
 * at a time per session, so with one a quick page waited for any slow read (a run of 20,000 spans) in front of it.
 * Writes all go to the first session, and so does a query issued while a write is under way: it runs after the
 * write, as on a single connection (the pipeline's look-ups beside its own inserts rely on that order to hold run
 * versions back). Other queries take the least busy of the others. The embedded adapter (chdb.ts) and the
 * development endpoint deploy/clickhouse/chdb-http.ts both route this way.
 */
export class SessionPool<S> {
  private readonly busy: number[];
  private writing = 0;

  constructor(readonly sessions: readonly S[]) {
    if (sessions.length === 0) throw new Error("a session pool needs a session");
    this.busy = sessions.map(() => 0);
  }

  async write<T>(op: (session: S) => Promise<T>): Promise<T> {
    this.writing++;
    try {
      return await this.on(0, op);
    } finally {
      this.writing--;
    }
  }

  read<T>(op: (session: S) => Promise<T>): Promise<T> {
    if (this.writing > 0) return this.on(0, op);
    let pick = this.sessions.length > 1 ? 1 : 0;
    for (let i = 2; i < this.sessions.length; i++) if (this.busy[i]! < this.busy[pick]!) pick = i;
    return this.on(pick, op);
  }

  private async on<T>(i: number, op: (session: S) => Promise<T>): Promise<T> {
    this.busy[i]!++;
    try {
      return await op(this.sessions[i]!);
    } finally {
      this.busy[i]!--;
    }
  }
}
