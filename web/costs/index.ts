/** Costs: spend by agent, model and day. */
import type { WebFeature } from "../feature.js";
import { registerCostsPage } from "./costs-page.js";

export const costs: WebFeature = {
  name: "costs",
  pages: [registerCostsPage],
};
