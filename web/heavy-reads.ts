/**
 * Requests whose cost grows with a run's size — the run page (its trace) and GET /api/runs/{id}/spans, which read,
 * pair and render a run's span events — run one at a time per user in each web process, with at most MAX_WAITING
 * more waiting; past that the request is refused with 429 + Retry-After. One tenant re-reading a run of 20,000 spans
 * in parallel then takes one reader's share of the event loop and the cores, not all of them, and the other tenants'
 * requests keep theirs.
 */
import { HttpProblem } from "./http-errors.js";

export const MAX_WAITING = 4;
const RETRY_AFTER_SECONDS = 2;

export class HeavyReads {
  /** The users with a request under way, and the requests waiting behind it. */
  private readonly waiting = new Map<number, (() => void)[]>();

  async run<T>(userId: number, read: () => Promise<T>): Promise<T> {
    const queue = this.waiting.get(userId);
    if (!queue) this.waiting.set(userId, []);
    else if (queue.length >= MAX_WAITING) {
      throw new HttpProblem(429, "too_many_heavy_reads", `at most ${1 + MAX_WAITING} requests for a run's trace or spans at a time per user; retry in ${RETRY_AFTER_SECONDS} s`, undefined, { "Retry-After": String(RETRY_AFTER_SECONDS) });
    } else await new Promise<void>((resolve) => queue.push(resolve));
    try {
      return await read();
    } finally {
      const next = this.waiting.get(userId)!.shift();
      if (next) next();
      else this.waiting.delete(userId);
    }
  }
}
