/**
 * The runs explorer bench's dataset (test/bench/explorer.ts): a project of RUNS runs over DAYS days, with their LLM
 * calls (~10 a run: the "10 million spans"; their models also in each run's `models`), scores and events with their
 * search text, made by ClickHouse itself (INSERT … SELECT FROM numbers) rather than through ingest, so a million runs
 * take minutes instead of hours. Every value is a hash of
 * the run's number, so a dataset is the same each time it is made (apart from its anchor time).
 *
 * Shaped like a busy production project: ~20 agents of skewed traffic, ~5 % errors, three environments, releases
 * and config versions moving with time, 0–3 tags a run from 50 (skewed: `vip` on ~14 % of runs), metadata with a
 * high-cardinality customer id (200,000 values) and a few low-cardinality keys, end users, sessions of three runs, 8
 * models, heavy-tailed durations and costs, input/output previews, judge runs (3 %) and experiment runs (2 %) that
 * the list leaves out. 10 % of the runs have an older `running` version beside the final one (FINAL has versions to
 * fold), and the runs are written in chunks, so agent_runs has several overlapping parts as after a day of ingest.
 * A second project holds 2 % as many runs of the same shape, which no query of the first may list.
 */
import { existsSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import type { ClickHouse } from "../../core/ports/clickhouse.js";
import { openChdb } from "../../core/clickhouse/chdb.js";
import { migrateClickHouse } from "../../core/clickhouse/migrate.js";

export const PROJECT = 1;
export const OTHER_PROJECT = 2;
export const DAYS = 35;
const DAY_MS = 86_400_000;
/** Runs per INSERT into agent_runs: one part each. */
const CHUNK = 100_000;

/** What explorer.ts needs to know of a stored dataset (bench-dataset.json in the data dir). */
export interface DatasetInfo {
  readonly runs: number;
  /** ms: the newest run starts just before it; the bench's time filters count back from it. */
  readonly anchor: number;
  readonly generated_seconds: number;
  /** agent_runs' `models` (migration 251) is filled: made so, or filled by fillRunModels. */
  readonly run_models?: true;
  /** agent_runs' previews and metadata are LZ4 (migration 252): made so, or rewritten by recompressRuns. */
  readonly lz4_previews?: true;
}

const AGENTS = [
  "support-triage", "refund-bot", "order-tracker", "billing-assistant", "returns-desk", "onboarding-guide", "sales-qualifier",
  "kb-answerer", "escalation-router", "fraud-check", "invoice-reader", "shipping-updates", "account-recovery", "survey-summarizer",
  "churn-rescue", "catalog-search", "review-moderator", "translation-helper", "meeting-notes", "sql-analyst",
];
const MODELS = ["gpt-4o", "gpt-4o-mini", "claude-sonnet-4", "claude-haiku-4", "gemini-2.5-flash", "gemini-2.5-pro", "llama-3.1-70b", "o3-mini"];
/** USD per million tokens, in and out, by MODELS index. */
const PRICE_IN = [2.5, 0.15, 3, 0.8, 0.3, 1.25, 0.9, 1.1];
const PRICE_OUT = [10, 0.6, 15, 4, 2.5, 10, 0.9, 4.4];
export const TAGS = [
  "vip", "beta", "eu", "us", "apac", "mobile", "web", "api", "internal", "trial", "enterprise", "smb", "priority", "retry",
  "escalated", "voice", "email", "chat", "sandbox", "canary", "holiday", "promo", "b2b", "b2c", "new-user", "returning",
  "high-value", "low-value", "flagged", "reviewed", "golden", "regression", "long-context", "multimodal", "tool-heavy",
  "cached", "fallback", "streaming", "batch", "scheduled", "webhook", "slack", "teams", "zendesk", "intercom", "shopify",
  "stripe", "salesforce", "hubspot", "experiment-arm-b",
];
const INTENTS = ["refund", "cancel", "upgrade", "track", "return", "exchange", "reset the password for", "update the address on", "dispute a charge on", "ask about"];
const OBJECTS = ["my order", "the subscription", "the invoice", "a shipment", "my account", "the premium plan", "a gift card", "a warranty claim"];
const DETAILS = [
  "it arrived damaged and the box was open", "it never arrived even though tracking says delivered", "i was charged twice this month",
  "the item is the wrong size", "please hurry, i need it before friday", "i moved to a new city last week", "the app keeps crashing at checkout",
  "nobody answered my last three emails", "the discount code was not applied", "my card expired and i have a new one",
  "i already tried restarting the app and clearing the cache", "the courier left a note but i was home all day",
  "my colleague placed the order on my account by mistake", "the invoice shows the old company name and vat number",
  "i would like to speak to a human if this cannot be solved here", "the same thing happened with my previous order in march",
  "the tracking page has not been updated for six days", "i got an email saying the payment failed but the money left my account",
  "the product description said it was compatible with my model", "i need a copy of the receipt for my expense report",
];
const OUTPUTS = [
  "i have issued a full refund to your original payment method", "your order is on its way and should arrive within two days",
  "i cancelled the subscription; you keep access until the end of the billing period", "i updated the shipping address on the order",
  "i escalated your case to a specialist who will reply within 24 hours", "the duplicate charge has been reversed",
  "here is a prepaid return label for the item", "your password reset link has been sent to the email on file",
  "i checked the carrier's records and the parcel is at your local depot", "a replacement has been ordered at no cost to you",
  "i applied the discount retroactively and the difference will show on your next statement",
  "i could not find an order with that number; could you check the confirmation email?",
];
const ERRORS = [
  "timeout: the model did not answer within 30s", "ratelimiterror: 429 too many requests", "connection reset by peer",
  "validationerror: tool arguments did not match the schema", "keyerror: 'customer_id'", "guardrailerror: the output was blocked by policy",
];
const SPAN_NAMES = ["search_orders", "issue_refund", "send_email", "classify_intent", "retrieve_docs", "lookup_customer", "create_ticket", "summarize"];

const list = (values: readonly (string | number)[]) => `[${values.map((v) => (typeof v === "number" ? String(v) : `'${v.replace(/'/g, "\\'")}'`)).join(", ")}]`;
/** Uniform in [0, 1) from the run's number and a seed. */
const u = (seed: number | string) => `(cityHash64(n, ${seed}) % 1000000 / 1000000.0)`;
/** An element of `values` (1-based array of the SQL) picked by hash. */
const pick = (values: readonly string[], seed: number | string) => `${list(values)}[1 + cityHash64(n, ${seed}) % ${values.length}]`;
/** A UUID's text from 128 hashed bits. */
const uuidText = (seed: number) =>
  `lower(concat(leftPad(hex(cityHash64(n, ${seed})), 16, '0'), leftPad(hex(cityHash64(n, ${seed + 1})), 16, '0')))`;
