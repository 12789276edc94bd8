/**
 * The agent registry in Postgres: agents (created by hand here, or by the pipeline on a first run_start) and
 * their versioned configs (agent_configs). Shared by the /agents pages and GET /api/agents/{name}/config.
 *
 * Activation is atomic: one transaction locks the agent row (so concurrent activations of one agent run one
 * after the other instead of racing), clears the active flag, then sets it on the chosen version; the partial
 * unique index agent_configs_one_active_idx makes "two active versions" impossible even for a writer that
 * skips this code. Roll back = activate an earlier version (history is never rewritten; the version's
 * activated_at moves, so the SDK endpoint's ETag changes; every activation is kept in agent_config_activations,
 * which the runs charts mark: stores/config-activations.ts).
 */
import { diffLines } from "diff";
import { displayTextProblem } from "../core/display-text.js";
import type { Sql } from "../core/ports/sql.js";
import { refuseUnstorableSetting } from "../core/storable-setting.js";
import { Conflict, NotFound, ValidationError } from "../core/errors.js";

export const MAX_CONFIG_BYTES = 48 * 1024;
export const MAX_NAME = 200;
export const MAX_TAGS = 20;

export interface Agent {
  id: number;
  name: string;
  framework: string;
  tags: string[];
  budget_usd: number | null;
  description: string;
  total_runs: number;
  created_at: string;
}

export interface ConfigVersion {
  version: number;
  config: unknown;
  changelog: string;
  is_active: boolean;
  created_at: string;
  activated_at: string | null;
  created_by: string | null;
}

export interface AgentFields {
  name?: unknown;
  framework?: unknown;
  tags?: unknown;
  budget_usd?: unknown;
  description?: unknown;
}

const iso = (v: unknown): string => new Date(v as string).toISOString();
const isoOrNull = (v: unknown): string | null => (v === null || v === undefined ? null : iso(v));

function toAgent(r: Record<string, unknown>): Agent {
  return {
    id: Number(r.id),
    name: String(r.name),
    framework: String(r.framework ?? ""),
    tags: Array.isArray(r.tags) ? r.tags.map(String) : [],
    budget_usd: r.budget_usd === null || r.budget_usd === undefined ? null : Number(r.budget_usd),
    description: String(r.description ?? ""),
    total_runs: Number(r.total_runs ?? 0),
    created_at: iso(r.created_at),
  };
}

const config = (v: unknown): unknown => (typeof v === "string" ? JSON.parse(v) : v);

function toVersion(r: Record<string, unknown>): ConfigVersion {
  return {
    version: Number(r.version),
    config: config(r.config),
    changelog: String(r.changelog ?? ""),
    is_active: r.is_active === true || r.is_active === "t",
    created_at: iso(r.created_at),
    activated_at: isoOrNull(r.activated_at),
    created_by: r.created_by_name === null || r.created_by_name === undefined ? null : String(r.created_by_name),
  };
}

const str = (v: unknown, field: string, max: number): string => {
  if (v === undefined || v === null) return "";
  if (typeof v !== "string") throw new ValidationError({ message: `${field} must be text`, field });
  const s = v.trim();
  if (s.length > max) throw new ValidationError({ message: `${field} must be at most ${max} characters`, field });
  return s;
};

/** Tags from "a, b" text or an array; trimmed, de-duplicated, at most MAX_TAGS of ≤ 50 chars. */
export function parseTags(v: unknown): string[] {
  const list = Array.isArray(v) ? v : typeof v === "string" ? v.split(",") : v === undefined || v === null ? [] : null;
  if (!list) throw new ValidationError({ message: "tags must be a comma-separated list", field: "tags" });
  const tags = [...new Set(list.map((t) => String(t).trim()).filter(Boolean))];
  if (tags.length > MAX_TAGS) throw new ValidationError({ message: `at most ${MAX_TAGS} tags`, field: "tags" });
  if (tags.some((t) => t.length > 50)) throw new ValidationError({ message: "a tag must be at most 50 characters", field: "tags" });
  return tags;
}

