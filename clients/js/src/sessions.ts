/**
 * Finding a session's run that waits for input (GET /api/runs?session_id&status=waiting_for_input): how a LangGraph
 * handler in another process — one that did not see the interrupt — knows which run a resume continues.
 */
import { RunwatchError } from "./errors.js";

/** What the look-up needs from the client. */
export interface SessionHost {
  readonly baseUrl: string;
  readonly apiKey: string;
  readonly fetchImpl: typeof fetch;
}

/**
 * The sdk_run_id of the session's newest run waiting for input, or undefined when it has none (or the server has not
 * stored the interrupt yet). Rejects with a RunwatchError ("config": the key; "http": another refusal; "network").
 */
export async function findWaitingRun(host: SessionHost, sessionId: string, timeoutMs = 5_000): Promise<string | undefined> {
  if (!host.apiKey) throw new RunwatchError("config", "Runwatch is disabled (no API key); cannot look a session up");
  const url = `${host.baseUrl}/api/runs?session_id=${encodeURIComponent(sessionId)}&status=waiting_for_input&limit=1`;
  let res: Response;
  try {
    res = await host.fetchImpl(url, { headers: { authorization: `Bearer ${host.apiKey}` }, signal: AbortSignal.timeout(timeoutMs) });
  } catch (err) {
    throw new RunwatchError("network", `GET ${url}: ${(err as Error)?.message ?? String(err)}`, { cause: err });
  }
  const text = await res.text();
  if (res.status !== 200) {
    throw new RunwatchError(res.status === 401 || res.status === 403 ? "config" : "http", `GET ${url} answered ${res.status}`, { status: res.status, body: text });
  }
  const runs = (JSON.parse(text) as { runs?: { sdk_run_id?: unknown }[] }).runs ?? [];
  const id = runs[0]?.sdk_run_id;
  return typeof id === "string" ? id : undefined;
}