const asUuid = (hex: string) => `concat(substring(${hex}, 1, 8), '-', substring(${hex}, 9, 4), '-4', substring(${hex}, 14, 3), '-a', substring(${hex}, 18, 3), '-', substring(${hex}, 21, 12))`;

/** The facts of runs n in [first, first + count) of a project whose runs are numbered from `base` (`total` of them). */
function runFacts(project: number, base: number, total: number, first: number, count: number, anchor: number): string {
  const span = DAYS * DAY_MS;
  return `SELECT n, ${project} AS project, toInt64(${anchor - span} + (n - ${base}) * ${span / total} + cityHash64(n, 1) % 60000) AS start_ms,
      toUInt64(800 + 120000 * pow(${u(2)}, 3)) AS dur,
      multiIf(start_ms > ${anchor - 600_000} AND ${u(3)} < 0.5, 'running', ${u(3)} < 0.05, 'error', ${u(3)} < 0.053, 'running',
              ${u(3)} < 0.055, 'waiting_for_input', 'success') AS status,
      status IN ('running', 'waiting_for_input') AS open,
      ${u(4)} < 0.03 AS judge,
      toUInt32(floor(${AGENTS.length} * pow(${u(5)}, 1.7))) AS agent_idx,
      toUInt32(floor(${MODELS.length} * pow(${u(7)}, 1.5))) AS model_idx,
      5 + cityHash64(n, 6) % 11 AS calls,
      toUInt32((n - ${base}) * ${DAYS} / ${total}) AS day_idx,
      multiIf(${u(8)} < 0.8, 'production', ${u(8)} < 0.95, 'staging', 'development') AS env,
      ${asUuid(uuidText(10))} AS external_id, toUUID(${asUuid(uuidText(12))}) AS run_id
    FROM (SELECT number AS n FROM numbers(${first}, ${count}))`;
}

