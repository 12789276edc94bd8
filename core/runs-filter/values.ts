/**
 * The typed values of the string form, read and written: numbers, durations (`10s`), dates (`2026-01-02T10:00Z`) and
 * bare-or-quoted text. Each writer gives what its reader reads back to the same value.
 */
import { isStorableTime } from "../events/schema.js";

const NUMBER = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?$/i;

/** A finite number as typed (`0.05`, `-3`, `1e3`), or undefined. */
export function readNumber(s: string): number | undefined {
  if (!NUMBER.test(s)) return undefined;
  const n = Number(s);
  return Number.isFinite(n) ? n : undefined;
}

/** Shortest text that reads back to `n` (−0 included). */
export const writeNumber = (n: number): string => (Object.is(n, -0) ? "-0" : String(n));

const DURATION_UNITS: Readonly<Record<string, number>> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 };
const DURATION = /^(.*?)(ms|s|m|h)?$/;

/** `250ms`, `10s`, `1.5m`, `2h`, or a bare number of ms → ms; undefined when not a duration. */
export function readDuration(s: string): number | undefined {
  const m = DURATION.exec(s)!;
  const n = readNumber(m[1]!);
  if (n === undefined) return undefined;
  const ms = n * DURATION_UNITS[m[2] ?? "ms"]!;
  return Number.isFinite(ms) ? ms : undefined;
}

/** ms in the largest unit that keeps it whole and reads back exactly; else in ms. */
export function writeDuration(ms: number): string {
  for (const unit of ["h", "m", "s"] as const) {
    const per = DURATION_UNITS[unit]!;
    const n = ms / per;
    if (ms !== 0 && Number.isInteger(n) && n * per === ms) return `${writeNumber(n)}${unit}`;
  }
  return `${writeNumber(ms)}ms`;
}

const DATE = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?$/;

/**
 * `2026-01-01`, `2026-01-02T10:00Z`, `2026-01-02T10:00:00.123+02:00` → the canonical UTC time; a time without a zone is
 * UTC. Undefined when not such a date, not a real day (2026-02-30) or outside the storable years.
 */
export function readDate(s: string): string | undefined {
  const m = DATE.exec(s);
  if (!m) return undefined;
  const [, y, mo, d, h = "00", mi = "00", sec = "00", frac = "", zone = "Z"] = m;
  // Past the milliseconds the fraction is cut, as Date cuts it.
  const ms = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(sec), frac ? Number(frac.slice(1, 4).padEnd(3, "0")) : 0);
  const check = new Date(ms);
  // Date.UTC rolls over (Feb 30 → Mar 2, 24:00 → next day): only a date that is what it spells is read.
  if (check.getUTCFullYear() !== Number(y) || check.getUTCMonth() !== Number(mo) - 1 || check.getUTCDate() !== Number(d)
    || check.getUTCHours() !== Number(h) || check.getUTCMinutes() !== Number(mi) || check.getUTCSeconds() !== Number(sec)) return undefined;
  if (zone !== "Z" && (Number(zone.slice(1, 3)) > 23 || Number(zone.slice(-2)) > 59)) return undefined;
  const offset = zone === "Z" ? 0 : (zone[0] === "-" ? -1 : 1) * (Number(zone.slice(1, 3)) * 60 + Number(zone.slice(-2))) * 60_000;
  const utc = ms - offset;
  return isStorableTime(utc) ? new Date(utc).toISOString() : undefined;
}

/** A canonical UTC time, shortest: `2026-01-01`, `2026-01-02T10:00Z`, or whole. */
export function writeDate(iso: string): string {
  if (iso.endsWith("T00:00:00.000Z")) return iso.slice(0, 10);
  if (iso.endsWith(":00.000Z")) return `${iso.slice(0, 16)}Z`;
  return iso;
}

/**
 * A bare word the reader takes back as typed: no space, quote, backslash, comma or operator character, and not
 * starting with `-` or `*`. Anything else is written in quotes.
 */
const BARE = /^[^\s"\\,:<>=!*-][^\s"\\,:<>=!]*$/;

export function writeText(s: string): string {
  return BARE.test(s) ? s : `"${s.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
}
