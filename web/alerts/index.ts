/** Alerts: the rules page and its notifications, and the learned baselines' API (the engine is alerts/). */
import type { WebFeature } from "../feature.js";
import { registerAlertsPage } from "./alerts-page.js";
import { registerBaselinesApi } from "./baselines-api.js";
import { BASELINES_OPERATIONS } from "./baselines-openapi.js";

export const alerts: WebFeature = {
  name: "alerts",
  apis: [registerBaselinesApi],
  pages: [registerAlertsPage],
  openapi: BASELINES_OPERATIONS,
};