// A call's facts, from the run's number n and the call's number c (the runs' totals are their sums).
const callModel = `if(cityHash64(n, c, 60) % 10 < 7, model_idx, ${list([1, 3, 4])}[1 + cityHash64(n, c, 61) % 3])`;
const callPrompt = "(200 + cityHash64(n, c, 62) % 2000)";
const callCompletion = "(20 + cityHash64(n, c, 63) % 400)";
const callCost = `(${callPrompt} * ${list(PRICE_IN)}[1 + ${callModel}] + ${callCompletion} * ${list(PRICE_OUT)}[1 + ${callModel}]) / 1e6`;
const overCalls = (expr: string) => `arraySum(arrayMap(c -> ${expr}, range(calls)))`;

// A customer's message and the agent's answer, ~150–400 characters each: sentences of a vocabulary around an order
// number, an email address and a reference, as support conversations go.
const INPUT = `concat('hi, i want to ', ${pick(INTENTS, 50)}, ' ', ${pick(OBJECTS, 51)}, ' #', toString(100000 + cityHash64(n, 52) % 900000), '. ',
  ${pick(DETAILS, 53)}, '. ', ${pick(DETAILS, 56)}, '.', if(${u(57)} < 0.5, concat(' ', ${pick(DETAILS, 58)}, '.'), ''),
  ' you can reach me at customer', toString(cityHash64(n, 24) % 50000), '@example.com')`;
const OUTPUT = `concat('thanks for reaching out. ', ${pick(OUTPUTS, 54)}, '. ', ${pick(OUTPUTS, 59)},
  '. your reference is ', lower(hex(cityHash64(n, 60))), '. is there anything else i can help with?')`;
const ERROR = `${pick(ERRORS, 55)}`;
/** A preview: the first 300 characters, a cut one ending with "…" (core/events/run-text.ts). */
const preview = (text: string) => `if(lengthUTF8(${text}) > 300, concat(substringUTF8(${text}, 1, 299), '…'), ${text})`;
const at = (ms: string) => `fromUnixTimestamp64Milli(toInt64(${ms}), 'UTC')`;

