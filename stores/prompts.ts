/**
 * Prompts of a project (Postgres migration 160; docs/PROMPTS.md): a name, its versions — immutable once written, each
 * with its author, time and commit message — and labels that point at one version each and move. A rollback is a
 * label moved back. Every write is one transaction that also appends to the project's audit log.
 *
 * Versions of one prompt are numbered from 1 without gaps: a new version locks its prompt's row, so two pushes at
 * once get 2 and 3, never both 2.
 */
import { NotFound, ValidationError } from "../core/errors.js";
import type { Sql } from "../core/ports/sql.js";
import { audit } from "./accounts/projects.js";
import { LATEST, type NewPromptVersion, type PromptConfigValue, type PromptContent } from "./prompt-input.js";

export const MAX_PROMPTS = 1_000;
export const MAX_VERSIONS = 10_000;
export const MAX_LABELS = 50;

export interface PromptSummary {
  readonly name: string;
  readonly latest_version: number;
  /** label → version */
  readonly labels: Readonly<Record<string, number>>;
  readonly created_at: string;
  readonly updated_at: string;
}

export interface PromptVersion {
  readonly name: string;
  readonly version: number;
  readonly type: "text" | "chat";
  readonly prompt: PromptContent;
  readonly config: PromptConfigValue;
  readonly message: string;
  /** The labels pointing at this version now (`latest` when it is the newest). */
  readonly labels: readonly string[];
  readonly created_by: number | null;
  readonly author: string | null;
  readonly created_at: string;
}

/** Which version to read: a label's, a number, or the newest. */
export type VersionRef = { readonly label: string } | { readonly version: number } | { readonly latest: true };

const iso = (v: unknown) => new Date(v as string).toISOString();
const notFound = (name: string) => new NotFound({ resource: "prompt", message: `no prompt named ${JSON.stringify(name)} in this project` });

interface PromptRow { id: number; latest_version: number }

async function promptRow(sql: Sql, projectId: number, name: string, lock = false): Promise<PromptRow | undefined> {
  const [row] = await sql.query<Record<string, unknown>>(
    `SELECT id, latest_version FROM prompts WHERE project_id = $1 AND name = $2${lock ? " FOR UPDATE" : ""}`, [projectId, name]);
  return row ? { id: Number(row.id), latest_version: Number(row.latest_version) } : undefined;
}

async function labelsByVersion(sql: Sql, promptId: number): Promise<Map<number, string[]>> {
  const rows = await sql.query<{ label: string; version: number }>("SELECT label, version FROM prompt_labels WHERE prompt_id = $1 ORDER BY label", [promptId]);
  const by = new Map<number, string[]>();
  for (const r of rows) by.set(Number(r.version), [...(by.get(Number(r.version)) ?? []), r.label]);
  return by;
}

const VERSION_SELECT = `SELECT v.version, v.type, v.content, v.config, v.message, v.created_by, u.name AS author, v.created_at
  FROM prompt_versions v LEFT JOIN users u ON u.id = v.created_by`;

function toVersion(name: string, r: Record<string, unknown>, labels: readonly string[]): PromptVersion {
  return {
    name,
    version: Number(r.version),
    type: r.type === "chat" ? "chat" : "text",
    prompt: r.content as PromptContent,
    config: (r.config ?? {}) as PromptConfigValue,
    message: String(r.message ?? ""),
    labels,
    created_by: r.created_by === null || r.created_by === undefined ? null : Number(r.created_by),
    author: r.author === null || r.author === undefined ? null : String(r.author),
    created_at: iso(r.created_at),
  };
}

const withLatest = (labels: readonly string[] | undefined, version: number, latest: number) =>
  version === latest ? [LATEST, ...(labels ?? [])] : [...(labels ?? [])];

