/**
 * The tables a project's members query with SQL (query/): each is the SELECT the server writes as a CTE in front of
 * the member's query, reading one physical table of the app's database (named with it: the member's query runs in
 * an empty database) with the project's id written in as an integer literal. The member's SQL cannot name a physical
 * table or another database (query/ checks its syntax tree), so these SELECTs are all it can read.
 *
 * Rows are each record's latest version, as the app's pages read them (FINAL on the ReplacingMergeTree tables).
 * Datasets and their items live in Postgres and are not here; an experiment's results are its runs (runs with an
 * experiment_id), with their scores in `scores`.
 */

export interface QueryColumnDoc {
  readonly name: string;
  /** The type the engine gives the column (checked by stores/query/tables.test.ts). */
  readonly type: string;
  readonly description: string;
}

export interface QueryTableDef {
  readonly name: string;
  readonly description: string;
  readonly columns: readonly QueryColumnDoc[];
  /** The table's SELECT over `db` for project `projectId`, its columns in the order of `columns`. */
  readonly select: (db: string, projectId: number) => string;
}

const c = (name: string, type: string, description: string): QueryColumnDoc => ({ name, type, description });
const T = "DateTime64(3, 'UTC')";
const NT = `Nullable(${T})`;

const RUN_COLUMNS = `run_id, external_id AS sdk_run_id, agent_name, status, config_version, started_at, ended_at, last_event_at,
  if(started_at IS NULL OR ended_at IS NULL, NULL, toFloat64(dateDiff('millisecond', started_at, ended_at))) AS duration_ms,
  model, prompt_tokens, completion_tokens, total_tokens, cost_usd, cost_source, framework, event_count, error_count,
  llm_calls, last_error, session_id, tags, metadata, end_user, environment, release, experiment_id, dataset_item_id,
  repetition, input_preview, output_preview`;

const runColumns: readonly QueryColumnDoc[] = [
  c("run_id", "UUID", "The run's id (the app's)."),
  c("sdk_run_id", "String", "The run's id as the SDK sent it."),
  c("agent_name", "String", "The agent that ran."),
  c("status", "LowCardinality(String)", "running, waiting_for_input, success or error."),
  c("config_version", "Nullable(UInt32)", "The agent's config version the run used, if it said."),
  c("started_at", NT, "When the run started (UTC)."),
  c("ended_at", NT, "When it ended; null while running."),
  c("last_event_at", T, "Its latest event's time."),
  c("duration_ms", "Nullable(Float64)", "ended_at − started_at in milliseconds; null until it ends."),
  c("model", "LowCardinality(String)", "The model its run_end named."),
  c("prompt_tokens", "UInt64", "Prompt tokens of the run."),
  c("completion_tokens", "UInt64", "Completion tokens of the run."),
  c("total_tokens", "UInt64", "All tokens of the run."),
  c("cost_usd", "Float64", "The run's cost in US dollars."),
  c("cost_source", "LowCardinality(String)", "Where the cost came from: reported, computed from prices, or none."),
  c("framework", "LowCardinality(String)", "The framework its run_start named."),
  c("event_count", "UInt32", "Events stored for the run."),
  c("error_count", "UInt32", "Error events of the run."),
  c("llm_calls", "UInt32", "LLM calls of the run."),
  c("last_error", "String", "The latest error's message."),
  c("session_id", "String", "The session the run belongs to ('' for none)."),
  c("tags", "Array(String)", "Its tags, sorted."),
  c("metadata", "Map(String, String)", "Its metadata: key → value as JSON text."),
  c("end_user", "String", "The end user it ran for."),
  c("environment", "LowCardinality(String)", "Where it ran (production, staging, …)."),
  c("release", "String", "The agent's build or version."),
  c("experiment_id", "String", "The experiment that ran it ('' for none)."),
  c("dataset_item_id", "String", "The dataset item an experiment ran it on."),
  c("repetition", "UInt16", "Which repetition of the item within the experiment."),
  c("input_preview", "String", "The start of its input."),
  c("output_preview", "String", "The start of its output."),
];

