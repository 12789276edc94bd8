/**
 * A part's stage timings for the pipeline's debug log (LOG_LEVEL=debug): each stage's ms, the hooks' own, and how
 * long the part's oldest and newest events waited since ingest received them (clocks of one host).
 */
import type { LoggedEvent } from "../core/events/schema.js";

export class StageTimer {
  readonly timings: Record<string, number> = {};
  private readonly started = performance.now();
  private mark = this.started;

  constructor(events: readonly LoggedEvent[]) {
    if (events.length === 0) return;
    const now = Date.now();
    this.timings.queued_oldest_ms = now - Date.parse(events[0]!.received_at);
    this.timings.queued_newest_ms = now - Date.parse(events[events.length - 1]!.received_at);
  }

  /** The stage that just ended took the time since the previous lap. */
  lap(stage: string): void {
    const now = performance.now();
    this.timings[stage] = Math.round((now - this.mark) * 10) / 10;
    this.mark = now;
  }

  /** Milliseconds since the part started. */
  get elapsedMs(): number {
    return performance.now() - this.started;
  }

  /** The timings with the total. */
  done(): Record<string, number> {
    return { total_ms: Math.round(this.elapsedMs), ...this.timings };
  }
}
