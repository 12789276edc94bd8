/**
 * Every form of the dashboard, posted by the owner of one project with hostile values (docs/TEAMS.md, "Hostile
 * input"): the forms are read from the pages themselves, so a new form is covered without being listed here. Each
 * field in turn gets NUL, a lone surrogate (raw, and escaped in JSON text), JSON nested 10,000 deep, a huge string,
 * numbers out of range and the ids, slug, e-mail addresses and names of another project; each form is also posted
 * to its action with the other project's ids in the path, and every page is fetched that way. No answer is a 5xx
 * (but /improve's 502: the agents service does not run here), and afterwards the other project's rows are exactly
 * what they were: no member, invitation, key, rule, agent, setting or human-input answer of it was touched, and its
 * run still waits for its answer.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRule, getRule } from "../../alerts/rules.js";
import { enqueueTest, markFailed } from "../../alerts/queue.js";
import { addVersion, createAgent } from "../../stores/agent-registry.js";
import { createInvitation } from "../../stores/accounts/invitations.js";
import { createDataset, datasetNamed, writeItems } from "../../stores/datasets/datasets.js";
import { createExperiment } from "../../stores/datasets/experiments.js";
import { setGateRule } from "../../stores/activation-gate.js";
import { parseItem } from "../../stores/datasets/items.js";
import { listApiKeys } from "../../stores/accounts/api-keys.js";
import { createProject, setMember } from "../../stores/accounts/projects.js";
import { switchProject } from "../../stores/accounts/current-project.js";
import { providerKeySealer, setProviderKey } from "../../stores/evaluation/provider-keys.js";
import { nextItem } from "../../stores/evaluation/annotation-queue-items.js";
import { createEventStore } from "../../stores/runs/event-store.js";
import { bearer, CookieJar, csrfFrom, json, loginJar, startTestServer, waitForRun, type TestServer } from "./harness.js";
import { createRule as createEvaluationRule } from "../../evaluation/rules.js";
import { createEvaluator } from "../../evaluation/evaluators.js";
import { createQueue } from "../../evaluation/annotation-queues.js";
import { addRunsToQueue } from "../../evaluation/annotation-queue-items.js";
import { pushPromptVersion } from "../../prompts/index.js";
import { insertSavedView } from "../../stores/saved-views.js";
import { checkSavedQuery, insertSavedQuery } from "../../stores/saved-queries.js";
import { setPromptGateRule } from "../../stores/prompt-gate-rules.js";
import { createSlo } from "../../stores/slos.js";

let srv: TestServer;

/** What one project holds that a form or a path can name. */
interface Seeded {
  slug: string;
  id: number;
  key: string;
  keyId: number;
  ruleId: number;
  jobId: number;
  invitationId: number;
  memberEmail: string;
  agent: string;
  dataset: string;
  experimentId: string;
  evaluatorId: string;
  evaluationRuleId: string;
  queueId: string;
  queueItemId: string;
  routingRuleId: string;
  viewId: string;
  savedQueryId: string;
  prompt: string;
  sloId: number;
}

let mine: Seeded;
let theirs: Seeded;
let attacker: { jar: CookieJar; csrf: string };

const RUN = "shared-run";