/** A budget in USD (≥ 0, ≤ 1e9), or null for "no budget" (empty). */
export function parseBudget(v: unknown): number | null {
  if (v === undefined || v === null || v === "") return null;
  const n = typeof v === "number" ? v : Number(String(v).trim().replace(/^\$/, ""));
  if (!Number.isFinite(n) || n < 0 || n > 1e9) throw new ValidationError({ message: "budget_usd must be a number of dollars ≥ 0 (or empty for none)", field: "budget_usd" });
  return Math.round(n * 10_000) / 10_000;
}

export function parseAgentName(v: unknown): string {
  const name = str(v, "name", MAX_NAME);
  if (!name) throw new ValidationError({ message: "name is required", field: "name" });
  const problem = displayTextProblem(name);
  if (problem) throw new ValidationError({ message: `name ${problem}`, field: "name" });
  return name;
}

/**
 * A name that parseAgentName (and ingest, for agent_name) refuses cannot name an agent: looking it up answers "no
 * such agent" without asking Postgres, whose text cannot even hold U+0000 (the query would fail, a 500).
 */
const canNameAgent = (name: string): boolean => displayTextProblem(name) === undefined;

/** Parses a config version's JSON text: a JSON object, at most MAX_CONFIG_BYTES. */
export function parseConfigJson(text: unknown): Record<string, unknown> {
  if (typeof text !== "string" || text.trim() === "") throw new ValidationError({ message: "config is required (a JSON object)", field: "config" });
  if (Buffer.byteLength(text) > MAX_CONFIG_BYTES) throw new ValidationError({ message: `config is larger than ${MAX_CONFIG_BYTES / 1024} KiB`, field: "config" });
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new ValidationError({ message: `config is not valid JSON: ${(err as Error).message}`, field: "config" });
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new ValidationError({ message: "config must be a JSON object, like {\"model\": \"gpt-4o\", \"temperature\": 0.2}", field: "config" });
  }
  refuseUnstorableSetting(value, "config");
  return value as Record<string, unknown>;
}

export async function createAgent(sql: Sql, projectId: number, f: AgentFields): Promise<Agent> {
  const name = parseAgentName(f.name);
  const rows = await sql.query<Record<string, unknown>>(
    `INSERT INTO agents (project_id, name, framework, tags, budget_usd, description)
     VALUES ($1, $2, $3, $4::text[], $5, $6)
     ON CONFLICT (project_id, name) DO NOTHING
     RETURNING *`,
    [projectId, name, str(f.framework, "framework", 100), parseTags(f.tags), parseBudget(f.budget_usd), str(f.description, "description", 2000)],
  );
  if (!rows[0]) throw new Conflict({ code: "agent_exists", message: `an agent named ${JSON.stringify(name)} already exists`, field: "name" });
  return toAgent(rows[0]);
}

export async function updateAgent(sql: Sql, projectId: number, name: string, f: AgentFields): Promise<Agent> {
  if (!canNameAgent(name)) throw notFound(name);
  const rows = await sql.query<Record<string, unknown>>(
    `UPDATE agents SET framework = $3, tags = $4::text[], budget_usd = $5, description = $6, updated_at = now()
      WHERE project_id = $1 AND name = $2 RETURNING *`,
    [projectId, name, str(f.framework, "framework", 100), parseTags(f.tags), parseBudget(f.budget_usd), str(f.description, "description", 2000)],
  );
  if (!rows[0]) throw notFound(name);
  return toAgent(rows[0]);
}

const notFound = (name: string) => new NotFound({ resource: "agent", message: `no agent named ${JSON.stringify(name)}` });

export async function getAgent(sql: Sql, projectId: number, name: string): Promise<Agent> {
  if (!canNameAgent(name)) throw notFound(name);
  const rows = await sql.query<Record<string, unknown>>(`SELECT * FROM agents WHERE project_id = $1 AND name = $2`, [projectId, name]);
  if (!rows[0]) throw notFound(name);
  return toAgent(rows[0]);
}

export async function listVersions(sql: Sql, agentId: number): Promise<ConfigVersion[]> {
  const rows = await sql.query<Record<string, unknown>>(
    `SELECT c.version, c.config, c.changelog, c.is_active, c.created_at, c.activated_at, u.name AS created_by_name
       FROM agent_configs c LEFT JOIN users u ON u.id = c.created_by
      WHERE c.agent_id = $1 ORDER BY c.version DESC`,
    [agentId],
  );
  return rows.map(toVersion);
}