const runs: QueryTableDef = {
  name: "runs",
  description: "One row per agent run, at its latest state.",
  columns: runColumns,
  select: (db, pid) => `SELECT ${RUN_COLUMNS} FROM ${db}.agent_runs FINAL WHERE project_id = ${pid}`,
};

const events: QueryTableDef = {
  name: "events",
  description: "Every event the runs sent, as stored (payload as JSON text: read fields with JSONExtract*).",
  columns: [
    c("event_id", "UUID", "The event's id (UUIDv7: orders events as they were processed)."),
    c("run_id", "UUID", "Its run (runs.run_id)."),
    c("sdk_run_id", "String", "Its run as the SDK named it."),
    c("event_type", "LowCardinality(String)", "run_start, run_end, error, step, tool_call, human_input_requested, human_input_received, …"),
    c("agent_name", "String", "The agent that sent it."),
    c("config_version", "Nullable(UInt32)", "The agent's config version, if sent."),
    c("span_id", "String", "The span it belongs to ('' for none)."),
    c("parent_span_id", "String", "That span's parent ('' for none)."),
    c("payload", "String", "The event's payload, JSON text."),
    c("occurred_at", T, "When it happened (the client's clock)."),
    c("received_at", T, "When the server received it."),
  ],
  select: (db, pid) =>
    `SELECT event_id, run_id, sdk_run_id, event_type, agent_name, config_version, span_id, parent_span_id, payload, occurred_at, received_at
     FROM ${db}.agent_events FINAL WHERE project_id = ${pid}`,
};

/** One row per span sent with a span id (step and tool_call events), made from its start and end events. */
const spans: QueryTableDef = {
  name: "spans",
  description: "One row per span (step or tool call) sent with a span id: its start and end events folded.",
  columns: [
    c("run_id", "UUID", "Its run (runs.run_id)."),
    c("sdk_run_id", "String", "Its run as the SDK named it."),
    c("span_id", "String", "The span's id."),
    c("parent_span_id", "String", "Its parent span ('' for a root)."),
    c("agent_name", "String", "The agent that sent it."),
    c("kind", "String", "tool for a tool call; else the step's kind (step, llm, retrieval, agent, …)."),
    c("name", "String", "The tool's name or the step's node name."),
    c("started_at", T, "Its start event's time (its end's when no start was sent)."),
    c("ended_at", NT, "Its end event's time; null while it runs."),
    c("duration_ms", "Nullable(Float64)", "The end's duration_ms, else ended_at − started_at; null while it runs."),
    c("is_error", "UInt8", "1 when its end carries an error."),
  ],
  select: (db, pid) => `SELECT run_id, any(sdk_run_id) AS sdk_run_id, span_id, max(parent_span_id) AS parent_span_id, any(agent_name) AS agent_name,
      if(max(event_type = 'tool_call'), 'tool', if(max(JSONExtractString(payload, 'kind')) AS k != '', k, 'step')) AS kind,
      max(JSONExtractString(payload, if(event_type = 'tool_call', 'tool_name', 'node_name'))) AS name,
      if(countIf(phase = 'start') > 0, minIf(occurred_at, phase = 'start'), min(occurred_at)) AS started_at,
      if(countIf(phase = 'end') > 0, maxIf(occurred_at, phase = 'end'), NULL) AS ended_at,
      if(ended_at IS NULL, NULL, ifNull(maxIf(JSONExtract(payload, 'duration_ms', 'Nullable(Float64)'), phase = 'end'),
        toFloat64(dateDiff('millisecond', started_at, assumeNotNull(ended_at))))) AS duration_ms,
      toUInt8(max(phase = 'end' AND JSONExtractRaw(payload, 'error') NOT IN ('', 'null', '""', 'false'))) AS is_error
    FROM (SELECT run_id, sdk_run_id, span_id, parent_span_id, agent_name, event_type, payload, occurred_at, JSONExtractString(payload, 'phase') AS phase
          FROM ${db}.agent_events FINAL WHERE project_id = ${pid} AND event_type IN ('step', 'tool_call') AND span_id != '')
    GROUP BY run_id, span_id`,
};

