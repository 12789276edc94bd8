/**
 * Every web feature, in the order their routes are mounted (web/app.ts), and the OpenAPI paths they publish. A new
 * feature is a folder with an index.ts exporting a WebFeature, and one line here.
 */
import type { Operations } from "./api/openapi/document.js";
import { admin } from "./admin/index.js";
import { agents } from "./agents/index.js";
import { alerts } from "./alerts/index.js";
import { auth } from "./auth/index.js";
import { costs } from "./costs/index.js";
import { datasets } from "./datasets/index.js";
import { evaluation } from "./evaluation/index.js";
import type { WebFeature } from "./feature.js";
import { humanInput } from "./human-input/index.js";
import { mcp } from "./mcp/index.js";
import { otlp } from "./otlp/index.js";
import { INGEST_OPERATIONS } from "./ingest/ingest-openapi.js";
import { projects } from "./projects/index.js";
import { prompts } from "./prompts/index.js";
import { query } from "./query/index.js";
import { runs } from "./runs/index.js";
import { settings } from "./settings/index.js";

export const WEB_FEATURES: readonly WebFeature[] = [runs, otlp, humanInput, agents, datasets, prompts, evaluation, alerts, costs, query, auth, settings, admin, projects, mcp];

/** The public API's paths: ingest's (mounted ahead of the router, web/app.ts) and every feature's. */
export const API_OPERATIONS: Operations = Object.assign({}, INGEST_OPERATIONS, ...WEB_FEATURES.map((f) => f.openapi ?? {}));
