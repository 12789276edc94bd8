/**
 * Lets one lane's handler run at a time, and when both lanes wait, the one that did not run last goes next: a
 * main-lane batch waits for at most one bulk batch, and the bulk lane is never starved (lanes.ts).
 */
import type { Lane } from "./lane-router.js";

export class LaneGate {
  private busy = false;
  private last: Lane = "bulk";
  private readonly waiting: Record<Lane, (() => void)[]> = { main: [], bulk: [] };

  async run<T>(lane: Lane, task: () => Promise<T>): Promise<T> {
    if (this.busy) await new Promise<void>((resolve) => this.waiting[lane].push(resolve));
    else this.busy = true;
    this.last = lane;
    try {
      return await task();
    } finally {
      this.handOver();
    }
  }

  private handOver(): void {
    const other: Lane = this.last === "main" ? "bulk" : "main";
    const next = this.waiting[other].shift() ?? this.waiting[this.last].shift();
    if (next) next(); // the gate stays busy: it passes straight to the next task
    else this.busy = false;
  }
}
