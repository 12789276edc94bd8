/**
 * Which real servers the scale tests may use. A test file calls `needs("KAFKA_BROKERS", ...)`:
 * without the env var it skips cleanly, unless REQUIRE_SERVICES=1 (CI), where the missing var is a failure.
 */
import { describe, it } from "vitest";
import { randomUUID } from "node:crypto";
import { loadConfig, type Config } from "../../core/config.js";

export type ServiceVar = "KAFKA_BROKERS" | "DATABASE_URL" | "REDIS_URL" | "CLICKHOUSE_URL" | "CLICKHOUSE_LEGACY_URL";

export const required = process.env.REQUIRE_SERVICES === "1";

export function missing(vars: readonly ServiceVar[]): ServiceVar[] {
  return vars.filter((v) => !process.env[v]);
}

/** describe() that runs only when every var is set; fails (instead of skipping) under REQUIRE_SERVICES=1. */
export function describeWith(vars: readonly ServiceVar[], name: string, body: () => void): void {
  const absent = missing(vars);
  if (!absent.length) {
    describe(name, body);
    return;
  }
  if (required) {
    describe(name, () => {
      it(`needs ${absent.join(", ")}`, () => {
        throw new Error(`REQUIRE_SERVICES=1 but ${absent.join(", ")} is not set`);
      });
    });
    return;
  }
  describe.skip(`${name} (skipped: set ${absent.join(", ")})`, body);
}

/** Config for a test: the real server URLs from the environment, a topic and data dir of its own. */
export function testConfig(overrides: Record<string, string | undefined> = {}): Config {
  return loadConfig({ ...process.env, KAFKA_TOPIC: `runwatch.test.${randomUUID()}`, LOG_LEVEL: "warn", ...overrides });
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Polls `check` until it returns a truthy value or the time is up (then throws with `what`). */
export async function eventually<T>(what: string, check: () => Promise<T> | T, timeoutMs = 30_000, everyMs = 100): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ""}`);
    await sleep(everyMs);
  }
}
