/** Runs, their traces, sessions and scores: the read API and the dashboard's run pages. */
import type { WebFeature } from "../feature.js";
import { registerDashboardPage } from "./dashboard-page.js";
import { registerGraphApi } from "./graph-api.js";
import { registerGraphPage } from "./graph-page.js";
import { registerRunPage } from "./run-page.js";
import { registerRunsApi } from "./runs-api.js";
import { RUNS_OPERATIONS } from "./runs-openapi.js";
import { registerScoresApi } from "./scores-api.js";
import { registerScoresPage } from "./scores-page.js";
import { registerSessionsApi } from "./sessions-api.js";
import { registerSessionsPage } from "./sessions-page.js";

export const runs: WebFeature = {
  name: "runs",
  apis: [registerRunsApi, registerGraphApi, registerScoresApi, registerSessionsApi],
  pages: [registerDashboardPage, registerRunPage, registerGraphPage, registerScoresPage, registerSessionsPage],
  openapi: RUNS_OPERATIONS,
};