async function seed(ownerEmail: string, name: string, agent: string): Promise<Seeded> {
  const sql = srv.ports.sql;
  const owner = await srv.user(ownerEmail);
  const project = await createProject(sql, owner.id, name);
  const member = await srv.user(`member-${name.toLowerCase()}-${Date.now()}@example.com`);
  await setMember(sql, project.id, member.email, "member", owner.id);
  const key = await srv.key(owner.id, { projectId: project.id, name: `${name} key` });
  const keyId = (await listApiKeys(sql, project.id))[0]!.id;
  for (const a of new Set(["bot", agent])) {
    await createAgent(sql, project.id, { name: a, description: `${name}'s ${a}` });
    await addVersion(sql, project.id, a, { config: JSON.stringify({ model: `${name}-model` }), activate: true, createdBy: owner.id });
    await addVersion(sql, project.id, a, { config: JSON.stringify({ model: `${name}-next` }), activate: false, createdBy: owner.id });
  }
  // A webhook rule (its page has the secret's rotation) with a notification that failed for good (it has a retry).
  // Its target is an address, not a name: a form post then checks every other field, and no post waits on DNS.
  const ruleId = (await createRule(sql, project.id, { name: `${name} rule`, trigger_type: "run_error", channel: "webhook", target: "http://127.0.0.1:9/runwatch", config: {}, enabled: true })) as number;
  const jobId = await enqueueTest(sql, (await getRule(sql, project.id, ruleId))!, { publicWebUrl: srv.url });
  await markFailed(sql, { id: jobId, attempts: 1, max_attempts: 1 }, "refused", 0, true);
  const { invitation } = await createInvitation(sql, project.id, `invited-${name.toLowerCase()}@example.com`, "viewer", owner.id);
  const batch = [
    { event_type: "run_start", sdk_run_id: RUN, agent_name: "bot", payload: { input: name } },
    { event_type: "human_input_requested", sdk_run_id: RUN, payload: { question: `${name} asks` } },
    { event_type: "run_start", sdk_run_id: `${agent}-run`, agent_name: agent, payload: {} },
    { event_type: "human_input_requested", sdk_run_id: `${agent}-run`, payload: { question: "?" } },
  ];
  expect((await fetch(`${srv.url}/api/ingest/batch`, json(key, { events: batch }))).status).toBe(207);
  await waitForRun(srv.url, key, RUN, (b) => b.run.status === "waiting_for_input");
  await waitForRun(srv.url, key, `${agent}-run`, (b) => b.run.status === "waiting_for_input");
  const dataset = `${name} cases`;
  await createDataset(sql, project.id, { name: dataset }, owner.id);
  await writeItems(sql, project.id, dataset, [parseItem({ id: "case-1", input: `${name} input`, expected_output: "ok" }, "item", "manual")], "items", owner.id);
  await setGateRule(sql, project.id, agent, { score_name: `${name} score`, max_drop: 0.1 }, owner.id);
  const experimentId = (await createExperiment(sql, project.id, await datasetNamed(sql, project.id, dataset), { dataset, name: `${name} experiment`, agent_name: agent, config_version: 2 }, owner.id)).id;
  const evaluator = await createEvaluator(sql, project.id, owner.id, { name: `${name} judge`, type: "llm_judge", prompt: "Is {{output}} right?", output: { type: "boolean" } });
  const queue = await createQueue(sql, project.id, { name: `${name} queue`, score_configs: [{ name: "correct", type: "boolean" }, { name: "quality", type: "numeric", min: 1, max: 5 }, { name: "tone", type: "categorical", categories: ["ok", "rude"] }] });
  const evaluationRule = await createEvaluationRule(srv.ports, project.id, owner.id, { evaluator_id: evaluator.id, filter: { agent_name: agent }, sampling: 1, queue_action: { queue_id: queue.id, equals: false } });
  await setProviderKey({ sql, sealer: providerKeySealer("x".repeat(40)), allowPrivate: false }, project.id, owner.id, "anthropic", { api_key: `sk-ant-${name.replace(/\W/g, "")}-key` });
  const routingRule = await createEvaluationRule(srv.ports, project.id, owner.id, { filter: { has_error: true }, sampling: 1, queue_action: { queue_id: queue.id } });
  await addRunsToQueue({ sql, events: createEventStore(srv.ports.clickhouse) }, queue, { items: [{ sdk_run_id: RUN }, { sdk_run_id: `${agent}-run` }] }, "api");
  const queueItemId = (await nextItem(sql, queue, owner.id))!.id;
  // A saved view: its page (the runs page of its filter) has the form that deletes it.
  const view = await insertSavedView(sql, project.id, owner.id, { name: `${name} view`, filter: "agent:bot", columns: ["agent", "input", "output", "tags", "started", "duration", "tokens", "cost", "scores"], sort: "start_time", order: "desc" });
  // A saved query: the query page opened on it has the forms that save over it, rename and delete it.
  const savedQuery = await insertSavedQuery(sql, project.id, owner.id, checkSavedQuery({ name: `${name} query`, sql: "SELECT agent_name, count() AS n FROM runs WHERE agent_name = {agent:String} GROUP BY agent_name", params: { agent: agent }, description: `${name}'s counts` }));
  // A prompt with two versions and a label: its page has the forms that add a version and move a label.
  const prompt = `${agent}-prompt`;
  for (const text of [`${name} prompt {{q}}`, `${name} prompt v2 {{q}}`]) await pushPromptVersion(sql, project.id, owner.id, prompt, { prompt: text, labels: ["production"] });
  // Its gate rule (the page's form removes it), and an SLO (the /slos page's form deletes it).
  await setPromptGateRule(sql, project.id, prompt, { score_name: `${name} score`, max_drop: 0.1 }, owner.id);
  const slo = await createSlo(sql, project.id, { name: `${name} SLO`, agent_name: agent, objective: "success_rate", target: 0.99, window_days: 30 });
  await switchProject(sql, owner.id, project.slug);
  return {
    slug: project.slug, id: project.id, key, keyId, ruleId, jobId, invitationId: invitation.id, memberEmail: member.email, agent, dataset, experimentId,
    evaluatorId: evaluator.id, evaluationRuleId: evaluationRule.id, queueId: queue.id, queueItemId, routingRuleId: routingRule.id, viewId: view.id,
    savedQueryId: savedQuery.id, prompt, sloId: slo.id,
  };
}