const llmCalls: QueryTableDef = {
  name: "llm_calls",
  description: "One row per LLM call the runs reported (an llm span's end, or an OpenTelemetry GenAI span).",
  columns: [
    c("run_id", "UUID", "Its run (runs.run_id)."),
    c("sdk_run_id", "String", "Its run as the SDK named it."),
    c("call_id", "String", "The call's id within the run."),
    c("span_id", "String", "Its span ('' for none)."),
    c("parent_span_id", "String", "Its parent span."),
    c("agent_name", "LowCardinality(String)", "The agent that made it."),
    c("config_version", "Nullable(UInt32)", "The agent's config version."),
    c("name", "String", "The call's name."),
    c("model", "LowCardinality(String)", "The model called."),
    c("provider", "LowCardinality(String)", "The model's provider."),
    c("prompt_tokens", "UInt64", "Prompt tokens."),
    c("completion_tokens", "UInt64", "Completion tokens."),
    c("total_tokens", "UInt64", "All tokens."),
    c("cached_tokens", "UInt64", "Prompt tokens read from the provider's cache."),
    c("cache_write_tokens", "UInt64", "Prompt tokens written to the provider's cache."),
    c("reasoning_tokens", "UInt64", "Reasoning tokens."),
    c("cost_usd", "Float64", "Its cost in US dollars."),
    c("cost_source", "LowCardinality(String)", "Where the cost came from."),
    c("status", "LowCardinality(String)", "ok or error."),
    c("started_at", T, "When it started."),
    c("ended_at", T, "When it ended."),
    c("duration_ms", "UInt64", "How long it took."),
    c("day", "Date", "The day it started (UTC)."),
    c("prompt_name", "String", "The prompt it used (docs/PROMPTS.md); '' for none."),
    c("prompt_version", "UInt32", "That prompt's version; 0 for none."),
  ],
  select: (db, pid) =>
    `SELECT run_id, sdk_run_id, call_id, span_id, parent_span_id, agent_name, config_version, name, model, provider, prompt_tokens,
       completion_tokens, total_tokens, cached_tokens, cache_write_tokens, reasoning_tokens, cost_usd, cost_source, status, started_at,
       ended_at, duration_ms, day, prompt_name, prompt_version
     FROM ${db}.llm_calls FINAL WHERE project_id = ${pid}`,
};

const scores: QueryTableDef = {
  name: "scores",
  description: "Every score given to a run or a span (by an evaluator, a reviewer or the API).",
  columns: [
    c("score_id", "UUID", "The score's id."),
    c("run_id", "UUID", "The run scored (runs.run_id)."),
    c("sdk_run_id", "String", "That run as the SDK named it."),
    c("span_id", "String", "The span scored ('' for the run)."),
    c("name", "String", "The score's name."),
    c("value_type", "LowCardinality(String)", "number, boolean or string."),
    c("value_number", "Float64", "A number score's value, or a boolean's as 1/0."),
    c("value_string", "String", "A string score's value."),
    c("comment", "String", "The comment given with it."),
    c("source", "LowCardinality(String)", "The sender's own word: api, human, llm_judge, check or otel."),
    c("given_by", "LowCardinality(String)", "Who gave it, as the server saw it: evaluator, reviewer, member_key, key or event."),
    c("evaluator_id", "String", "The evaluator that gave it ('' for none)."),
    c("evaluator_version", "UInt32", "That evaluator's version."),
    c("created_at", T, "When it was given."),
  ],
  select: (db, pid) =>
    `SELECT score_id, run_id, sdk_run_id, span_id, name, value_type, value_number, value_string, comment, source, given_by, evaluator_id,
       evaluator_version, created_at
     FROM ${db}.scores FINAL WHERE project_id = ${pid}`,
};