async function setLabel(tx: Sql, promptId: number, label: string, version: number, userId: number | null): Promise<number | null> {
  const [before] = await tx.query<{ version: number }>("SELECT version FROM prompt_labels WHERE prompt_id = $1 AND label = $2 FOR UPDATE", [promptId, label]);
  if (!before) {
    const [count] = await tx.query<{ n: number }>("SELECT count(*)::int AS n FROM prompt_labels WHERE prompt_id = $1", [promptId]);
    if (Number(count?.n ?? 0) >= MAX_LABELS) throw new ValidationError({ field: "label", message: `a prompt may have at most ${MAX_LABELS} labels` });
  }
  await tx.query(
    `INSERT INTO prompt_labels (prompt_id, label, version, updated_by) VALUES ($1, $2, $3, $4)
     ON CONFLICT (prompt_id, label) DO UPDATE SET version = EXCLUDED.version, updated_by = EXCLUDED.updated_by, updated_at = now()`,
    [promptId, label, version, userId],
  );
  return before ? Number(before.version) : null;
}

/**
 * Writes a new version of the prompt `name` (creating the prompt with version 1) and moves the labels it names to it.
 * 422 past MAX_PROMPTS prompts a project or MAX_VERSIONS versions a prompt.
 */
export async function createPromptVersion(sql: Sql, projectId: number, userId: number | null, name: string, v: NewPromptVersion): Promise<PromptVersion> {
  return sql.transaction(async (tx) => {
    let row = await promptRow(tx, projectId, name, true);
    let version = 1;
    if (!row) {
      // The project's row orders first versions, so two at once neither pass the count nor collide on the name.
      await tx.query("SELECT id FROM projects WHERE id = $1 FOR UPDATE", [projectId]);
      row = await promptRow(tx, projectId, name, true);
    }
    if (!row) {
      const [count] = await tx.query<{ n: number }>("SELECT count(*)::int AS n FROM prompts WHERE project_id = $1", [projectId]);
      if (Number(count?.n ?? 0) >= MAX_PROMPTS) throw new ValidationError({ field: "name", message: `a project may have at most ${MAX_PROMPTS} prompts` });
      const [created] = await tx.query<{ id: number }>(
        "INSERT INTO prompts (project_id, name, latest_version, created_by) VALUES ($1, $2, 1, $3) RETURNING id", [projectId, name, userId]);
      row = { id: Number(created!.id), latest_version: 0 };
    } else {
      if (row.latest_version >= MAX_VERSIONS) throw new ValidationError({ field: "name", message: `a prompt may have at most ${MAX_VERSIONS} versions` });
      version = row.latest_version + 1;
      await tx.query("UPDATE prompts SET latest_version = $2, updated_at = now() WHERE id = $1", [row.id, version]);
    }
    await tx.query(
      "INSERT INTO prompt_versions (prompt_id, version, type, content, config, message, created_by) VALUES ($1, $2, $3, $4, $5, $6, $7)",
      [row.id, version, v.type, JSON.stringify(v.content), JSON.stringify(v.config), v.message, userId],
    );
    for (const label of v.labels) await setLabel(tx, row.id, label, version, userId);
    await audit(tx, projectId, userId, "prompt.version", `${name} v${version}`, { prompt: name, version, ...(v.labels.length ? { labels: v.labels } : {}) });
    return (await readPromptVersion(tx, projectId, name, { version }))!;
  });
}

/** One version of a prompt: by label, by number or the newest; 404 naming what is missing. */
export async function readPromptVersion(sql: Sql, projectId: number, name: string, ref: VersionRef): Promise<PromptVersion> {
  const row = await promptRow(sql, projectId, name);
  if (!row) throw notFound(name);
  let version: number;
  if ("label" in ref && ref.label !== LATEST) {
    const [l] = await sql.query<{ version: number }>("SELECT version FROM prompt_labels WHERE prompt_id = $1 AND label = $2", [row.id, ref.label]);
    if (!l) throw new NotFound({ resource: "label", message: `prompt ${JSON.stringify(name)} has no label ${JSON.stringify(ref.label)}` });
    version = Number(l.version);
  } else {
    version = "version" in ref ? ref.version : row.latest_version;
  }
  const [v] = await sql.query<Record<string, unknown>>(`${VERSION_SELECT} WHERE v.prompt_id = $1 AND v.version = $2`, [row.id, version]);
  if (!v) throw new NotFound({ resource: "version", message: `prompt ${JSON.stringify(name)} has no version ${version} (its newest is ${row.latest_version})` });
  return toVersion(name, v, withLatest((await labelsByVersion(sql, row.id)).get(version), version, row.latest_version));
}

