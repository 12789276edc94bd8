/**
 * What an API key may do in its project: what its creator's role there allows now (docs/TEAMS.md, API keys). The role
 * comes with the key's principal (web/middleware/api-key-auth.ts), so checking it costs a request no query.
 */
import { ACTION_ROLE, can, type Action } from "../../core/access/roles.js";
import { AuthError } from "../../core/errors.js";
import type { KeyPrincipal } from "./api-key-auth.js";

/** 403 `forbidden` unless the role of the key's creator in its project allows `action`. */
export function refuseUnlessRoleMay(p: KeyPrincipal, action: Action): void {
  if (can(p.role, action)) return;
  throw new AuthError({
    code: "forbidden",
    message: `this API key acts with the role of the user who made it, now a ${p.role} of its project: a ${p.role} may not ${action.replace(/_/g, " ")} (it takes ${ACTION_ROLE[action]} or above)`,
  });
}
