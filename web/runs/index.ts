/** Runs, their traces, sessions and scores: the read API and the dashboard's run pages. */
import type { WebFeature } from "../feature.js";
import { registerDashboardPage } from "./dashboard-page.js";
import { registerRunPage } from "./run-page.js";
import { registerRunsApi } from "./runs-api.js";
import { RUNS_OPERATIONS } from "./runs-openapi.js";
import { registerScoresApi } from "./scores-api.js";
import { registerScoresPage } from "./scores-page.js";
import { registerSessionsApi } from "./sessions-api.js";
import { registerSessionsPage } from "./sessions-page.js";

export const runs: WebFeature = {
  name: "runs",
  register(router, deps, apiKeys) {
    registerRunsApi(router, deps, apiKeys);
    registerScoresApi(router, deps, apiKeys);
    registerSessionsApi(router, deps, apiKeys);
    registerDashboardPage(router, deps);
    registerRunPage(router, deps);
    registerScoresPage(router, deps);
    registerSessionsPage(router, deps);
  },
  openapi: RUNS_OPERATIONS,
};
