/**
 * Who may do what in a project: the one policy table (docs/TEAMS.md). Every route, form, realtime subscription and
 * CLI command names the action it performs; the role a member holds either reaches it or not.
 */

/** Project roles, each allowed all that the ones before it are. */
export const ROLES = ["viewer", "member", "admin", "owner"] as const;
export type Role = (typeof ROLES)[number];

/** The least role each action needs. */
export const ACTION_ROLE = {
  /** Everything the project holds: runs, traces, scores, sessions, costs, agents, alerts, dead letters, settings. */
  read: "viewer",
  /**
   * Send with an API key: events, OTLP spans, scores, and experiments over datasets. A key acts with its creator's
   * current role, so the key of a creator demoted to viewer may still read but no longer send.
   */
  send: "member",
  /** Answer an agent's human-input question. */
  answer_input: "member",
  /** Give a run feedback (a score) from the dashboard. */
  give_feedback: "member",
  /** Edit agents and their configs (including activating a version). */
  edit_agents: "member",
  /** Activate a config version that the activation gate refuses, with a reason (docs/EVALUATION.md). */
  force_activation: "admin",
  edit_alert_rules: "member",
  edit_datasets: "member",
  /** Save and delete the project's saved views of the runs list (every member sees them). */
  edit_views: "member",
  /** Save, change and delete the project's saved queries of the /query page (every member may read and run them). */
  edit_queries: "member",
  /** Push prompt versions and move their labels (a rollback included; docs/PROMPTS.md). */
  edit_prompts: "member",
  /** Evaluators, online evaluation rules and their backfills, annotation queues (docs/EVALUATION.md). */
  edit_evaluators: "member",
  /** Work an annotation queue: take its next item, score, complete or skip it. */
  review: "member",
  /** Create, list and revoke the project's API keys. */
  manage_keys: "admin",
  /** Invite, add and remove members, and change their roles (never the owner's). */
  manage_members: "admin",
  /** The project's settings: retention, provider settings. */
  manage_settings: "admin",
  rename_project: "owner",
  delete_project: "owner",
  transfer_ownership: "owner",
} as const satisfies Record<string, Role>;
export type Action = keyof typeof ACTION_ROLE;

export const isRole = (v: unknown): v is Role => typeof v === "string" && (ROLES as readonly string[]).includes(v);

/** Whether a member with `role` may perform `action`. */
export const can = (role: Role, action: Action): boolean => ROLES.indexOf(role) >= ROLES.indexOf(ACTION_ROLE[action]);

/** What an API key may do: `ingest` sends (ingest, OTLP, scores); `read+ingest` also reads the read API. */
export const KEY_SCOPES = ["ingest", "read+ingest"] as const;
export type KeyScope = (typeof KEY_SCOPES)[number];
export const isKeyScope = (v: unknown): v is KeyScope => typeof v === "string" && (KEY_SCOPES as readonly string[]).includes(v);

/** Whether a key with `scope` may send (`ingest`) or also read (`read`). */
export const keyMay = (scope: KeyScope, use: "ingest" | "read"): boolean => use === "ingest" || scope === "read+ingest";
