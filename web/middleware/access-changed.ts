/**
 * After a change to what API keys may do (accounts/access-changes.ts), made by a route of this process: the
 * keys it covers are forgotten here at once, and the other web processes are told.
 */
import { announceAccessChange, type AccessChange } from "../../accounts/index.js";
import type { WebDeps } from "../deps.js";
import type { ApiKeyAuth } from "./api-key-auth.js";

export async function accessChanged(deps: WebDeps, auth: ApiKeyAuth, change: AccessChange): Promise<void> {
  auth.forget(change);
  const err = await announceAccessChange(deps.ports.pubsub, change);
  if (err) deps.logger.warn("could not tell other web processes of an access change: they see it within 10 s", { err });
}
