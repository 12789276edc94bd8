/**
 * A log export too large for one export record (MAX_EXPORT_RECORD_BODY_BYTES: a record must fit a Kafka message) as
 * several smaller exports of the same records, each re-encoded in the request's format. Halved until each part
 * fits; a single record that alone is larger is refused (partial_success names it). Rare (an SDK sends 512 records
 * a batch, a collector 8,192), so this path re-encodes rather than keeping byte offsets on the common one.
 */
import { field, isObj } from "./otlp-json.js";
import { load } from "./otlp-protobuf.js";
import { MalformedExport } from "./trace-model.js";
import type { OtlpFormat } from "../core/events/export-record.js";

type Tree = Record<string, unknown>;
/** One record with the resource and scope it came under. */
interface Placed { readonly resource: Tree; readonly scope: Tree; readonly record: unknown; readonly index: number }

export interface SplitLogs {
  readonly bodies: Uint8Array[];
  /** Records alone larger than a part may be (their reasons for partial_success). */
  readonly refused: string[];
}

const children = (o: Tree, camel: string, snake: string): unknown[] => {
  const v = field(o, camel, snake);
  return Array.isArray(v) ? v : [];
};

function placed(req: Tree): Placed[] {
  const out: Placed[] = [];
  let index = 0;
  for (const rl of children(req, "resourceLogs", "resource_logs")) {
    if (!isObj(rl)) continue;
    for (const sl of children(rl, "scopeLogs", "scope_logs")) {
      if (!isObj(sl)) continue;
      for (const record of children(sl, "logRecords", "log_records")) out.push({ resource: rl, scope: sl, record, index: index++ });
    }
  }
  return out;
}

/** A request of these records, each under a copy of its resource and scope (without their other records). */
function requestOf(list: readonly Placed[]): Tree {
  const resources: Tree[] = [];
  let lastResource: Tree | undefined;
  let lastScope: Tree | undefined;
  let scopeOut: { logRecords: unknown[] } | undefined;
  let resourceOut: { scopeLogs: unknown[] } | undefined;
  for (const p of list) {
    if (p.resource !== lastResource) {
      resourceOut = { ...(p.resource.resource !== undefined ? { resource: p.resource.resource } : {}), scopeLogs: [] };
      resources.push(resourceOut as unknown as Tree);
      lastResource = p.resource;
      lastScope = undefined;
    }
    if (p.scope !== lastScope) {
      scopeOut = { ...(p.scope.scope !== undefined ? { scope: p.scope.scope } : {}), logRecords: [] };
      resourceOut!.scopeLogs.push(scopeOut);
      lastScope = p.scope;
    }
    scopeOut!.logRecords.push(p.record);
  }
  return { resourceLogs: resources };
}

export function splitLogsBody(body: Uint8Array, format: OtlpFormat, maxPartBytes: number): SplitLogs {
  let req: Tree;
  let encode: (r: Tree) => Uint8Array;
  if (format === "protobuf") {
    const t = load().logsRequest;
    try {
      req = t.toObject(t.decode(body)) as Tree;
    } catch (err) {
      throw new MalformedExport(`the body is not an OTLP ExportLogsServiceRequest (protobuf): ${(err as Error).message}`);
    }
    encode = (r) => t.encode(t.fromObject(r)).finish();
  } else {
    try {
      req = JSON.parse(Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString("utf8")) as Tree;
    } catch (err) {
      throw new MalformedExport(`the body is not valid JSON: ${(err as Error).message}`);
    }
    encode = (r) => Buffer.from(JSON.stringify(r));
  }
  const bodies: Uint8Array[] = [];
  const refused: string[] = [];
  const put = (list: readonly Placed[]): void => {
    if (list.length === 0) return;
    const bytes = encode(requestOf(list));
    if (bytes.byteLength <= maxPartBytes) return void bodies.push(bytes);
    if (list.length === 1) return void refused.push(`log record ${list[0]!.index}: larger than ${maxPartBytes} bytes on its own`);
    const half = Math.ceil(list.length / 2);
    put(list.slice(0, half));
    put(list.slice(half));
  };
  put(placed(req));
  return { bodies, refused };
}