/** Adds the next version (max + 1, under the agent's row lock); optionally activates it in the same transaction. */
export async function addVersion(
  sql: Sql,
  projectId: number,
  agentName: string,
  input: { config: unknown; changelog?: unknown; activate?: boolean; createdBy?: number },
): Promise<number> {
  const cfg = parseConfigJson(input.config);
  const changelog = str(input.changelog, "changelog", 2000);
  return sql.transaction(async (tx) => {
    const agentId = await lockAgent(tx, projectId, agentName);
    const [{ next }] = (await tx.query<{ next: number }>(
      `SELECT coalesce(max(version), 0) + 1 AS next FROM agent_configs WHERE agent_id = $1`,
      [agentId],
    )) as [{ next: number }];
    const version = Number(next);
    await tx.query(
      `INSERT INTO agent_configs (agent_id, version, config, changelog, created_by) VALUES ($1, $2, $3::jsonb, $4, $5)`,
      [agentId, version, JSON.stringify(cfg), changelog, input.createdBy ?? null],
    );
    if (input.activate) await activateLocked(tx, agentId, version);
    return version;
  });
}

async function lockAgent(tx: Sql, projectId: number, name: string): Promise<number> {
  if (!canNameAgent(name)) throw notFound(name);
  const rows = await tx.query<{ id: number }>(`SELECT id FROM agents WHERE project_id = $1 AND name = $2 FOR UPDATE`, [projectId, name]);
  if (!rows[0]) throw notFound(name);
  return Number(rows[0].id);
}

async function activateLocked(tx: Sql, agentId: number, version: number): Promise<void> {
  const exists = await tx.query(`SELECT 1 FROM agent_configs WHERE agent_id = $1 AND version = $2`, [agentId, version]);
  if (!exists[0]) throw new NotFound({ resource: "config_version", message: `version ${version} does not exist` });
  await tx.query(`UPDATE agent_configs SET is_active = false WHERE agent_id = $1 AND is_active AND version <> $2`, [agentId, version]);
  await tx.query(
    `UPDATE agent_configs SET is_active = true, activated_at = now() WHERE agent_id = $1 AND version = $2`,
    [agentId, version],
  );
  await tx.query(`INSERT INTO agent_config_activations (agent_id, version) VALUES ($1, $2)`, [agentId, version]);
}

/** Makes `version` the one active config of the agent (also how a roll back is done). */
export async function activateVersion(sql: Sql, projectId: number, agentName: string, version: number): Promise<void> {
  await sql.transaction(async (tx) => activateLocked(tx, await lockAgent(tx, projectId, agentName), version));
}

export interface ActiveConfig {
  agent: string;
  version: number;
  config: unknown;
  changelog: string;
  activated_at: string | null;
}

/** The active config of an agent, or a NotFound naming what is missing. */
export async function activeConfig(sql: Sql, projectId: number, name: string): Promise<ActiveConfig> {
  if (!canNameAgent(name)) throw notFound(name);
  const rows = await sql.query<Record<string, unknown>>(
    `SELECT a.name, c.version, c.config, c.changelog, c.activated_at
       FROM agents a LEFT JOIN agent_configs c ON c.agent_id = a.id AND c.is_active
      WHERE a.project_id = $1 AND a.name = $2`,
    [projectId, name],
  );
  const r = rows[0];
  if (!r) throw notFound(name);
  if (r.version === null || r.version === undefined) {
    throw new NotFound({ resource: "config", message: `agent ${JSON.stringify(name)} has no active config version yet` });
  }
  return { agent: String(r.name), version: Number(r.version), config: config(r.config), changelog: String(r.changelog ?? ""), activated_at: isoOrNull(r.activated_at) };
}

export interface DiffLine {
  kind: "add" | "del" | "ctx";
  text: string;
}

/**
 * Bounds of one config diff: the Myers diff costs O((N+M)·D) for D edits, so two large, very different configs
 * could hold the event loop for seconds (every request of the process waits). Past either bound the page shows
 * the counts of lines only, and says the diff is too large to show.
 */
export const DIFF_MAX_EDIT_LENGTH = 2_000;
export const DIFF_TIMEOUT_MS = 100;

