/**
 * OTLP metric exports (ExportMetricsServiceRequest), protobuf and JSON: Runwatch keeps no metrics (it derives token,
 * cost and duration series from spans), so an export is only counted: every data point is answered as rejected in
 * partial_success, with the reason, and the exporter goes on (an SDK that exports traces, logs and metrics to one
 * endpoint is never refused). A body that is not a metrics export is still a 400, like any other signal's.
 */
import { field, isObj, list } from "./otlp-json.js";
import { load } from "./otlp-protobuf.js";
import { MalformedExport } from "./trace-model.js";

/** The data-point kinds of a Metric (its `data` oneof). */
const DATA_KINDS = ["gauge", "sum", "histogram", "exponentialHistogram", "summary"] as const;
const SNAKE: Record<string, string> = { exponentialHistogram: "exponential_histogram" };

interface PbMetric { readonly [kind: string]: { readonly dataPoints?: readonly unknown[] } | unknown }
interface PbMetricsRequest {
  readonly resourceMetrics: readonly { readonly scopeMetrics: readonly { readonly metrics: readonly PbMetric[] }[] }[];
}

/** The number of data points of a Metric object (protobufjs or OTLP/JSON). */
function pointsOf(metric: Record<string, unknown>, json: boolean): number {
  for (const kind of DATA_KINDS) {
    const data = json ? field(metric, kind, SNAKE[kind] ?? kind) : metric[kind];
    if (!isObj(data)) continue;
    const points = json ? field(data, "dataPoints", "data_points") : data.dataPoints;
    return Array.isArray(points) ? points.length : 0;
  }
  return 0;
}

/** How many data points an export holds; MalformedExport when the body is not an ExportMetricsServiceRequest. */
export function countMetricPoints(body: Uint8Array, format: "protobuf" | "json"): number {
  let n = 0;
  if (format === "protobuf") {
    let req: PbMetricsRequest;
    try {
      req = load().metricsRequest.decode(body) as unknown as PbMetricsRequest;
    } catch (err) {
      throw new MalformedExport(`the body is not an OTLP ExportMetricsServiceRequest (protobuf): ${(err as Error).message}`);
    }
    for (const rm of req.resourceMetrics) for (const sm of rm.scopeMetrics) for (const m of sm.metrics) n += pointsOf(m as Record<string, unknown>, false);
    return n;
  }
  let req: unknown;
  try {
    req = JSON.parse(Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString("utf8"));
  } catch (err) {
    throw new MalformedExport(`the body is not valid JSON: ${(err as Error).message}`);
  }
  if (!isObj(req)) throw new MalformedExport('the body must be an OTLP/JSON ExportMetricsServiceRequest, an object like {"resourceMetrics": [...]}');
  list(req, "resourceMetrics", "resource_metrics", "body").forEach((rm, i) => {
    if (!isObj(rm)) throw new MalformedExport(`resourceMetrics[${i}] must be an object`);
    list(rm, "scopeMetrics", "scope_metrics", `resourceMetrics[${i}]`).forEach((sm, j) => {
      if (!isObj(sm)) throw new MalformedExport(`resourceMetrics[${i}].scopeMetrics[${j}] must be an object`);
      for (const m of list(sm, "metrics", "metrics", `resourceMetrics[${i}].scopeMetrics[${j}]`)) if (isObj(m)) n += pointsOf(m, true);
    });
  });
  return n;
}

/** What partial_success says of the points not kept. */
export const METRICS_NOT_KEPT =
  "Runwatch does not store OTLP metrics: it derives token, cost and duration metrics from spans (docs/OTEL.md, Metrics); send traces and logs";