/** A prompt's versions, newest first, `limit` of them below `before` (a version number) when given. */
export async function listPromptVersions(sql: Sql, projectId: number, name: string, page: { limit: number; before?: number }): Promise<PromptVersion[]> {
  const row = await promptRow(sql, projectId, name);
  if (!row) throw notFound(name);
  const labels = await labelsByVersion(sql, row.id);
  const rows = await sql.query<Record<string, unknown>>(
    `${VERSION_SELECT} WHERE v.prompt_id = $1 AND v.version < $2 ORDER BY v.version DESC LIMIT $3`,
    [row.id, page.before ?? row.latest_version + 1, page.limit],
  );
  return rows.map((r) => toVersion(name, r, withLatest(labels.get(Number(r.version)), Number(r.version), row.latest_version)));
}

/** The project's prompts by name, each with its newest version and its labels. */
export async function listPrompts(sql: Sql, projectId: number): Promise<PromptSummary[]> {
  const rows = await sql.query<Record<string, unknown>>(
    `SELECT p.name, p.latest_version, p.created_at, p.updated_at,
            coalesce((SELECT json_object_agg(l.label, l.version ORDER BY l.label) FROM prompt_labels l WHERE l.prompt_id = p.id), '{}') AS labels
       FROM prompts p WHERE p.project_id = $1 ORDER BY p.name LIMIT ${MAX_PROMPTS}`, [projectId]);
  return rows.map((r) => ({
    name: String(r.name),
    latest_version: Number(r.latest_version),
    labels: (typeof r.labels === "string" ? JSON.parse(r.labels) : r.labels) as Record<string, number>,
    created_at: iso(r.created_at),
    updated_at: iso(r.updated_at),
  }));
}

/**
 * Moves (or sets) a label to a version; a rollback is a move to an older one. Returns the version it left, if any.
 * `audited` names the audit entry's action (default `prompt.label`) and adds to its details (what a gate judged).
 */
export async function movePromptLabel(
  sql: Sql, projectId: number, userId: number | null, name: string, label: string, version: number,
  audited: { action?: string; details?: Record<string, unknown> } = {},
): Promise<{ label: string; version: number; previous: number | null }> {
  return sql.transaction(async (tx) => {
    const row = await promptRow(tx, projectId, name, true);
    if (!row) throw notFound(name);
    if (version > row.latest_version) {
      throw new ValidationError({ field: "version", message: `prompt ${JSON.stringify(name)} has no version ${version} (its newest is ${row.latest_version})` });
    }
    const previous = await setLabel(tx, row.id, label, version, userId);
    if (previous === version && !audited.action) return { label, version, previous };
    await audit(tx, projectId, userId, audited.action ?? "prompt.label", `${name} ${label}`, { prompt: name, label, version, from: previous, ...audited.details });
    return { label, version, previous };
  });
}

/** Removes a label from a prompt; 404 when it has none of that name. */
export async function deletePromptLabel(sql: Sql, projectId: number, userId: number | null, name: string, label: string): Promise<void> {
  await sql.transaction(async (tx) => {
    const row = await promptRow(tx, projectId, name, true);
    if (!row) throw notFound(name);
    const gone = await tx.query<{ version: number }>("DELETE FROM prompt_labels WHERE prompt_id = $1 AND label = $2 RETURNING version", [row.id, label]);
    if (!gone.length) throw new NotFound({ resource: "label", message: `prompt ${JSON.stringify(name)} has no label ${JSON.stringify(label)}` });
    await audit(tx, projectId, userId, "prompt.unlabel", `${name} ${label}`, { prompt: name, label, version: Number(gone[0]!.version) });
  });
}

