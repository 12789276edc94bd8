/** Keys remembered until a deadline each, at most `max` of them (when full, the oldest added goes first). */
export class ExpiringSet {
  private readonly until = new Map<string, number>();

  constructor(private readonly max = 10_000) {}

  add(key: string, ttlMs: number): void {
    this.until.delete(key);
    if (this.until.size >= this.max) this.until.delete(this.until.keys().next().value!);
    this.until.set(key, Date.now() + ttlMs);
  }

  has(key: string): boolean {
    const until = this.until.get(key);
    if (until === undefined) return false;
    if (until > Date.now()) return true;
    this.until.delete(key);
    return false;
  }
}
