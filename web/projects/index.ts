/** Projects: members, roles, invitations and the project's settings. */
import type { WebFeature } from "../feature.js";
import { registerProjectRoutes } from "./routes.js";

export const projects: WebFeature = {
  name: "projects",
  apis: [registerProjectRoutes],
};
