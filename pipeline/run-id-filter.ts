/**
 * A set of run ids that answers "certainly not in it" or "maybe in it": a scalable Bloom filter (Almeida et al.,
 * 2007) over the bits of the ids themselves. A run id is a name-based UUID (core/ids.ts runIdFor: SHA-1 of the
 * user and the sdk_run_id), so its hex digits are already a uniform hash and nothing is hashed again here.
 *
 * Why not a library: bloom-filters 3.0.4's ScalableBloomFilter hashes each key with xxhashjs and copies its stages on
 * every add, thousands of times slower than this one (docs/BENCHMARKS.md, "ClickHouse calls").
 *
 * It grows by stages, each twice the capacity of the one before and with half its false-positive rate, so the rate
 * of the whole stays under `falsePositiveRate` however many ids are added. It never answers "not in it" for an id
 * that was added: that is what pipeline/stored-runs.ts relies on. An id that is not a UUID is never "certainly not".
 */
import { isUuid } from "../core/ids.js";

const LN2_SQUARED = Math.LN2 * Math.LN2;

class Stage {
  readonly bits: Uint32Array;
  readonly slots: number;
  readonly hashes: number;
  count = 0;

  constructor(readonly capacity: number, falsePositiveRate: number) {
    this.slots = Math.ceil((-capacity * Math.log(falsePositiveRate)) / LN2_SQUARED);
    this.hashes = Math.max(1, Math.round((this.slots / capacity) * Math.LN2));
    this.bits = new Uint32Array(Math.ceil(this.slots / 32));
  }

  /** Double hashing (Kirsch and Mitzenmacher): slot i is h1 + i·step modulo the slots, step never 0. */
  add(h1: number, h2: number): void {
    const step = 1 + (h2 % (this.slots - 1));
    for (let i = 0; i < this.hashes; i++) {
      const slot = (h1 + i * step) % this.slots;
      this.bits[slot >>> 5]! |= 1 << (slot & 31);
    }
    this.count++;
  }

  has(h1: number, h2: number): boolean {
    const step = 1 + (h2 % (this.slots - 1));
    for (let i = 0; i < this.hashes; i++) {
      const slot = (h1 + i * step) % this.slots;
      if ((this.bits[slot >>> 5]! & (1 << (slot & 31))) === 0) return false;
    }
    return true;
  }
}

export class RunIdFilter {
  private readonly stages: Stage[] = [];

  /**
   * @param firstCapacity ids the first stage takes at its rate; later stages double it.
   * @param falsePositiveRate the most often a run id never added is answered "maybe", over all stages.
   */
  constructor(private readonly firstCapacity = 1 << 16, private readonly falsePositiveRate = 1e-5) {}

  add(runId: string): void {
    if (!isUuid(runId)) return; // mayHave answers "maybe" for it anyway
    let stage = this.stages[this.stages.length - 1];
    if (!stage || stage.count >= stage.capacity) {
      const n = this.stages.length;
      // Rates p/2, p/4, p/8, …: their sum, the rate of the whole, stays under p.
      stage = new Stage(this.firstCapacity * 2 ** n, this.falsePositiveRate / 2 ** (n + 1));
      this.stages.push(stage);
    }
    stage.add(h1(runId), h2(runId));
  }

  /** False only for a run id that was never added. */
  mayHave(runId: string): boolean {
    if (!isUuid(runId)) return true;
    const a = h1(runId);
    const b = h2(runId);
    for (const stage of this.stages) if (stage.has(a, b)) return true;
    return false;
  }

  /** Ids added (an id added twice counts twice). */
  get size(): number {
    return this.stages.reduce((n, s) => n + s.count, 0);
  }

  get bytes(): number {
    return this.stages.reduce((n, s) => n + s.bits.byteLength, 0);
  }
}

/** Two of the id's random 32-bit groups (a v5 UUID's first and last), as unsigned numbers. */
const h1 = (id: string): number => parseInt(id.slice(0, 8), 16);
const h2 = (id: string): number => parseInt(id.slice(28, 36), 16);
