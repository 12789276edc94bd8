/** `runwatch project …` (deploy/cli.ts): the commands' output; the work is deploy/admin-projects.ts. */
import type { Config } from "../core/config.js";
import type { Project } from "../stores/accounts/projects.js";
import { admin } from "./admin-client.js";
import { out, required } from "./cli-output.js";

type Values = Record<string, string | boolean | undefined>;

/** "2 API keys (prod, ci)". */
const listed = (names: readonly string[], what: string) => `${names.length} ${what}${names.length === 1 ? "" : "s"} (${names.join(", ")})`;

export async function projectCommand(config: Config, verb: string, values: Values): Promise<number> {
  const str = (name: string) => values[name] as string | undefined;
  if (verb === "create") {
    required(values, "email", "name");
    const { project } = (await admin(config, { cmd: "project.create", email: str("email")!, name: str("name")! })) as { project: Project };
    out(project.slug);
    process.stderr.write(`Created project "${project.name}" (slug ${project.slug}), owned by ${str("email")}.\n`);
    return 0;
  }
  if (verb === "list") {
    const { projects } = (await admin(config, { cmd: "project.list", email: str("email") })) as { projects: (Project & { role?: string; members?: number })[] };
    if (values.json) out(JSON.stringify(projects, null, 2));
    else if (projects.length === 0) out("No projects.");
    else for (const p of projects) out(`${p.slug}\t${p.name}${p.role ? `\t${p.role}` : `\t${p.members} member${p.members === 1 ? "" : "s"}`}${p.personal ? "\tpersonal" : ""}`);
    return 0;
  }
  required(values, "project", "email");
  if (verb === "add-member") {
    const { member, project, keys, invitations_revoked: invitations, warning } = (await admin(config, { cmd: "project.add-member", project: str("project")!, email: str("email")!, role: str("role") })) as {
      member: { email: string; role: string }; project: Project; keys: number; invitations_revoked: string[]; warning?: string;
    };
    out(`${member.email} is now ${member.role} of ${project.slug}.`);
    if (keys > 0) out(`${keys === 1 ? "The API key they made there acts" : `The ${keys} API keys they made there act`} as ${member.role} from now on.`);
    if (invitations.length > 0) out(`Revoked ${listed(invitations, "open invitation")} they sent: a ${member.role} may not invite.`);
    if (warning) process.stderr.write(`warning: ${warning}\n`);
    return 0;
  }
  const { project, keys_revoked: keys, invitations_revoked: invitations, warning } = (await admin(config, { cmd: "project.remove-member", project: str("project")!, email: str("email")! })) as {
    project: Project; keys_revoked: string[]; invitations_revoked: string[]; warning?: string;
  };
  out(`Removed ${str("email")} from ${project.slug}.`);
  if (keys.length > 0) out(`Revoked ${listed(keys, "API key")} they made there.`);
  if (invitations.length > 0) out(`Revoked ${listed(invitations, "open invitation")} they sent.`);
  if (warning) process.stderr.write(`warning: ${warning}\n`);
  return 0;
}
