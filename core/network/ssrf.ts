/**
 * SSRF guard for URLs that users give the server to call — alert webhook and Slack targets, a project's LLM provider
 * base URL: such a URL must not make the server talk to itself, its private network or cloud metadata endpoints. Every address the host name resolves to is checked (a name with one
 * public and one private address is refused), and the request then connects to the checked address (the
 * lookup is pinned), so a DNS answer that changes between check and connect (DNS rebinding) cannot slip in.
 * Redirects are never followed. RUNWATCH_ALLOW_PRIVATE_WEBHOOKS=1 (alerts) and RUNWATCH_ALLOW_PRIVATE_PROVIDER_URLS=1
 * (provider base URLs) turn the address check off (tests, labs, on-premises servers).
 */
import dns from "node:dns";
import http from "node:http";
import https from "node:https";
import net from "node:net";
import ipaddr from "ipaddr.js";

/** IANA's global unicast block: every IPv6 address outside it (::/96 IPv4-compatible, 5f00::/16, …) is refused. */
const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR("2000::/3");

/**
 * True for every address that is not plain public unicast: loopback, private, link-local, unique-local, CGNAT,
 * multicast, reserved, documentation, benchmarking, and every form that embeds another address (IPv4-mapped,
 * IPv4-compatible ::/96, ::ffff:0:0:0/96, NAT64, 6to4, Teredo). The special-use tables are ipaddr.js's (the
 * library Express trusts for proxy addresses), not ours; IPv4-mapped IPv6 is judged as the IPv4 it carries.
 */
export function isPrivateAddress(ip: string): boolean {
  if (!ipaddr.isValid(ip)) return true; // not an IP address at all: refuse rather than guess
  const addr = ipaddr.process(ip);
  if (addr.range() !== "unicast") return true;
  return addr.kind() === "ipv6" && !addr.match(GLOBAL_UNICAST_V6);
}

export class TargetRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = "TargetRefused";
  }
}

/** Parses a webhook URL: http(s) only, no credentials in it. Throws TargetRefused with a user-facing reason. */
export function parseTargetUrl(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new TargetRefused("must be a full URL, e.g. https://example.com/hooks/runwatch");
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") throw new TargetRefused("must be an http:// or https:// URL");
  if (url.username || url.password) throw new TargetRefused("must not contain a user name or password");
  return url;
}

const hostOf = (url: URL) => url.hostname.replace(/^\[|\]$/g, "");

export interface ResolvedAddress {
  readonly address: string;
  readonly family: number;
}
/** Every address a host name resolves to (the system resolver, as net.connect would use). */
export type Resolve = (host: string) => Promise<ResolvedAddress[]>;
const systemResolve: Resolve = (host) => dns.promises.lookup(host, { all: true, verbatim: true });

/**
 * The one refusal of a host, whatever the reason: its name is not in DNS, or it resolves to an address that is not
 * public. It never names the addresses nor tells the two apart: the person who saved the URL must not learn what
 * the server's internal names resolve to, nor which of them exist.
 */
const refusedHost = (host: string) =>
  new TargetRefused(`host ${host} is not allowed: only public addresses, and names that resolve only to public addresses, may be called`);

/** Resolves `host` (an IP literal stands for itself) and checks every address unless private targets are allowed. */
async function checkHost(host: string, allowPrivate: boolean, resolve: Resolve = systemResolve): Promise<ResolvedAddress[]> {
  const literal = net.isIP(host);
  const addresses = literal ? [{ address: host, family: literal }] : await resolve(host).catch((): ResolvedAddress[] => []);
  // With private targets allowed there is nothing internal to hide: the operator gets the plain reason.
  if (addresses.length === 0) throw allowPrivate ? new TargetRefused(`host ${host} does not resolve`) : refusedHost(host);
  if (!allowPrivate && addresses.some((a) => isPrivateAddress(a.address))) throw refusedHost(host);
  return addresses;
}

/** Resolves the URL's host and checks every address (unless private targets are allowed). Returns the addresses. */
export const checkTarget = (url: URL, allowPrivate: boolean): Promise<ResolvedAddress[]> => checkHost(hostOf(url), allowPrivate);

/** A net.connect `lookup` that answers with `addresses(host)`, of the family asked for. */
function lookupVia(addresses: (host: string) => Promise<ResolvedAddress[]>): net.LookupFunction {
  return ((host: string, options: number | { all?: boolean; family?: number | string }, cb: (...args: unknown[]) => void) => {
    const asked = typeof options === "number" ? options : options.family;
    const fam = asked === 4 || asked === "IPv4" ? 4 : asked === 6 || asked === "IPv6" ? 6 : 0;
    addresses(host).then((all) => {
      const list = all.filter((a) => fam === 0 || a.family === fam);
      if (list.length === 0) return cb(Object.assign(new Error("no address of the requested family"), { code: "ENOTFOUND" }));
      if (typeof options === "object" && options.all) cb(null, list);
      else cb(null, list[0]!.address, list[0]!.family);
    }, (err: unknown) => cb(err));
  }) as unknown as net.LookupFunction;
}

/**
 * A net.connect `lookup` that resolves and checks at connect time, so the address connected to is the address
 * checked (no DNS rebinding between a check and the connection). An IP literal never reaches a lookup: check it first.
 */
export const checkingLookup = (allowPrivate: boolean, resolve: Resolve = systemResolve): net.LookupFunction =>
  lookupVia((host) => checkHost(host, allowPrivate, resolve));

/** Checks a URL's host when it is an IP literal (which net.connect does not look up); TargetRefused when private. */
export async function checkLiteralHost(url: URL, allowPrivate: boolean): Promise<void> {
  const host = hostOf(url);
  if (net.isIP(host)) await checkHost(host, allowPrivate);
}

export interface PostResult {
  readonly status: number;
  readonly body: string;
}

/**
 * POSTs `body` to `url` after checkTarget, connecting only to the checked addresses. Resolves with any HTTP
 * answer (the caller decides what counts as delivered); rejects on refusal, network error or timeout.
 */
export async function guardedPost(
  url: URL,
  body: string,
  headers: Record<string, string>,
  opts: { allowPrivate: boolean; timeoutMs: number },
): Promise<PostResult> {
  const addresses = await checkTarget(url, opts.allowPrivate);
  // The pinned lookup: hands net.connect the addresses checked above, whatever the resolver says now.
  const lookup = lookupVia(async () => addresses);
  const mod = url.protocol === "https:" ? https : http;
  return new Promise<PostResult>((resolve, reject) => {
    const req = mod.request(
      url,
      {
        method: "POST",
        lookup,
        headers: { "content-type": "application/json", "content-length": String(Buffer.byteLength(body)), ...headers },
        timeout: opts.timeoutMs,
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on("data", (c: Buffer) => {
          // Keep only the start of the answer: enough for an error message.
          if (size < 4096) chunks.push(c);
          size += c.length;
        });
        res.on("end", () => {
          clearTimeout(overall);
          resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8").slice(0, 4096) });
        });
        res.on("error", (err) => { clearTimeout(overall); reject(err); });
      },
    );
    const overall = setTimeout(() => req.destroy(new Error(`no answer within ${opts.timeoutMs} ms`)), opts.timeoutMs);
    req.on("timeout", () => req.destroy(new Error(`no answer within ${opts.timeoutMs} ms`)));
    req.on("error", (err) => { clearTimeout(overall); reject(err); });
    req.end(body);
  });
}
