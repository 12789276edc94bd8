/**
 * Who runs when: a project's queries one at a time, in the order they came, and at most `slots` queries of all
 * projects at once (the sandbox's connections: SANDBOX_CONNECTIONS in core/clickhouse). So a project that sends ten
 * 30-second queries waits for its own, and holds one connection, not every one.
 * Per process: in scale mode each web process keeps its own lanes.
 */
export class QueryLanes {
  private readonly tails = new Map<number, Promise<void>>();
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly slots: number) {}

  async run<T>(projectId: number, op: () => Promise<T>): Promise<T> {
    const before = this.tails.get(projectId) ?? Promise.resolve();
    let done!: () => void;
    const tail = before.then(() => new Promise<void>((r) => (done = r)));
    this.tails.set(projectId, tail);
    try {
      await before;
      await this.take();
      try {
        return await op();
      } finally {
        this.give();
      }
    } finally {
      // `done` is set once `before` settled, which it has by now.
      done();
      if (this.tails.get(projectId) === tail) this.tails.delete(projectId);
    }
  }

  private take(): Promise<void> {
    if (this.running < this.slots) {
      this.running++;
      return Promise.resolve();
    }
    return new Promise((r) => this.waiting.push(r));
  }

  private give(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.running--;
  }
}