/** Line diff of two configs as pretty JSON (Postgres jsonb stores keys in a canonical order). */
export function diffConfigs(from: unknown, to: unknown): { lines: DiffLine[]; added: number; removed: number; too_large: boolean } {
  const a = `${JSON.stringify(from, null, 2)}\n`;
  const b = `${JSON.stringify(to, null, 2)}\n`;
  const lines: DiffLine[] = [];
  let added = 0;
  let removed = 0;
  const parts = diffLines(a, b, { maxEditLength: DIFF_MAX_EDIT_LENGTH, timeout: DIFF_TIMEOUT_MS });
  if (!parts) return { lines, added: b.split("\n").length - 1, removed: a.split("\n").length - 1, too_large: true };
  for (const part of parts) {
    const kind = part.added ? "add" : part.removed ? "del" : "ctx";
    const texts = part.value.replace(/\n$/, "").split("\n");
    if (kind === "add") added += texts.length;
    if (kind === "del") removed += texts.length;
    for (const t of texts) lines.push({ kind, text: `${kind === "add" ? "+" : kind === "del" ? "-" : " "} ${t}` });
  }
  return { lines, added, removed, too_large: false };
}

/** A row of the registry as /agents lists it: the agent, its active config version and how many it has. */
export interface AgentSummary {
  name: string;
  framework: string;
  total_runs: number;
  budget_usd: number | null;
  tags: string[];
  active_version: number | null;
  versions: number;
  created_at: string | null;
}

export async function listAgentSummaries(sql: Sql, projectId: number, limit: number): Promise<AgentSummary[]> {
  const rows = await sql.query<Record<string, unknown>>(
    `SELECT a.name, a.framework, a.total_runs, a.budget_usd, a.tags, a.created_at,
            (SELECT max(c.version) FROM agent_configs c WHERE c.agent_id = a.id AND c.is_active) AS active_version,
            (SELECT count(*) FROM agent_configs c WHERE c.agent_id = a.id) AS versions
       FROM agents a
      WHERE a.project_id = $1
      ORDER BY a.name
      LIMIT $2`,
    [projectId, limit],
  );
  return rows.map((r) => ({
    name: String(r.name),
    framework: String(r.framework ?? ""),
    total_runs: Number(r.total_runs ?? 0),
    budget_usd: r.budget_usd === null || r.budget_usd === undefined ? null : Number(r.budget_usd),
    tags: toTags(r.tags),
    active_version: r.active_version === null || r.active_version === undefined ? null : Number(r.active_version),
    versions: Number(r.versions ?? 0),
    created_at: r.created_at ? new Date(r.created_at as string).toISOString() : null,
  }));
}

/** The active config version of each of the named agents that has one (what a comparison of experiments takes as its baseline). */
export async function activeVersions(sql: Sql, projectId: number, names: readonly string[]): Promise<Map<string, number>> {
  if (names.length === 0) return new Map();
  const rows = await sql.query<{ name: string; version: unknown }>(
    `SELECT a.name, c.version FROM agents a JOIN agent_configs c ON c.agent_id = a.id AND c.is_active
      WHERE a.project_id = $1 AND a.name = ANY($2::text[])`,
    [projectId, [...new Set(names)]],
  );
  return new Map(rows.map((r) => [String(r.name), Number(r.version)]));
}

/** The project's agents that have a budget (at most 500), by name. */
export async function budgetedAgents(sql: Sql, projectId: number): Promise<{ name: string; budget_usd: number }[]> {
  const rows = await sql.query<{ name: string; budget_usd: unknown }>(
    `SELECT name, budget_usd FROM agents WHERE project_id = $1 AND budget_usd IS NOT NULL ORDER BY name LIMIT 500`,
    [projectId],
  );
  return rows.map((r) => ({ name: String(r.name), budget_usd: Number(r.budget_usd) }));
}

function toTags(v: unknown): string[] {
  if (Array.isArray(v)) return v.map(String);
  if (typeof v === "string" && v) {
    try { const p = JSON.parse(v); if (Array.isArray(p)) return p.map(String); } catch { /* plain text */ }
    return v.split(",").map((s) => s.trim()).filter(Boolean);
  }
  return [];
}
