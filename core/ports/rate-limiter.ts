/** Fixed per-key request budget (rate-limiter-flexible: in memory embedded, Redis in scale mode). */
export interface RateLimiter {
  consume(key: string, points?: number): Promise<RateDecision>;
  /**
   * Another budget on the same store (memory embedded, Redis shared by every process in scale mode): `points`
   * per `durationSec` for each key, under its own `name` (login attempts per IP, test sends per user, ...).
   */
  budget(name: string, points: number, durationSec: number): Budget;
  close(): Promise<void>;
}

export interface Budget {
  consume(key: string, points?: number): Promise<RateDecision>;
  /** The key's state, consuming nothing (allowed = at least one point left). */
  peek(key: string): Promise<RateDecision>;
  /** Forgets what the key consumed (e.g. its failed logins, once it logs in). */
  reset(key: string): Promise<void>;
}

export interface RateDecision {
  readonly allowed: boolean;
  readonly limit: number;
  readonly remaining: number;
  /** Milliseconds until the window resets. */
  readonly resetMs: number;
}
