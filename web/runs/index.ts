/** Runs, their traces, sessions and scores: the read API, the runs explorer (views, charts, export) and the run pages. */
import type { WebFeature } from "../feature.js";
import { registerChartApi } from "./chart-api.js";
import { registerDashboardPage } from "./dashboard-page.js";
import { registerExportApi } from "./export-api.js";
import { registerFilterValuesApi } from "./filter-values-api.js";
import { registerGraphApi } from "./graph-api.js";
import { registerGraphPage } from "./graph-page.js";
import { registerRunPage } from "./run-page.js";
import { registerRunsApi } from "./runs-api.js";
import { RUNS_OPERATIONS } from "./runs-openapi.js";
import { EXPLORER_OPERATIONS } from "./explorer-openapi.js";
import { registerScoresApi } from "./scores-api.js";
import { registerScoresPage } from "./scores-page.js";
import { registerSessionsApi } from "./sessions-api.js";
import { registerSessionsPage } from "./sessions-page.js";
import { registerTraceApi } from "./trace-api.js";
import { registerTracePage } from "./trace-page.js";
import { TRACE_OPERATIONS } from "./trace-openapi.js";
import { registerViewsApi } from "./views-api.js";
import { registerViewsPage } from "./views-page.js";

export const runs: WebFeature = {
  name: "runs",
  // The explorer's /api/runs/… paths before GET /api/runs/{sdk_run_id}, which would take them for run ids.
  apis: [registerChartApi, registerExportApi, registerFilterValuesApi, registerViewsApi, registerRunsApi, registerTraceApi, registerGraphApi, registerScoresApi, registerSessionsApi],
  pages: [registerDashboardPage, registerViewsPage, registerRunPage, registerTracePage, registerGraphPage, registerScoresPage, registerSessionsPage],
  openapi: { ...RUNS_OPERATIONS, ...EXPLORER_OPERATIONS, ...TRACE_OPERATIONS },
};