/** The rows of a project that a form could change, as JSON (timestamps of use left out). */
async function snapshot(projectId: number): Promise<string> {
  const sql = srv.ports.sql;
  const q = (text: string) => sql.query<Record<string, unknown>>(text, [projectId]);
  return JSON.stringify({
    project: await q("SELECT id, slug, name, personal_of FROM projects WHERE id = $1"),
    members: await q("SELECT user_id, role FROM project_members WHERE project_id = $1 ORDER BY user_id"),
    invitations: await q("SELECT id, email, role, accepted_at, revoked_at FROM project_invitations WHERE project_id = $1 ORDER BY id"),
    keys: await q("SELECT id, name, scope, revoked_at, expires_at FROM api_keys WHERE project_id = $1 ORDER BY id"),
    settings: await q("SELECT * FROM project_settings WHERE project_id = $1"),
    agents: await q("SELECT id, name, description, framework, tags, budget_usd FROM agents WHERE project_id = $1 ORDER BY id"),
    configs: await q("SELECT c.agent_id, c.version, c.config, c.is_active FROM agent_configs c JOIN agents a ON a.id = c.agent_id WHERE a.project_id = $1 ORDER BY c.agent_id, c.version"),
    rules: await q("SELECT id, name, trigger_type, channel, target, config, enabled, secret FROM alert_rules WHERE project_id = $1 ORDER BY id"),
    jobs: await q("SELECT id, rule_id, status, attempts FROM notification_jobs WHERE project_id = $1 ORDER BY id"),
    answers: await q("SELECT * FROM human_inputs WHERE project_id = $1"),
    audit: await q("SELECT action, target FROM project_audit_log WHERE project_id = $1 ORDER BY id"),
    datasets: await q("SELECT id, name, description, version FROM datasets WHERE project_id = $1 ORDER BY id"),
    items: await q("SELECT i.item_id, i.from_version, i.to_version, i.input, i.expected_output FROM dataset_items i JOIN datasets d ON d.id = i.dataset_id WHERE d.project_id = $1 ORDER BY 1, 2"),
    experiments: await q("SELECT id, name, dataset_version, agent_name, config_version, status FROM experiments WHERE project_id = $1 ORDER BY id"),
    gate: await q("SELECT g.agent_id, g.score_name, g.max_drop FROM agent_gate_rules g JOIN agents a ON a.id = g.agent_id WHERE a.project_id = $1 ORDER BY 1, 2"),
    evaluators: await q("SELECT e.id, e.name, e.latest_version, v.version, v.definition FROM evaluators e JOIN evaluator_versions v ON v.evaluator_id = e.id WHERE e.project_id = $1 ORDER BY 1, 4"),
    evaluation_rules: await q("SELECT id, name, filter, sampling, enabled, queue_action FROM evaluation_rules WHERE project_id = $1 ORDER BY id"),
    evaluation_jobs: await q("SELECT id, status, attempts FROM evaluation_jobs WHERE project_id = $1 ORDER BY id"),
    queues: await q("SELECT id, name, score_configs FROM annotation_queues WHERE project_id = $1 ORDER BY id"),
    provider_keys: await q("SELECT provider, api_key, key_hint, base_url, default_model FROM project_provider_keys WHERE project_id = $1 ORDER BY provider"),
    queue_items: await q("SELECT i.id, i.status, i.locked_by, i.comment FROM annotation_queue_items i JOIN annotation_queues q ON q.id = i.queue_id WHERE q.project_id = $1 ORDER BY 1"),
    views: await q("SELECT id, name, filter, columns, sort, sort_order FROM saved_views WHERE project_id = $1 ORDER BY id"),
    queries: await q("SELECT id, name, description, sql_text, params::text AS params FROM saved_queries WHERE project_id = $1 ORDER BY id"),
    prompts: await q("SELECT p.name, p.latest_version, v.version, v.content::text AS content, v.config::text AS config FROM prompts p JOIN prompt_versions v ON v.prompt_id = p.id WHERE p.project_id = $1 ORDER BY 1, 3"),
    prompt_labels: await q("SELECT p.name, l.label, l.version FROM prompt_labels l JOIN prompts p ON p.id = l.prompt_id WHERE p.project_id = $1 ORDER BY 1, 2"),
    prompt_gate: await q("SELECT p.name, g.score_name, g.max_drop FROM prompt_gate_rules g JOIN prompts p ON p.id = g.prompt_id WHERE p.project_id = $1 ORDER BY 1, 2"),
    slos: await q("SELECT id, name, agent_name, objective, target, threshold_seconds, score_name, window_days FROM slos WHERE project_id = $1 ORDER BY id"),
  });
}

