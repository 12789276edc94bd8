/**
 * The session secret signs session cookies and realtime (gateway) tokens; web and gateway must share it.
 *
 * SESSION_SECRET wins when set. Without it, the embedded default generates one on first start and keeps it in
 * the data directory (file mode 0600), so sessions survive restarts and every role of one data dir agrees.
 * Production refuses to start without SESSION_SECRET: several processes on several hosts must share one value,
 * and a secret silently generated per host would log users out at random.
 */
import { randomBytes } from "node:crypto";
import fs from "node:fs/promises";
import path from "node:path";
import type { Config } from "./config.js";

export const SESSION_SECRET_FILE = "session-secret";
const MIN_LENGTH = 32;

const cache = new Map<string, Promise<string>>();

export function resolveSessionSecret(config: Pick<Config, "env" | "dataDir" | "sessionSecret">): Promise<string> {
  if (config.sessionSecret) {
    if (config.sessionSecret.length < MIN_LENGTH) {
      return Promise.reject(new Error(`SESSION_SECRET must be at least ${MIN_LENGTH} characters (e.g. \`openssl rand -hex 32\`)`));
    }
    return Promise.resolve(config.sessionSecret);
  }
  if (config.env === "production") {
    return Promise.reject(new Error("SESSION_SECRET is required when NODE_ENV=production (generate one with `openssl rand -hex 32`)"));
  }
  const file = path.join(config.dataDir, SESSION_SECRET_FILE);
  let p = cache.get(file);
  if (!p) {
    p = readOrCreate(file);
    cache.set(file, p);
    p.catch(() => cache.delete(file));
  }
  return p;
}

/** Reads the secret kept in `file`, or creates it (0600) once; concurrent first starts agree on one value. */
export async function readOrCreate(file: string): Promise<string> {
  try {
    const existing = (await fs.readFile(file, "utf8")).trim();
    if (existing.length >= MIN_LENGTH) return existing;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
  }
  await fs.mkdir(path.dirname(file), { recursive: true });
  const secret = randomBytes(32).toString("hex");
  // Write to a temp file and link it into place: two processes starting together agree on one secret.
  const tmp = `${file}.${process.pid}.${Date.now()}.tmp`;
  await fs.writeFile(tmp, secret + "\n", { mode: 0o600 });
  try {
    await fs.link(tmp, file);
    return secret;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    return (await fs.readFile(file, "utf8")).trim();
  } finally {
    await fs.rm(tmp, { force: true });
  }
}
