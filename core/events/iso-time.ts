/**
 * Canonical timestamps (`2026-11-26T12:00:00.123Z`, what Date#toISOString gives for the years 1970–9999), formatted
 * and read without a Date for each. The pipeline formats or reads a timestamp several times per OTLP span (the
 * mapping, enrichment, the status machine, llm_calls rows, frames); a second's prefix looked up in a small cache and
 * three digits cost a fraction of Date#toISOString or Date.parse (docs/BENCHMARKS.md, "Pipeline thread, per span").
 * Results are exactly those of Date: anything outside the fast path (other forms, offsets, other years, NaN) goes
 * through it.
 */

/**
 * Seconds seen lately, by second of the day modulo SLOTS (direct-mapped: a second evicts the one in its slot): the
 * canonical prefix (`2026-11-26T12:00:00.`) and the ms of the second's start (-1: empty). A timestamp's slot comes
 * from its hh:mm:ss digits, and its prefix is then compared whole, so a string only matches the second it spells.
 */
const SLOTS = 1024;
const slotPrefix: string[] = new Array<string>(SLOTS).fill("");
const slotSecond: number[] = new Array<number>(SLOTS).fill(-1);
/** "000Z" … "999Z". */
const MS_TAILS = Array.from({ length: 1000 }, (_, ms) => `${String(ms).padStart(3, "0")}Z`);
/** 9999-12-31T23:59:59.999Z: later years are written with six digits and a sign. */
const LAST_FOUR_DIGIT_MS = 253_402_300_799_999;

/** The canonical prefix of the second starting at `second` (ms, ≥ 0, whole seconds). */
function prefixOf(second: number): string {
  const slot = ((second / 1000) % 86_400) % SLOTS;
  if (slotSecond[slot] === second) return slotPrefix[slot]!;
  const prefix = new Date(second).toISOString().slice(0, 20);
  slotSecond[slot] = second;
  slotPrefix[slot] = prefix;
  return prefix;
}

/** `new Date(ms).toISOString()`, including its RangeError for NaN and out-of-range times. */
export function isoOfMs(ms: number): string {
  if (!(ms >= 0 && ms <= LAST_FOUR_DIGIT_MS)) return new Date(ms).toISOString();
  const whole = Math.floor(ms); // a Date truncates its time value, which for ms ≥ 0 is the floor
  const second = whole - (whole % 1000);
  return prefixOf(second) + MS_TAILS[whole - second]!;
}

const digitAt = (s: string, i: number): number => s.charCodeAt(i) - 48;
const isDigit = (d: number): boolean => d >= 0 && d <= 9;

/** The ms of a canonical timestamp whose second is cached; undefined for anything else. */
function cachedMs(s: string): number | undefined {
  if (s.length !== 24 || s.charCodeAt(23) !== 90 /* Z */) return undefined;
  const d0 = digitAt(s, 20), d1 = digitAt(s, 21), d2 = digitAt(s, 22);
  if (!isDigit(d0) || !isDigit(d1) || !isDigit(d2)) return undefined;
  // Any slot will do for a string that is not a timestamp: its prefix then matches no cached one.
  const ofDay = (digitAt(s, 11) * 10 + digitAt(s, 12)) * 3600 + (digitAt(s, 14) * 10 + digitAt(s, 15)) * 60 + digitAt(s, 17) * 10 + digitAt(s, 18);
  const slot = ofDay & (SLOTS - 1);
  const second = slotSecond[slot]!;
  if (second < 0 || !s.startsWith(slotPrefix[slot]!)) return undefined;
  return second + d0 * 100 + d1 * 10 + d2;
}

/** `Date.parse(s)`. */
export function msOfIso(s: string): number {
  const ms = cachedMs(s);
  if (ms !== undefined) return ms;
  // Not cached from here: times read far apart would only evict one another. Formatting fills the cache.
  return Date.parse(s);
}

/** `new Date(s).toISOString()`: `s` itself when it is already canonical. */
export function canonicalIso(s: string): string {
  return cachedMs(s) !== undefined ? s : isoOfMs(Date.parse(s));
}
