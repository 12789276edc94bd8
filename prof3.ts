import { decodeOtlpExport } from "./web/otlp/export-decode.ts";
import { exportProtobuf } from "./test/e2e/otlp-fixtures.ts";
import { exportSpans } from "./test/bench/otlp-payload.ts";
const bodies = Array.from({ length: 20 }, () => exportProtobuf(exportSpans()));
for (let i = 0; i < 100; i++) decodeOtlpExport(bodies[i % 20]!, "protobuf", false, 1, Date.now(), { maxBytes: 1 << 26 });
const t = performance.now(); const n = 300;
for (let i = 0; i < n; i++) decodeOtlpExport(bodies[i % 20]!, "protobuf", false, 1, Date.now(), { maxBytes: 1 << 26 });
const ms = (performance.now() - t) / n;
console.log("full", ms.toFixed(2), "ms/export", Math.round(512 / ms * 1000), "spans/s");
