/** Agents: their config versions (API and pages), activation and its gate, and code improvement. */
import type { WebFeature } from "../feature.js";
import { registerAgentActivationApi } from "./agent-activation-api.js";
import { registerAgentConfigApi } from "./agent-config-api.js";
import { AGENTS_OPERATIONS } from "./agents-openapi.js";
import { registerAgentsPage } from "./agents-page.js";
import { registerImprovePage } from "./improve-page.js";

export const agents: WebFeature = {
  name: "agents",
  apis: [registerAgentConfigApi, registerAgentActivationApi],
  pages: [registerAgentsPage, registerImprovePage],
  openapi: AGENTS_OPERATIONS,
};
