import { formatUuid, randomBytes } from "./platform.js";

/**
 * UUIDv7 (RFC 9562) with a monotonic counter in rand_a. The server stores events ordered by event_id,
 * so ids minted by this client sort in the order the agent produced the events, and a retried send with
 * the same id is stored once.
 */
let lastMs = 0;
// One getRandomValues call per 256 ids: the per-call overhead dominates at 16 bytes.
let pool: Uint8Array = new Uint8Array(0);
let poolPos = 0;
function nextRandom16(): Uint8Array {
  if (poolPos + 16 > pool.length) {
    pool = randomBytes(4096);
    poolPos = 0;
  }
  const b = pool.slice(poolPos, poolPos + 16);
  poolPos += 16;
  return b;
}

let seq = 0;
export function uuidv7(now: number = Date.now()): string {
  if (now <= lastMs) {
    seq++;
    if (seq > 0xfff) {
      lastMs++;
      seq = 0;
    }
    now = lastMs;
  } else {
    lastMs = now;
    seq = 0;
  }
  const b = nextRandom16();
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

export { randomUuid } from "./platform.js";
