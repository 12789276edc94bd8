/**
 * RUNWATCH_OPERATOR_JUDGE_KEY: which projects' LLM judges may run on agents-service's own provider keys — the
 * operator's account — when the project has no key of its own for the provider (docs/EVALUATORS.md, Provider keys):
 *
 *   admins (default)   the projects whose owner is an instance admin (RUNWATCH_ADMIN_EMAILS, or the first user)
 *   all                every project: anyone who registers spends the operator's account, within the caps
 *   off                none: every project brings its own key
 *   team-a, team-b     these projects (by slug); `admins` may be one of the list
 *
 * A project with its own key for the provider spends its own, whatever this says.
 */
export type OperatorJudgeKey =
  | { readonly kind: "all" }
  | { readonly kind: "some"; readonly admins: boolean; readonly slugs: ReadonlySet<string> };

const SLUG = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;

export function parseOperatorJudgeKey(value: string | undefined): OperatorJudgeKey {
  const words = (value ?? "").split(",").map((w) => w.trim().toLowerCase()).filter(Boolean);
  if (words.length === 0) return { kind: "some", admins: true, slugs: new Set() };
  if (words.length === 1 && words[0] === "all") return { kind: "all" };
  if (words.length === 1 && words[0] === "off") return { kind: "some", admins: false, slugs: new Set() };
  const bad = words.find((w) => w === "all" || w === "off" || (w !== "admins" && !SLUG.test(w)));
  if (bad !== undefined) {
    throw new Error(`RUNWATCH_OPERATOR_JUDGE_KEY must be admins, all, off, or a comma-separated list of project slugs (and admins); ${JSON.stringify(bad)} is not one`);
  }
  return { kind: "some", admins: words.includes("admins"), slugs: new Set(words.filter((w) => w !== "admins")) };
}