/** agent_runs rows: the final version of each run, or (`running`) an older version of every tenth. */
function runsInsert(facts: string, running: boolean): string {
  const tags = `arraySort(arrayDistinct(arrayMap(j -> ${list(TAGS)}[1 + toUInt32(${TAGS.length} * pow(cityHash64(n, 31, j) % 1000000 / 1000000.0, 2))], range(cityHash64(n, 30) % 4))))`;
  const metadata = `mapFilter((k, v) -> v != '', map(
      'customer', if(${u(40)} < 0.6, concat('"cust-', toString(cityHash64(n, 41) % 200000), '"'), ''),
      'plan', if(${u(42)} < 0.9, ${pick(['"free"', '"pro"', '"team"', '"enterprise"'], 43)}, ''),
      'tier', toString(1 + cityHash64(n, 44) % 5),
      'region', if(${u(45)} < 0.5, ${pick(['"eu-west-1"', '"us-east-1"', '"ap-south-1"'], 46)}, ''),
      'beta', if(${u(47)} < 0.1, 'true', '')))`;
  // As the pipeline folds them (plugins/llm-calls.ts): the calls' distinct models, sorted; the older version has them too.
  const models = `arraySort(arrayDistinct(arrayMap(c -> ${list(MODELS)}[1 + ${callModel}], range(calls))))`;
  const ended = running ? "NULL" : `if(open, NULL, ${at("start_ms + dur")})`;
  const lastEvent = running ? at("start_ms + dur / 3") : `if(open, ${at("start_ms + dur / 2")}, ${at("start_ms + dur")})`;
  return `INSERT INTO agent_runs (user_id, project_id, external_id, run_id, agent_name, status, status_at, started_at, ended_at, last_event_at,
      model, prompt_tokens, completion_tokens, total_tokens, cost_usd, cost_source, framework, config_version, event_count, error_count,
      last_error, pending_question, version, llm_calls, models, session_id, experiment_id, dataset_item_id, repetition, tags, metadata,
      end_user, environment, release, input_preview, output_preview)
    SELECT project, project, external_id, run_id, if(judge, 'runwatch-judge', ${list(AGENTS)}[1 + agent_idx]), ${running ? "'running'" : "status"},
      ${lastEvent}, ${at("start_ms")}, ${ended}, ${lastEvent}, ${list(MODELS)}[1 + model_idx],
      ${overCalls(callPrompt)} AS pt, ${overCalls(callCompletion)} AS ct, pt + ct, ${overCalls(callCost)}, 'computed',
      ${pick(["langgraph", "openai-agents", "custom"], 9)}, if(${u(13)} < 0.1, NULL, toUInt32(1 + day_idx / 5 + agent_idx % 3)),
      toUInt32(2 + 2 * calls + cityHash64(n, 14) % 6), toUInt32(status = 'error' OR ${u(15)} < 0.01),
      if(status = 'error' AND NOT ${running}, ${ERROR}, ''), if(status = 'waiting_for_input', 'approve a refund above the limit?', ''),
      ${running ? 1 : 2}, calls, ${models},
      if(${u(20)} < 0.6, concat('sess-', lower(hex(cityHash64(intDiv(n, 3), 20)))), ''),
      if(${u(21)} < 0.02, concat('experiment-', toString(cityHash64(n, 22) % 20)), ''),
      '', 0, ${tags}, ${metadata},
      if(${u(23)} < 0.7, concat('user-', toString(cityHash64(n, 24) % 50000)), ''), env,
      concat('v2.', toString(intDiv(day_idx, 3) + (env != 'production'))),
      ${preview(INPUT)}, if(status = 'success' AND NOT ${running}, ${preview(OUTPUT)}, '')
    FROM (${facts})${running ? " WHERE cityHash64(n, 16) % 10 = 0" : ""}`;
}

function callsInsert(facts: string): string {
  return `INSERT INTO llm_calls (user_id, project_id, run_id, sdk_run_id, call_id, span_id, parent_span_id, event_id, agent_name, config_version,
      name, model, provider, prompt_tokens, completion_tokens, total_tokens, cost_usd, cost_source, status, started_at, ended_at, duration_ms, day)
    SELECT project, project, run_id, external_id, concat('call-', toString(c)), concat('span-', toString(c)), 'span-root',
      toUUID(${asUuid(`lower(concat(leftPad(hex(cityHash64(n, c, 70)), 16, '0'), leftPad(hex(cityHash64(n, c, 71)), 16, '0')))`)}),
      if(judge, 'runwatch-judge', ${list(AGENTS)}[1 + agent_idx]), NULL, 'ChatModel', ${list(MODELS)}[1 + ${callModel}],
      ${list(["openai", "openai", "anthropic", "anthropic", "google", "google", "meta", "openai"])}[1 + ${callModel}],
      ${callPrompt}, ${callCompletion}, ${callPrompt} + ${callCompletion}, ${callCost}, 'computed', 'success',
      ${at("start_ms + c * dur / calls")}, ${at("start_ms + (c + 1) * dur / calls")}, intDiv(dur, calls), toDate(${at("start_ms")})
    FROM (${facts}) ARRAY JOIN range(calls) AS c`;
}

/** Scores: a judge's correctness on 25 % of the runs (given twice on a tenth of those), user feedback on 8 %, a label on 3 %. */
function scoresInsert(facts: string): string {
  const row = (name: string, type: string, number: string, string: string, source: string, where: string, k: number) =>
    `SELECT toUUID(${asUuid(`lower(concat(leftPad(hex(cityHash64(n, ${k})), 16, '0'), leftPad(hex(cityHash64(n, ${k + 1})), 16, '0')))`)}) AS score_id,
        project, run_id, external_id, '${name}' AS name, '${type}' AS value_type, ${number} AS value_number, ${string} AS value_string,
        '${source}' AS source, ${at(`start_ms + dur + 60000 + ${k} * 1000`)} AS created_at
      FROM (${facts}) WHERE NOT open AND ${where}`;
  return `INSERT INTO scores (score_id, user_id, project_id, run_id, sdk_run_id, name, value_type, value_number, value_string, source, created_at)
    SELECT score_id, project, project, run_id, external_id, name, value_type, value_number, value_string, source, created_at FROM (
      ${row("correctness", "number", `round(if(status = 'error', 0.3, 1.0) * ${u(80)}, 3)`, "''", "evaluation", `${u(81)} < 0.25`, 82)}
      UNION ALL ${row("correctness", "number", `round(${u(84)}, 3)`, "''", "evaluation", `${u(81)} < 0.025`, 85)}
      UNION ALL ${row("helpful", "boolean", `toFloat64(${u(87)} < 0.8)`, "''", "api", `${u(88)} < 0.08`, 89)}
      UNION ALL ${row("label", "string", "0", `${pick(["good", "bad", "unclear"], 91)}`, "api", `${u(92)} < 0.03`, 93)})`;
}