const decode = (s: string) => s.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&");
const attr = (attrs: string, name: string) => {
  const m = new RegExp(`\\b${name}="([^"]*)"`).exec(attrs);
  return m ? decode(m[1]!) : undefined;
};

interface Form { page: string; action: string; fields: Record<string, string> }

/** The POST forms of a page as a browser would submit them untouched (checked boxes, selected or first options). */
function formsOf(page: string, html: string): Form[] {
  const forms: Form[] = [];
  for (const [, attrs, body] of html.matchAll(/<form\b([^>]*)>([\s\S]*?)<\/form>/g)) {
    if (attr(attrs!, "method")?.toLowerCase() !== "post") continue;
    const fields: Record<string, string> = {};
    for (const [, a] of body!.matchAll(/<input\b([^>]*)>/g)) {
      const name = attr(a!, "name");
      const type = attr(a!, "type") ?? "text";
      if (!name || ((type === "checkbox" || type === "radio") && !/\bchecked\b/.test(a!))) continue;
      fields[name] = attr(a!, "value") ?? (type === "checkbox" ? "on" : "");
    }
    for (const [, a, inner] of body!.matchAll(/<select\b([^>]*)>([\s\S]*?)<\/select>/g)) {
      const options = [...inner!.matchAll(/<option\b([^>]*)>/g)].map(([, o]) => o!);
      const chosen = options.find((o) => /\bselected\b/.test(o)) ?? options[0];
      if (attr(a!, "name")) fields[attr(a!, "name")!] = chosen ? (attr(chosen, "value") ?? "") : "";
    }
    for (const [, a, inner] of body!.matchAll(/<textarea\b([^>]*)>([\s\S]*?)<\/textarea>/g)) {
      if (attr(a!, "name")) fields[attr(a!, "name")!] = decode(inner!);
    }
    forms.push({ page, action: attr(attrs!, "action") ?? page, fields });
    // A submit button with its own formaction posts the same fields elsewhere.
    for (const [, b] of body!.matchAll(/<button\b([^>]*)>/g)) {
      const other = attr(b!, "formaction");
      if (other) forms.push({ page, action: other, fields });
    }
  }
  return forms;
}

