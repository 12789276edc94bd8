/**
 * The skeletons of the runs whose traces were read last, in this process: a reader pages through a run of 100,000
 * spans in tens of requests, and the page reads the first of them right after the page itself, so the run's span
 * events are read and laid out once, not once per page. An entry holds while the run's version is the one it was
 * built at, or while a reader asks for the read it paged from (`at`, its cursor) or for the one its page started
 * (`started`, the run's version then): the pages of one reader then come from one read even while the run grows (its
 * live updates, from that cursor, bring what came since). Bounded by entries and by spans held (a span is a few
 * hundred bytes: 250,000 of them some 60 MB), the least recently used going first, and an entry unused for
 * IDLE_MS is dropped: a reader reads its pages within seconds, and its live updates do not need the tree.
 */
import type { Skeleton } from "./trace-skeleton.js";

/** How long an entry nobody asked for is kept. */
export const IDLE_MS = 120_000;

interface Entry {
  version: number;
  used: number;
  skeleton: Promise<Skeleton>;
  /** Spans held, once built (0 while building). */
  spans: number;
  cursor: string;
}

export class SkeletonCache {
  private readonly entries = new Map<string, Entry>();

  private sweeper: ReturnType<typeof setInterval> | undefined;

  constructor(private readonly limits = { entries: 8, spans: 250_000 }, private readonly now: () => number = Date.now) {}

  /**
   * The skeleton of run `key` at `version` (or at the version `started`, or read from the cursor `at`), built by
   * `build` when none is held; builds of one run share one read.
   */
  get(key: string, version: number, at: string | undefined, build: () => Promise<Skeleton>, started?: number): Promise<Skeleton> {
    const held = this.entries.get(key);
    if (held && (held.version === version || held.version === started || (at !== undefined && held.cursor === at))) {
      this.entries.delete(key);
      this.entries.set(key, held); // most recently used last
      held.used = this.now();
      return held.skeleton;
    }
    const entry: Entry = { version, used: this.now(), skeleton: build(), spans: 0, cursor: "" };
    this.entries.set(key, entry);
    this.sweep();
    entry.skeleton.then(
      (s) => {
        entry.spans = s.spans.length;
        entry.cursor = s.cursor.cursor;
        this.evict();
      },
      () => {
        if (this.entries.get(key) === entry) this.entries.delete(key);
      },
    );
    return entry.skeleton;
  }

  /** Drops the entries unused for IDLE_MS, now and every IDLE_MS while any is held (the timer keeps no process up). */
  private sweep(): void {
    const before = this.now() - IDLE_MS;
    for (const [key, e] of this.entries) if (e.used < before && e.spans > 0) this.entries.delete(key);
    if (this.entries.size && !this.sweeper) {
      this.sweeper = setInterval(() => this.sweep(), IDLE_MS);
      this.sweeper.unref();
    } else if (!this.entries.size && this.sweeper) {
      clearInterval(this.sweeper);
      this.sweeper = undefined;
    }
  }

  /** The keys held, least recently used first. */
  keys(): string[] {
    return [...this.entries.keys()];
  }

  private evict(): void {
    let spans = 0;
    for (const e of this.entries.values()) spans += e.spans;
    for (const [key, e] of this.entries) {
      if (this.entries.size <= 1 || (this.entries.size <= this.limits.entries && spans <= this.limits.spans)) break;
      this.entries.delete(key);
      spans -= e.spans;
    }
  }
}
