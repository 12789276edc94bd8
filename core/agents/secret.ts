/**
 * The shared secret between web and agents-service (header X-Agent-Secret).
 *
 * - AGENT_SECRET (config.agentSecret) wins when set; it must be at least 16 characters.
 * - In production it is required: the service refuses to start without it (web and agents-service may run on
 *   different hosts and must share one value).
 * - In development and test, when absent, one is generated once per data dir and kept in
 *   `<dataDir>/agent-secret` (mode 0600, same mechanism as the session secret): web and agents-service started
 *   on the same data dir read the same file, so `npm start` needs no setup.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import path from "node:path";
import type { Config } from "../config.js";
import { readOrCreate } from "../secrets.js";

export const MIN_SECRET_CHARS = 16;
export const AGENT_SECRET_FILE = "agent-secret";

export async function resolveAgentSecret(config: Pick<Config, "env" | "dataDir" | "agentSecret">): Promise<string> {
  if (config.agentSecret) {
    if (config.agentSecret.length < MIN_SECRET_CHARS) {
      throw new Error(`AGENT_SECRET must be at least ${MIN_SECRET_CHARS} characters (e.g. \`openssl rand -hex 32\`)`);
    }
    return config.agentSecret;
  }
  if (config.env === "production") {
    throw new Error("AGENT_SECRET is required when NODE_ENV=production: web and agents-service must share it (generate one with `openssl rand -hex 32`)");
  }
  return readOrCreate(path.join(config.dataDir, AGENT_SECRET_FILE));
}

/** Constant-time comparison; hashing first makes both sides the same length, so the length does not leak either. */
export function secretMatches(given: string | undefined, expected: string): boolean {
  if (given === undefined || given === "") return false;
  const a = createHash("sha256").update(given).digest();
  const b = createHash("sha256").update(expected).digest();
  return timingSafeEqual(a, b);
}
