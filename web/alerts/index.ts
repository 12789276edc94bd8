/** Alerts: the rules page and its notifications (the engine is alerts/). */
import type { WebFeature } from "../feature.js";
import { registerAlertsPage } from "./alerts-page.js";

export const alerts: WebFeature = {
  name: "alerts",
  pages: [registerAlertsPage],
};
