import type Router from "@koa/router";
import type { WebDeps } from "../deps.js";
import * as dashboard from "./dashboard.js";
import * as run from "./run.js";
import * as agents from "./agents.js";
import * as alerts from "./alerts.js";
import * as costs from "./costs.js";
import * as realtimeToken from "./realtime-token.js";
import * as improve from "./improve.js";
import * as settings from "./settings.js";
import * as deadLetters from "./dead-letters.js";
import * as scores from "./scores.js";
import * as sessions from "./sessions.js";
import * as datasets from "./datasets.js";
import * as experiments from "./experiments.js";
import * as evaluators from "./evaluators.js";
import * as queues from "./queues.js";

/**
 * Mounts the session-authenticated dashboard pages (/dashboard, /dashboard/:run, /errors, /agents, /alerts,
 * /costs) and GET /api/realtime/token. Each page module exports register(router, deps); add one line per module.
 */
export function registerPages(router: Router, deps: WebDeps): void {
  dashboard.register(router, deps);
  run.register(router, deps);
  agents.register(router, deps);
  alerts.register(router, deps);
  costs.register(router, deps);
  realtimeToken.register(router, deps);
  improve.register(router, deps);
  settings.register(router, deps);
  deadLetters.register(router, deps);
  scores.register(router, deps);
  sessions.register(router, deps);
  datasets.register(router, deps);
  experiments.register(router, deps);
  evaluators.register(router, deps);
  queues.register(router, deps);
}
