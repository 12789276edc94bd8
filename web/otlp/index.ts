/** OpenTelemetry's reads beyond traces: log records (the OTLP receivers themselves are mounted by web/app.ts). */
import type { WebFeature } from "../feature.js";
import { registerLogsApi, registerLogsPage } from "./logs-api.js";
import { LOGS_OPERATIONS } from "./logs-openapi.js";

export const otlp: WebFeature = {
  name: "otlp",
  apis: [registerLogsApi],
  pages: [registerLogsPage],
  openapi: LOGS_OPERATIONS,
};
