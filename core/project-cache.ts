/**
 * The one cache of things read per project (or per rule, per evaluator version): alert rules and evaluation rules in
 * the pipeline, an evaluation worker's evaluators, rules and keys. An entry is read again once `ttlMs` old, so a
 * change made elsewhere applies within that time; a change announced on PubSub applies at once (`invalidateOn`).
 * Bounded: past `maxEntries` the oldest entry goes. Values may be promises: concurrent readers share one read.
 */
import type { PubSub } from "./ports/pubsub.js";

interface Entry<V> {
  readonly at: number;
  readonly value: V;
}

export interface ProjectCacheOptions {
  /** How long an entry is used before it is read again; Infinity for values that never change (a version). */
  readonly ttlMs: number;
  readonly maxEntries?: number;
}

export class ProjectCache<K, V> {
  private readonly entries = new Map<K, Entry<V>>();
  private readonly ttlMs: number;
  private readonly maxEntries: number;

  constructor(opts: ProjectCacheOptions) {
    this.ttlMs = opts.ttlMs;
    this.maxEntries = opts.maxEntries ?? 10_000;
  }

  /** The value of `key`, read with `load` when missing or older than the TTL. */
  get(key: K, load: () => V): V {
    const now = Date.now();
    const hit = this.entries.get(key);
    if (hit && now - hit.at <= this.ttlMs) return hit.value;
    const value = load();
    this.set(key, value, now);
    return value;
  }

  /** The values of `keys`, reading those missing or stale in one call of `loadMissing` (which answers for each). */
  async getMany(keys: readonly K[], loadMissing: (missing: K[]) => Promise<Map<K, V>>): Promise<Map<K, V>> {
    const now = Date.now();
    const out = new Map<K, V>();
    const missing: K[] = [];
    for (const k of keys) {
      const hit = this.entries.get(k);
      if (hit && now - hit.at <= this.ttlMs) out.set(k, hit.value);
      else missing.push(k);
    }
    if (missing.length > 0) {
      const loaded = await loadMissing(missing);
      for (const k of missing) {
        const v = loaded.get(k)!;
        out.set(k, v);
        this.set(k, v, now);
      }
    }
    return out;
  }

  /** Drops one key's entry, or every entry. */
  invalidate(key?: K): void {
    if (key === undefined) this.entries.clear();
    else this.entries.delete(key);
  }

  /**
   * Drops entries as changes are announced on `channel` (and the channels under it): `keyOf` reads the key a message
   * names; a message naming none drops them all. Returns the unsubscribe.
   */
  async invalidateOn(pubsub: Pick<PubSub, "subscribePrefix">, channel: string, keyOf: (message: string) => K | undefined): Promise<() => Promise<void>> {
    return pubsub.subscribePrefix(channel, (_channel, message) => this.invalidate(keyOf(message)));
  }

  get size(): number {
    return this.entries.size;
  }

  private set(key: K, value: V, at: number): void {
    this.entries.delete(key);
    if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(key, { at, value });
  }
}

/** Reads a project id from a change message ("42"); undefined (drop all) for anything else. */
export const projectIdOf = (message: string): number | undefined => {
  const id = Number(message);
  return Number.isSafeInteger(id) ? id : undefined;
};