/**
 * agent_events rows, with the search text each gives its run (pipeline/search-text.ts): the run's input, its output
 * or error, a step named `agent` and 1–3 distinct span names, lower-cased; and a step per LLM call (the first one
 * named `chatmodel`, the others with no text of their own, as a run's repeated span names are). Their payloads are
 * left small: a search reads the project and the text, never a payload.
 */
function eventsInsert(facts: string): string {
  const name = `${list(SPAN_NAMES)}[1 + cityHash64(n, 100 + j) % ${SPAN_NAMES.length}]`;
  const texts = `arrayConcat([lower(${INPUT}), multiIf(status = 'success', ${OUTPUT}, status = 'error', ${ERROR}, ''), 'agent'],
      arrayDistinct(arrayMap(j -> ${name}, range(1 + cityHash64(n, 99) % 3))))`;
  const types = "arrayConcat(['run_start', if(status = 'error', 'error', 'run_end'), 'step'], arrayMap(x -> 'tool_call', range(length(texts) - 3)))";
  const columns = "event_id, project_id, user_id, run_id, sdk_run_id, event_type, agent_name, payload, occurred_at, received_at, search_text";
  const id = (a: string, b: string) => `toUUID(${asUuid(`lower(concat(leftPad(hex(cityHash64(n, ${a})), 16, '0'), leftPad(hex(cityHash64(n, ${b})), 16, '0')))`)})`;
  const agent = `if(judge, 'runwatch-judge', ${list(AGENTS)}[1 + agent_idx])`;
  return `INSERT INTO agent_events (${columns})
    SELECT ${id("k, 110", "k, 111")}, project, project, run_id, external_id, type, ${agent}, '{}', ${at("start_ms + k * 100")}, ${at("start_ms + k * 100")}, text
    FROM (SELECT *, ${texts} AS texts, ${types} AS types FROM (${facts}))
    ARRAY JOIN texts AS text, types AS type, arrayEnumerate(texts) AS k
    WHERE text != ''
    UNION ALL
    SELECT ${id("c, 120", "c, 121")}, project, project, run_id, external_id, 'step', ${agent}, '{}', ${at("start_ms + c * dur / calls")}, ${at("start_ms + c * dur / calls")}, if(c = 0, 'chatmodel', '')
    FROM (${facts}) ARRAY JOIN range(calls) AS c`;
}

/** Writes the dataset: `runs` runs in the project, 2 % as many in the other one. */
export async function generateDataset(ch: ClickHouse, runs: number, anchor: number, log: (line: string) => void): Promise<void> {
  const projects = [
    { project: PROJECT, base: 0, total: runs },
    { project: OTHER_PROJECT, base: runs, total: Math.max(1, Math.round(runs * 0.02)) },
  ];
  for (const { project, base, total } of projects) {
    for (let first = base; first < base + total; first += CHUNK) {
      const facts = runFacts(project, base, total, first, Math.min(CHUNK, base + total - first), anchor);
      const t = performance.now();
      await ch.exec(runsInsert(facts, false));
      await ch.exec(runsInsert(facts, true));
      await ch.exec(callsInsert(facts));
      await ch.exec(scoresInsert(facts));
      await ch.exec(eventsInsert(facts));
      log(`  project ${project}: runs ${first - base + 1}–${Math.min(first + CHUNK, base + total) - base} of ${total} in ${((performance.now() - t) / 1000).toFixed(1)} s`);
    }
  }
}

