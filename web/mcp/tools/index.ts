/**
 * Every tool the MCP server offers, in the order a client lists them. A new tool is a module in this folder made
 * with defineTool (../tool.ts) and one line here.
 */
import type { McpTool } from "../tool.js";
import { addToDataset } from "./add-to-dataset.js";
import { addToQueue } from "./add-to-queue.js";
import { compareExperiments } from "./compare-experiments.js";
import { describeSqlSchema } from "./describe-sql-schema.js";
import { getExperiment } from "./get-experiment.js";
import { getRun } from "./get-run.js";
import { getScores } from "./get-scores.js";
import { getSpan } from "./get-span.js";
import { listAgentsTool } from "./list-agents.js";
import { listDatasetItems } from "./list-dataset-items.js";
import { listDatasetsTool } from "./list-datasets.js";
import { postScore } from "./post-score.js";
import { runSql } from "./run-sql.js";
import { searchRuns } from "./search-runs.js";
import { waitForRunTool } from "./wait-for-run.js";

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- each tool's shape differs; defineTool checked each one
export const TOOLS: readonly McpTool<any>[] = [
  searchRuns,
  getRun,
  getSpan,
  waitForRunTool,
  getScores,
  listAgentsTool,
  listDatasetsTool,
  listDatasetItems,
  getExperiment,
  compareExperiments,
  describeSqlSchema,
  runSql,
  addToDataset,
  addToQueue,
  postScore,
];
