/** Shared by slack and webhook: the SSRF-guarded POST, and what an HTTP answer means for the job. */
import { TargetRefused, checkTarget, guardedPost, parseTargetUrl } from "../../../core/network/ssrf.js";
import type { NotificationSettings } from "../../settings.js";
import { PermanentFailure } from "./types.js";

export async function validateUrlTarget(target: string, settings: NotificationSettings): Promise<string> {
  const url = parseTargetUrl(target.trim());
  await checkTarget(url, settings.allowPrivateTargets);
  return url.toString();
}

export async function postJson(target: string, body: string, headers: Record<string, string>, settings: NotificationSettings): Promise<void> {
  let res;
  try {
    res = await guardedPost(parseTargetUrl(target), body, headers, { allowPrivate: settings.allowPrivateTargets, timeoutMs: settings.timeoutMs });
  } catch (err) {
    if (err instanceof TargetRefused) throw new PermanentFailure(`target refused: ${err.message}`);
    throw err;
  }
  if (res.status >= 200 && res.status < 300) return;
  const text = `HTTP ${res.status}${res.body ? `: ${res.body.slice(0, 300)}` : ""}`;
  // 410 Gone: the endpoint was removed for good (Slack answers 410 for a revoked webhook... and 404 no_service).
  if (res.status === 410 || (res.status === 404 && /no_service/.test(res.body))) throw new PermanentFailure(text);
  throw new Error(text);
}
