/**
 * Which lane of the event log an append goes to (lanes.ts): a tenant that appended more than `bulkAfterBytes` of
 * records within `windowSec` is a bulk tenant for the next `holdSec` seconds, and its appends go to the bulk lane.
 * Bytes, not requests: a record's processing cost follows its size (one OTLP export record holds up to 20,000 spans).
 *
 * The meter is per process (rate-limiter-flexible in memory): in scale mode each ingest process judges the tenants
 * it serves, so behind N ingest processes a tenant turns bulk at up to N times the threshold. The bulk lane is a
 * matter of latency, not of admission (quotas are the limiter's), so a shared counter would buy little.
 */
import { RateLimiterMemory } from "rate-limiter-flexible";
import { EXPORT_RECORD_KEY_PREFIX } from "../events/export-record.js";

export type Lane = "main" | "bulk";

export interface LaneSettings {
  /** Bytes of records a tenant may append per window and stay in the main lane; 0 turns the bulk lane off. */
  readonly bulkAfterBytes: number;
  readonly windowSec: number;
  /** How long a tenant stays in the bulk lane once it went over. */
  readonly holdSec: number;
}

/** The tenant of a log key: `<user>:<run>` (an event) or `otlp:<user>` (an OTLP export record). */
export function tenantOfKey(key: string): string {
  if (key.startsWith(EXPORT_RECORD_KEY_PREFIX)) return key.slice(EXPORT_RECORD_KEY_PREFIX.length);
  const colon = key.indexOf(":");
  return colon < 0 ? key : key.slice(0, colon);
}

const KIB = 1024;

export class LaneRouter {
  private readonly meter: RateLimiterMemory | undefined;

  constructor(settings: LaneSettings) {
    this.meter = settings.bulkAfterBytes > 0
      ? new RateLimiterMemory({
          keyPrefix: "lane",
          points: Math.max(1, Math.ceil(settings.bulkAfterBytes / KIB)),
          duration: settings.windowSec,
          blockDuration: settings.holdSec,
        })
      : undefined;
  }

  /** The lane for an append of `bytes` whose records all belong to `keys`' tenant (mixed tenants go to main). */
  async laneFor(keys: readonly string[], bytes: number): Promise<Lane> {
    if (!this.meter || keys.length === 0) return "main";
    const tenant = tenantOfKey(keys[0]!);
    for (let i = 1; i < keys.length; i++) if (tenantOfKey(keys[i]!) !== tenant) return "main";
    try {
      await this.meter.consume(tenant, Math.max(1, Math.ceil(bytes / KIB)));
      return "main";
    } catch (res) {
      if (res instanceof Error) throw res;
      return "bulk";
    }
  }
}
