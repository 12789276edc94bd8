/**
 * fetch for URLs a project gives the server (its LLM provider's base URL): every connection goes only to addresses
 * checked when it is made (core/network/ssrf.ts checkingLookup), so a host name that resolved to a public address
 * when the URL was saved or checked cannot be rebound to a private one for the call. Redirects are refused: one to an
 * IP literal would bypass the lookup. undici's own fetch, for its `dispatcher` (the pool with the checking lookup).
 */
import { Agent, fetch as undiciFetch } from "undici";
import { checkingLookup, checkLiteralHost, TargetRefused, type Resolve } from "./ssrf.js";

export function guardedFetch(opts: { allowPrivate: boolean; resolve?: Resolve }): typeof fetch {
  const dispatcher = new Agent({ connect: { lookup: checkingLookup(opts.allowPrivate, opts.resolve) } });
  return (async (input: string | URL | Request, init?: RequestInit) => {
    if (typeof input !== "string" && !(input instanceof URL)) throw new TypeError("guardedFetch takes a URL and its init, not a Request");
    const url = new URL(input);
    if (url.protocol !== "http:" && url.protocol !== "https:") throw new TargetRefused("must be an http:// or https:// URL");
    await checkLiteralHost(url, opts.allowPrivate);
    return undiciFetch(url, { ...(init as object), redirect: "error", dispatcher });
  }) as unknown as typeof fetch;
}
