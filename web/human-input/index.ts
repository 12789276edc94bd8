/** Human input: a run's questions answered from the API, the SDKs or the run page. */
import type { WebFeature } from "../feature.js";
import { registerHumanInputApi } from "./human-input-api.js";
import { HUMAN_INPUT_OPERATIONS } from "./human-input-openapi.js";
import { registerHumanInputPage } from "./human-input-page.js";

export const humanInput: WebFeature = {
  name: "human-input",
  apis: [registerHumanInputApi],
  pages: [registerHumanInputPage],
  openapi: HUMAN_INPUT_OPERATIONS,
};
