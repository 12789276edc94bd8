/** Fixed per-key request budget (rate-limiter-flexible: in memory embedded, Redis in scale mode). */
export interface RateLimiter {
  consume(key: string, points?: number): Promise<RateDecision>;
  close(): Promise<void>;
}

export interface RateDecision {
  readonly allowed: boolean;
  readonly limit: number;
  readonly remaining: number;
  /** Milliseconds until the window resets. */
  readonly resetMs: number;
}