/** A plausible value for an empty field, so that a hostile value in another field is not refused for this one first. */
const plausible = (name: string) =>
  /email/.test(name) ? `someone-${Math.random().toString(36).slice(2, 8)}@example.com`
    : /config/.test(name) ? '{"model":"m"}'
    : /^(confirm|_csrf)$/.test(name) ? ""
    : /name|title|question|comment|description|changelog/.test(name) ? "plain words"
    : "1";

/** Paths and values of one project rewritten to name the other's. */
function theirsFor(path: string): string {
  return path
    // The other project's URL (/p/{slug}/…): its pages and forms are not the attacker's.
    .replace(new RegExp(`^/p/${mine.slug}/`), `/p/${theirs.slug}/`)
    .replaceAll(`/settings/project/${mine.slug}`, `/settings/project/${theirs.slug}`)
    .replaceAll(`/alerts/${mine.ruleId}/`, `/alerts/${theirs.ruleId}/`).replace(new RegExp(`/alerts/${mine.ruleId}$`), `/alerts/${theirs.ruleId}`)
    .replaceAll(`/alerts/jobs/${mine.jobId}/`, `/alerts/jobs/${theirs.jobId}/`)
    .replaceAll(`/api-keys/${mine.keyId}/`, `/api-keys/${theirs.keyId}/`)
    .replaceAll(`/invitations/${mine.invitationId}/`, `/invitations/${theirs.invitationId}/`)
    .replaceAll(`/agents/${mine.agent}`, `/agents/${theirs.agent}`)
    .replaceAll(`/dashboard/${mine.agent}-run`, `/dashboard/${theirs.agent}-run`)
    .replaceAll(`/datasets/${encodeURIComponent(mine.dataset)}`, `/datasets/${encodeURIComponent(theirs.dataset)}`)
    .replaceAll(mine.experimentId, theirs.experimentId)
    .replaceAll(mine.evaluatorId, theirs.evaluatorId).replaceAll(mine.evaluationRuleId, theirs.evaluationRuleId)
    .replaceAll(mine.queueId, theirs.queueId).replaceAll(mine.queueItemId, theirs.queueItemId)
    .replaceAll(mine.routingRuleId, theirs.routingRuleId)
    .replaceAll(mine.viewId, theirs.viewId)
    .replaceAll(mine.savedQueryId, theirs.savedQueryId)
    .replaceAll(`/prompts/${mine.prompt}`, `/prompts/${theirs.prompt}`)
    .replaceAll(`/slos/${mine.sloId}/`, `/slos/${theirs.sloId}/`);
}

const hostileValues = () => [
  "nul\u0000byte", "lone \ud800 surrogate", "x".repeat(70_000), "-1", "0", "9007199254740993", "1e309", "[object Object]",
  "<script>alert(1)</script>", "../../etc/passwd",
  // JSON text whose parse holds what Postgres's jsonb refuses: a config, a check, a schema, score configs.
  '{"model":"\\ud800","type":"object","kind":"contains","value":"a\\u0000b"}', '[{"name":"ok","type":"categorical","categories":["a\\ud800"]}]',
  // JSON nested past what JSON.stringify survives.
  `{"model":${"[".repeat(10_000)}${"]".repeat(10_000)}}`,
  theirs.slug, String(theirs.ruleId), String(theirs.keyId), String(theirs.jobId), String(theirs.invitationId), String(theirs.id),
  theirs.memberEmail, theirs.agent, `${theirs.agent}-run`, theirs.dataset, "case-1", theirs.experimentId, "Victim score",
  theirs.evaluatorId, theirs.evaluationRuleId, theirs.queueId, theirs.queueItemId, theirs.routingRuleId, "Victim judge", theirs.savedQueryId, "Victim query", theirs.prompt, String(theirs.sloId), "Victim SLO",
];

beforeAll(async () => {
  // The rules' loopback target (seed) is allowed; alerts read their settings from the process's environment.
  process.env.RUNWATCH_ALLOW_PRIVATE_WEBHOOKS = "1";
  srv = await startTestServer({ pipeline: true, pipelineOptions: { maxWaitMs: 5 }, env: { RUNWATCH_RATE_LIMIT_PER_MINUTE: "1000000" } });
  // Created first, the other project's owner is the instance admin: the attacker is not.
  theirs = await seed(`victim-${Date.now()}@example.com`, "Victim", "victim-bot");
  const attackerEmail = `attacker-${Date.now()}@example.com`;
  mine = await seed(attackerEmail, "Attacker", "attacker-bot");
  const jar = await loginJar(srv.url, attackerEmail);
  attacker = { jar, csrf: csrfFrom(await (await jar.fetch(`${srv.url}/dashboard`)).text()) };
}, 120_000);
afterAll(async () => {
  await srv?.close();
});

