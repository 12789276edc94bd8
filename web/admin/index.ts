/** The instance's administration: projects and users, and the dead letters. */
import type { WebFeature } from "../feature.js";
import { registerDeadLettersPage } from "./dead-letters-page.js";
import { registerAdminRoutes } from "./routes.js";

export const admin: WebFeature = {
  name: "admin",
  apis: [registerAdminRoutes],
  pages: [registerDeadLettersPage],
};