const sessions: QueryTableDef = {
  name: "sessions",
  description: "One row per session (runs sharing a session_id).",
  columns: [
    c("session_id", "String", "The session's id."),
    c("run_count", "UInt64", "Its runs."),
    c("first_started_at", T, "Its first run's start."),
    c("last_activity_at", T, "Its latest event."),
    c("total_tokens", "UInt64", "Tokens of its runs."),
    c("total_cost_usd", "Float64", "Cost of its runs."),
    c("error_runs", "UInt64", "Its runs that ended in error."),
    c("agent_names", "Array(String)", "The agents that ran in it, sorted."),
  ],
  select: (db, pid) =>
    `SELECT session_id, count() AS run_count, min(ifNull(started_at, last_event_at)) AS first_started_at, max(last_event_at) AS last_activity_at,
       sum(total_tokens) AS total_tokens, sum(cost_usd) AS total_cost_usd, countIf(status = 'error') AS error_runs,
       arraySort(groupUniqArray(agent_name)) AS agent_names
     FROM ${db}.agent_runs FINAL WHERE project_id = ${pid} AND session_id != '' GROUP BY session_id`,
};

const costs: QueryTableDef = {
  name: "costs",
  description: "Spend per day, agent and model: the runs' own figures, on the day each run started (UTC).",
  columns: [
    c("day", "Date", "The day (UTC)."),
    c("agent_name", "LowCardinality(String)", "The agent."),
    c("model", "LowCardinality(String)", "The model its runs named."),
    c("runs", "UInt64", "Runs started that day."),
    c("prompt_tokens", "UInt64", "Their prompt tokens."),
    c("completion_tokens", "UInt64", "Their completion tokens."),
    c("total_tokens", "UInt64", "All their tokens."),
    c("cost_usd", "Float64", "Their cost in US dollars."),
  ],
  select: (db, pid) =>
    `SELECT day, agent_name, model, count() AS runs, sum(prompt_tokens) AS prompt_tokens, sum(completion_tokens) AS completion_tokens,
       sum(total_tokens) AS total_tokens, sum(cost_usd) AS cost_usd
     FROM ${db}.run_costs FINAL WHERE project_id = ${pid} GROUP BY day, agent_name, model`,
};

const experimentResults: QueryTableDef = {
  name: "experiment_results",
  description: "One row per run an experiment made (an item of its dataset, one repetition); join scores on run_id for its scores.",
  columns: [
    c("experiment_id", "String", "The experiment."),
    c("dataset_item_id", "String", "The dataset item it ran on."),
    c("repetition", "UInt16", "Which repetition of the item."),
    c("run_id", "UUID", "The run (runs.run_id)."),
    c("sdk_run_id", "String", "The run as the SDK named it."),
    c("agent_name", "String", "The agent."),
    c("config_version", "Nullable(UInt32)", "The agent's config version."),
    c("status", "LowCardinality(String)", "The run's status."),
    c("duration_ms", "Nullable(Float64)", "The run's duration."),
    c("total_tokens", "UInt64", "Its tokens."),
    c("cost_usd", "Float64", "Its cost."),
    c("output_preview", "String", "The start of its output."),
    c("started_at", NT, "When it started."),
  ],
  select: (db, pid) =>
    `SELECT experiment_id, dataset_item_id, repetition, run_id, external_id AS sdk_run_id, agent_name, config_version, status,
       if(started_at IS NULL OR ended_at IS NULL, NULL, toFloat64(dateDiff('millisecond', started_at, ended_at))) AS duration_ms,
       total_tokens, cost_usd, output_preview, started_at
     FROM ${db}.agent_runs FINAL WHERE project_id = ${pid} AND experiment_id != ''`,
};

/** Every table, in the order the docs list them. */
export const QUERY_TABLE_DEFS: readonly QueryTableDef[] = [runs, spans, llmCalls, events, scores, sessions, costs, experimentResults];

/**
 * The tables as CTEs for project `projectId` over database `db`: `WITH runs AS (…), … ` — the text the server puts in
 * front of a member's query. Only integer project ids and plain database names are written in.
 */
export function queryTableCtes(db: string, projectId: number): string {
  if (!Number.isSafeInteger(projectId) || projectId < 0) throw new Error(`invalid project id ${projectId}`);
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(db)) throw new Error(`invalid database name ${JSON.stringify(db)}`);
  return `WITH ${QUERY_TABLE_DEFS.map((t) => `${t.name} AS (${t.select(`\`${db}\``, projectId)})`).join(",\n")}`;
}