const INFO_FILE = "bench-dataset.json";

/**
 * The dataset in `dir`: made when the directory holds none (then the merges it starts are waited for, so a
 * measurement does not share the cores with them), else read as it is. A re-run measures queries only.
 */
export async function ensureDataset(dir: string, runs: number, log: (line: string) => void): Promise<DatasetInfo> {
  const file = path.join(dir, INFO_FILE);
  if (existsSync(file)) {
    const info = JSON.parse(await readFile(file, "utf8")) as DatasetInfo;
    if (info.runs !== runs) throw new Error(`${dir} holds ${info.runs} runs, not ${runs}: set BENCH_DATA_DIR to another directory`);
    if (info.run_models && info.lz4_previews) return info;
    const ch = await openChdb(dir, "runwatch");
    try {
      await migrateClickHouse(ch);
      if (!info.run_models) await fillRunModels(ch, log);
      if (!info.lz4_previews) await recompressRuns(ch, log);
    } finally {
      await ch.close();
    }
    const upgraded: DatasetInfo = { ...info, run_models: true, lz4_previews: true };
    await writeFile(file, JSON.stringify(upgraded));
    return upgraded;
  }
  log(`making ${runs.toLocaleString("en-US")} runs in ${dir} (once; BENCH_DATA_DIR keeps them for the next run)`);
  const ch = await openChdb(dir, "runwatch");
  try {
    await migrateClickHouse(ch);
    const anchor = Date.now();
    const t = performance.now();
    await generateDataset(ch, runs, anchor, log);
    // The inserts start merges; a dataset is measured as it stands once they are done.
    for (let idle = 0; idle < 3; ) {
      await new Promise((r) => setTimeout(r, 2_000));
      const [m] = await ch.query<{ n: string }>("SELECT count() AS n FROM system.merges");
      idle = Number(m!.n) === 0 ? idle + 1 : 0;
    }
    const info: DatasetInfo = { runs, anchor, generated_seconds: Math.round((performance.now() - t) / 1000), run_models: true, lz4_previews: true };
    await writeFile(file, JSON.stringify(info));
    return info;
  } finally {
    await ch.close();
  }
}

/**
 * A dataset made before agent_runs had `models`: the column filled from each run's llm_calls (a mutation
 * reading them through a Join table), as a pipeline with the column would have written it. Its runs then all carry
 * their models, as on an install that had no calls when it took migration 251: run_models_backfill is emptied, so
 * `model:` measures the column, not the look-up kept for rows written before it (docs/EXPLORER.md, "Models").
 */
async function fillRunModels(ch: ClickHouse, log: (line: string) => void): Promise<void> {
  const t = performance.now();
  await ch.exec("DROP TABLE IF EXISTS bench_run_models");
  await ch.exec(`CREATE TABLE bench_run_models ENGINE = Join(ANY, LEFT, run_id)
    AS SELECT run_id, arraySort(groupUniqArray(model)) AS models FROM llm_calls GROUP BY run_id`);
  await ch.exec("ALTER TABLE agent_runs UPDATE models = joinGet('runwatch.bench_run_models', 'models', run_id) WHERE true SETTINGS mutations_sync = 1");
  await ch.exec("DROP TABLE bench_run_models");
  await ch.exec("TRUNCATE TABLE run_models_backfill");
  log(`  agent_runs.models filled from llm_calls in ${((performance.now() - t) / 1000).toFixed(0)} s (a dataset made before migration 251)`);
}

/**
 * A dataset made before migration 252: its agent_runs parts rewritten with the previews and metadata in LZ4, as a
 * store's parts are once merges have rewritten them (the migration changes the codec of new parts only).
 */
async function recompressRuns(ch: ClickHouse, log: (line: string) => void): Promise<void> {
  const t = performance.now();
  await ch.exec(`ALTER TABLE agent_runs UPDATE input_preview = input_preview, output_preview = output_preview, metadata = metadata
    WHERE true SETTINGS mutations_sync = 1`);
  log(`  agent_runs' previews and metadata rewritten in LZ4 in ${((performance.now() - t) / 1000).toFixed(0)} s (a dataset made before migration 252)`);
}
