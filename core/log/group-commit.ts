/**
 * Group commit, shared by both event logs: appends queued while one write round is in flight go together in the
 * next round (one pwrite + fdatasync for the file log, one produce request for Kafka), rounds run one at a time,
 * so concurrent appends share the cost of durability and keep the order in which they were queued. A round
 * starts on the next microtask, so appends made in the same tick join it.
 */

export interface QueuedWrite {
  /** Size counted against the round limit and the queue's pendingBytes. */
  readonly bytes: number;
  /** Already answered (e.g. timed out before its round): skipped if its round has not started. */
  settled: boolean;
  readonly resolve: () => void;
  readonly reject: (err: unknown) => void;
}

export class GroupCommit<W extends QueuedWrite> {
  private queue: W[] = [];
  private queuedBytes = 0;
  private running: Promise<void> | null = null;

  /**
   * @param writeRound makes one round durable; resolving acknowledges every write of the round, throwing
   *   rejects each with the error thrown.
   * @param maxRoundBytes a round takes queued writes up to this size (at least one write).
   */
  constructor(
    private readonly writeRound: (round: readonly W[]) => Promise<void>,
    private readonly maxRoundBytes = Number.POSITIVE_INFINITY,
  ) {}

  /** Bytes queued and not yet taken into a round. */
  get pendingBytes(): number {
    return this.queuedBytes;
  }

  push(write: W): void {
    this.queue.push(write);
    this.queuedBytes += write.bytes;
    this.running ??= Promise.resolve().then(() => this.drain());
  }

  /** Resolves once nothing is queued or being written. */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  private async drain(): Promise<void> {
    try {
      while (this.queue.length > 0) {
        const round: W[] = [];
        let bytes = 0;
        while (this.queue.length > 0 && (round.length === 0 || bytes + this.queue[0]!.bytes <= this.maxRoundBytes)) {
          const w = this.queue.shift()!;
          this.queuedBytes -= w.bytes;
          if (w.settled) continue;
          round.push(w);
          bytes += w.bytes;
        }
        if (round.length === 0) continue;
        try {
          await this.writeRound(round);
          for (const w of round) settle(w, () => w.resolve());
        } catch (err) {
          for (const w of round) settle(w, () => w.reject(err));
        }
      }
    } finally {
      this.running = null;
    }
  }
}

function settle(w: QueuedWrite, answer: () => void): void {
  if (w.settled) return;
  w.settled = true;
  answer();
}
