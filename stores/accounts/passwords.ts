/**
 * Password hashing with node:crypto scrypt (memory-hard), stored as
 * `scrypt$N$r$p$<salt b64>$<hash b64>` so parameters can be raised later without breaking old hashes.
 * N = 2^17, r = 8, p = 1 is OWASP's scrypt recommendation (128 MiB per hash). Hashes made with weaker
 * parameters still verify, and are replaced at the next successful login (needsRehash, users.ts).
 */
import { randomBytes, scrypt as scryptCb, timingSafeEqual, type ScryptOptions } from "node:crypto";

const scrypt = (password: string, salt: Buffer, keylen: number, opts: ScryptOptions) =>
  new Promise<Buffer>((resolve, reject) =>
    scryptCb(password.normalize("NFKC"), salt, keylen, opts, (err, key) => (err ? reject(err) : resolve(key))),
  );

const N = 2 ** 17, R = 8, P = 1, KEYLEN = 64;
/** 128 · N · r bytes plus headroom. */
const MAXMEM = 256 * 1024 * 1024;

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const hash = await scrypt(password, salt, KEYLEN, { N, r: R, p: P, maxmem: MAXMEM });
  return `scrypt$${N}$${R}$${P}$${salt.toString("base64")}$${hash.toString("base64")}`;
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parts = stored.split("$");
  if (parts.length !== 6 || parts[0] !== "scrypt") return false;
  const [n, r, p] = parts.slice(1, 4).map(Number) as [number, number, number];
  // Parameters come from our own database, but bound them: a corrupted row must not allocate gigabytes.
  if (!(n >= 2 && n <= N && r >= 1 && r <= 32 && p >= 1 && p <= 16)) return false;
  const salt = Buffer.from(parts[4]!, "base64");
  const expected = Buffer.from(parts[5]!, "base64");
  const actual = await scrypt(password, salt, expected.length, { N: n, r, p, maxmem: MAXMEM });
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

/** True when `stored` was made with weaker parameters than today's (or is not ours): hash again at login. */
export function needsRehash(stored: string): boolean {
  const [kind, n, r, p] = stored.split("$");
  return kind !== "scrypt" || Number(n) < N || Number(r) < R || Number(p) < P;
}

/** A well-formed hash of a random password: login of an unknown email spends the same time as a wrong password. */
let dummyHash: Promise<string> | undefined;
export const dummyPasswordHash = (): Promise<string> => (dummyHash ??= hashPassword(randomBytes(16).toString("hex")));
