/**
 * Accounts, the feature (docs/TEAMS.md): changes to who may do what that other processes must hear of at once. A
 * member's new role or removal is committed through stores/accounts/, then announced: every web process forgets the
 * API keys it covers (`access.changed`), and gateways close a removed member's sockets (`realtime.revoke`). Everything
 * outside accounts/ enters here; users, projects, members and keys live in stores/accounts/.
 *
 *   access-changes.ts   what an access change is, its message on `access.changed`, announcing it
 *   member-role.ts      adding a member or changing their role, then announcing it
 *   member-removal.ts   removing a member, then announcing it to web processes and gateways
 */
export { ACCESS_CHANGED_CHANNEL, announceAccessChange, parseAccessChange, type AccessChange } from "./access-changes.js";
export { removeMemberNow, type MemberRemoved } from "./member-removal.js";
export { setMemberNow, type MemberSet } from "./member-role.js";