describe("hostile form posts and paths", () => {
  it("never fail inside and never reach another project", async () => {
    const before = await snapshot(theirs.id);
    const { jar, csrf } = attacker;
    const pages = ["/dashboard", `/dashboard/${RUN}`, `/dashboard/${RUN}/input`, `/dashboard/${mine.agent}-run`, "/agents", "/agents/bot",
      `/agents/${mine.agent}`, "/alerts", "/alerts/new", `/alerts/${mine.ruleId}/edit`, "/settings", "/settings/api-keys",
      `/settings/project?project=${mine.slug}`, "/datasets", `/datasets/${encodeURIComponent(mine.dataset)}`,
      `/datasets/${encodeURIComponent(mine.dataset)}/experiments`, `/datasets/${encodeURIComponent(mine.dataset)}/compare?experiments=${mine.experimentId}`,
      `/agents/${mine.agent}/configs/2/gate`, "/sessions", "/errors", "/costs", "/dead-letters", "/improve",
      "/evaluators", `/evaluators/${mine.evaluatorId}`, "/queues", `/queues/${mine.queueId}`, `/queues/${mine.queueId}/items/${mine.queueItemId}`,
      "/dashboard?q=agent%3Abot", "/query", `/query?saved=${mine.savedQueryId}`,
      "/prompts", `/prompts/${mine.prompt}`, `/prompts/${mine.prompt}?version=1&from=1&to=2`, `/prompts/${mine.prompt}/playground?a=1&b=2`, "/slos"];
    const forms = new Map<string, Form>();
    const failures: string[] = [];
    const check = async (what: string, res: Response) => {
      const body = await res.text();
      if (res.status >= 500 && !(res.status === 502 && what.includes("/improve"))) failures.push(`${what} → ${res.status} ${body.slice(0, 200)}`);
      return body;
    };
    for (const page of pages) {
      const html = await check(`GET ${page}`, await jar.fetch(`${srv.url}${page}`));
      for (const f of formsOf(page, html)) if (!forms.has(f.action)) forms.set(f.action, f);
      // The same page naming the other project's things is not theirs to see.
      const other = theirsFor(page);
      if (other !== page) {
        const seen = await check(`GET ${other}`, await jar.fetch(`${srv.url}${other}`));
        // What only the other project holds (its names echoed back in a "not found" are not a leak).
        const leaked = ["Victim input", "Victim's", "Victim rule", "Victim asks", "Victim-model", "Victim key", "Victim query", "Victim prompt", "Victim SLO", "Victim score"].filter((m) => seen.includes(m));
        expect([other, leaked]).toEqual([other, []]);
      }
    }
    // The span panel's "Open in playground" form (in the run page's template) is posted by its script to the named
    // prompt's draft route (web/static/trace/playground-link.js): walked there too.
    for (const f of [...forms.values()]) {
      if (f.action.endsWith("/prompts") && "messages" in f.fields) {
        const draft = `${f.action}/${mine.prompt}/playground/draft`;
        forms.set(draft, { ...f, action: draft, fields: { ...f.fields, messages: '[{"role":"user","content":"hi"}]', model: "gpt-4o", provider: "openai" } });
      }
    }
    // Logging out would end the walk (it is covered elsewhere); deleting the attacker's own rule comes last.
    const walked = [...forms.values()].filter((f) => f.action !== "/logout")
      .sort((a, b) => Number(a.action.endsWith("/delete")) - Number(b.action.endsWith("/delete")));
    // Every form route of a project (the app's route table) was found on a page.
    const pattern = (path: string) => new RegExp(`^${path.replace(/:[a-z_]+/g, "[^/]+")}$`);
    // The upload is sent by the dataset page's script, not a form: test/e2e/dataset-edits.test.ts posts it hostile; so
    // are a query's run and download (JSON bodies): test/e2e/query-api.test.ts and saved-queries.test.ts.
    const scripted = new Set(["/datasets/:name/upload", "/query/run", "/query/export"]);
    const unwalked = srv.web.app.routes.filter((r) => r.action && r.credential === "session" && r.methods.includes("POST") && !scripted.has(r.path))
      .filter((r) => !walked.some((f) => pattern(r.path).test(f.action.replace(/^\/p\/[a-z0-9-]+(?=\/)/, "").replace(/\?.*$/, "")))).map((r) => r.path);
    expect(unwalked).toEqual([]);
    let posts = 0;
    for (const form of walked) {
      const base = Object.fromEntries(Object.entries(form.fields).map(([k, v]) => [k, v === "" ? plausible(k) : v]));
      const post = async (action: string, fields: Record<string, string>, what: string) => {
        posts++;
        await check(`POST ${action} (${what})`, await jar.form(`${srv.url}${action}`, { ...fields, _csrf: csrf }));
        // Each post starts from the attacker's own project, whatever the last one switched to or created.
        await jar.form(`${srv.url}/projects/switch`, { _csrf: csrf, project: mine.slug }).then((r) => r.arrayBuffer());
      };
      if (theirsFor(form.action) !== form.action) await post(theirsFor(form.action), base, "the other project's ids in the path");
      for (const field of Object.keys(form.fields).filter((k) => k !== "_csrf")) {
        for (const value of hostileValues()) await post(form.action, { ...base, [field]: value }, `${field}=${JSON.stringify(value.slice(0, 40))}`);
      }
    }
    expect(failures, failures.join("\n")).toEqual([]);
    expect(posts).toBeGreaterThan(200);

    expect(await snapshot(theirs.id)).toBe(before);
    for (const run of [RUN, `${theirs.agent}-run`]) {
      const body = (await (await fetch(`${srv.url}/api/runs/${run}`, bearer(theirs.key))).json()) as { run: { status: string } };
      expect([run, body.run.status]).toEqual([run, "waiting_for_input"]);
      const scores = (await (await fetch(`${srv.url}/api/runs/${run}/scores`, bearer(theirs.key))).json()) as { scores: unknown[] };
      expect([run, scores.scores]).toEqual([run, []]);
    }
    // The victim's key still works, and its job was not retried by anyone else.
    expect((await fetch(`${srv.url}/api/runs`, bearer(theirs.key))).status).toBe(200);
    // A valid event sent after the walk reaches the attacker's own dashboard.
    expect((await fetch(`${srv.url}/api/ingest`, json(mine.key, { event_type: "run_start", sdk_run_id: "after-the-walk", agent_name: "bot", payload: {} }))).status).toBe(202);
    await waitForRun(srv.url, mine.key, "after-the-walk", (b) => b.run.status === "running");
    expect(await (await jar.fetch(`${srv.url}/dashboard`)).text()).toContain("after-the-walk");
  }, 1_800_000);

  it("the forms before login (register, login) answer hostile fields with the form again, never a 5xx", async () => {
    const failures: string[] = [];
    for (const page of ["/register", "/login"]) {
      const jar = new CookieJar();
      const html = await (await jar.fetch(`${srv.url}${page}`)).text();
      const [form] = formsOf(page, html).filter((f) => f.action === page);
      expect(form, page).toBeDefined();
      for (const field of Object.keys(form!.fields).filter((k) => k !== "_csrf")) {
        for (const value of ["nul\u0000byte", "lone \ud800 surrogate", "a\u0000@example.com", "x".repeat(70_000), theirs.memberEmail]) {
          const res = await jar.form(`${srv.url}${page}`, { ...form!.fields, email: `new-${Math.random().toString(36).slice(2, 8)}@example.com`, name: "New", password: "correct horse battery", [field]: value });
          const body = await res.text();
          if (res.status >= 500) failures.push(`POST ${page} ${field}=${JSON.stringify(value.slice(0, 30))} → ${res.status} ${body.slice(0, 200)}`);
        }
      }
    }
    expect(failures, failures.join("\n")).toEqual([]);
  });
});
