import { createHash, hash, randomBytes, randomFillSync } from "node:crypto";

/**
 * Random bytes for ids come from a CSPRNG pool refilled 4 KiB at a time: one getrandom call per 256 ids
 * instead of one per id, which was a visible share of batch ingest's CPU (docs/BENCHMARKS.md, "Ingest's work per
 * body").
 */
const POOL = Buffer.allocUnsafe(4096);
let poolPos = POOL.length;
function random16(): Buffer {
  if (poolPos + 16 > POOL.length) {
    randomFillSync(POOL);
    poolPos = 0;
  }
  const b = Buffer.from(POOL.subarray(poolPos, poolPos + 16));
  poolPos += 16;
  return b;
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Whether `s` is a UUID in its canonical text form (either case). */
export const isUuid = (s: string): boolean => UUID_RE.test(s);

/**
 * UUIDv7 (RFC 9562): 48-bit ms timestamp, then random bits, with a per-process monotonic counter in
 * rand_a so ids minted in the same millisecond by one process still sort in minting order.
 * Events are keyed by this id in ClickHouse, so a run's events sort in ingest order.
 */
let lastMs = 0;
let seq = 0;
export function uuidv7(now: number = Date.now()): string {
  if (now <= lastMs) {
    seq++;
    if (seq > 0xfff) { lastMs++; seq = 0; }
    now = lastMs;
  } else {
    lastMs = now;
    seq = 0;
  }
  const b = random16();
  b[0] = Math.floor(now / 2 ** 40) & 0xff;
  b[1] = Math.floor(now / 2 ** 32) & 0xff;
  b[2] = (now >>> 24) & 0xff;
  b[3] = (now >>> 16) & 0xff;
  b[4] = (now >>> 8) & 0xff;
  b[5] = now & 0xff;
  b[6] = 0x70 | ((seq >>> 8) & 0x0f);
  b[7] = seq & 0xff;
  b[8] = 0x80 | (b[8]! & 0x3f);
  return formatUuid(b);
}

/**
 * The run id is derived, not looked up: a name-based UUID (v5 layout, SHA-1) of project id and sdk_run_id.
 * Any ingest process computes the same id without a round trip, and two projects' identical sdk_run_ids differ.
 * A personal project has its user's id, so a run stored before projects existed keeps its id.
 */
export const runIdFor = (projectId: number, sdkRunId: string): string => nameUuid(`runwatch:run:${projectId}:${sdkRunId}`);

/**
 * A name-based event id for receivers that must not mint a new id for a resent item (an OTLP exporter retrying an
 * export): UUIDv7 layout with `ms` (the event's own time) as its timestamp, so a run's events still sort by time,
 * and the remaining bits from a SHA-1 of `name` (what identifies the item: trace id + span id + phase), so the same
 * item always gets the same id; `rank` (0-15) orders items of the same millisecond (a span's end before the run's).
 * Duplicates are recognised per (project, run, event id): two tenants never meet.
 */
export function eventIdFor(name: string, ms: number, rank = 0): string {
  // The pipeline derives one per OTLP span and more. The id is put together in EVENT_ID (ASCII, dashes in place) and
  // read out as one string: slicing and joining the hash's hex made a dozen short strings per id.
  const out = EVENT_ID;
  out.write(hash("sha1", `runwatch:event:${name}`, "hex"), HASH_AT, 40, "latin1");
  const t = Number.isFinite(ms) ? Math.max(0, Math.floor(ms)) % 2 ** 48 : 0;
  const high = Math.floor(t / 2 ** 24);
  const low = t % 2 ** 24;
  for (let i = 0; i < 6; i++) {
    out[DIGIT_AT[5 - i]!] = HEX_CODES[(high >>> (4 * i)) & 0xf]!; // digits 0-5
    out[DIGIT_AT[11 - i]!] = HEX_CODES[(low >>> (4 * i)) & 0xf]!; // digits 6-11
  }
  out[DIGIT_AT[12]!] = 0x37; // "7", the version
  out[DIGIT_AT[13]!] = HEX_CODES[rank & 0xf]!;
  out[DIGIT_AT[14]!] = out[HASH_AT + 14]!;
  out[DIGIT_AT[15]!] = out[HASH_AT + 15]!;
  const d16 = out[HASH_AT + 16]!;
  out[DIGIT_AT[16]!] = HEX_CODES[0x8 | ((d16 <= 0x39 ? d16 - 0x30 : d16 - 0x57) & 0x3)]!; // the variant
  out.copyWithin(DIGIT_AT[17]!, HASH_AT + 17, HASH_AT + 20);
  out.copyWithin(DIGIT_AT[20]!, HASH_AT + 20, HASH_AT + 32);
  return out.toString("latin1", 0, 36);
}

/** eventIdFor's scratch: the id's 36 characters, then the hash's 40 hex digits. */
const HASH_AT = 36;
const EVENT_ID = Buffer.alloc(HASH_AT + 40, 0x2d); // "-" where the dashes go
const HEX_CODES = Array.from("0123456789abcdef", (c) => c.charCodeAt(0));
/** Where the id's nth hex digit goes in the 8-4-4-4-12 form. */
const DIGIT_AT = Array.from({ length: 32 }, (_, i) => i + (i >= 8 ? 1 : 0) + (i >= 12 ? 1 : 0) + (i >= 16 ? 1 : 0) + (i >= 20 ? 1 : 0));

export function nameUuid(name: string): string {
  const h = hash("sha1", name, "hex"); // one-shot: cheaper than createHash().update().digest() per id
  return dashed(`${h.slice(0, 12)}5${h.slice(13, 16)}${variantDigit(h)}${h.slice(17, 32)}`);
}

/** The RFC 9562 variant (0b10) over the hash's 17th hex digit (the high bits of byte 8). */
const variantDigit = (hex: string): string => (0x8 | (parseInt(hex[16]!, 16) & 0x3)).toString(16);

/** 32 hex digits in the 8-4-4-4-12 form. */
const dashed = (h: string): string => `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;

function formatUuid(b: Uint8Array): string {
  return dashed(Buffer.from(b).toString("hex"));
}

/** An API key: 32 random bytes, hex-encoded (64 chars), as docs/API.md (Authentication) describes. */
export const newApiKey = (): string => randomBytes(32).toString("hex");

/** Keys are stored only as this hash; lookups hash the presented key. SHA-256 suffices for 256-bit random keys. */
export const hashApiKey = (key: string): string => createHash("sha256").update(key).digest("hex");

export const isApiKeyShape = (s: string): boolean => /^[0-9a-f]{64}$/.test(s);
