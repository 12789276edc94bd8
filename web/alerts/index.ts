/** Alerts: the rules page and its notifications, the learned baselines' API, SLOs (API and page); the engine is alerts/. */
import type { WebFeature } from "../feature.js";
import { registerAlertsPage } from "./alerts-page.js";
import { registerBaselinesApi } from "./baselines-api.js";
import { BASELINES_OPERATIONS } from "./baselines-openapi.js";
import { registerSlosApi } from "./slos-api.js";
import { SLOS_OPERATIONS } from "./slos-openapi.js";
import { registerSlosPage } from "./slos-page.js";

export const alerts: WebFeature = {
  name: "alerts",
  apis: [registerBaselinesApi, registerSlosApi],
  pages: [registerAlertsPage, registerSlosPage],
  openapi: { ...BASELINES_OPERATIONS, ...SLOS_OPERATIONS },
};
