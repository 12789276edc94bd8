/**
 * The client's address behind reverse proxies (RUNWATCH_TRUSTED_PROXIES). X-Forwarded-For is written by whoever
 * sends the request, so it is believed only as far as the operator names the proxies in front of Runwatch:
 *
 * - unset (the default): the socket's peer is the client; X-Forwarded-For is ignored;
 * - a hop count `N`: the peer and the N-1 proxies it names before itself are trusted, the address before them is the
 *   client (for N proxies in a row, e.g. `1` behind one load balancer);
 * - addresses and CIDRs (`10.0.0.0/8, 127.0.0.1, fd00::/8`): the list is read from the right (nearest) while its
 *   entries are trusted; the first untrusted one is the client.
 *
 * The client address keys the per-address throttles (failed keys, logins, registrations): trusting a header
 * nobody vouches for would let a client pick its key, slipping past them or spending a victim's budget.
 */
import ipaddr from "ipaddr.js";

export type TrustedProxies =
  | { readonly kind: "none" }
  | { readonly kind: "hops"; readonly hops: number }
  | { readonly kind: "ranges"; readonly ranges: readonly [ipaddr.IPv4 | ipaddr.IPv6, number][]; readonly text: string };

export const NO_TRUSTED_PROXIES: TrustedProxies = { kind: "none" };

/** Parses RUNWATCH_TRUSTED_PROXIES; throws naming the entry that is neither a hop count, an address nor a CIDR. */
export function parseTrustedProxies(value: string | undefined): TrustedProxies {
  const text = (value ?? "").trim();
  if (!text) return NO_TRUSTED_PROXIES;
  if (/^\d+$/.test(text)) {
    const hops = Number(text);
    return hops === 0 ? NO_TRUSTED_PROXIES : { kind: "hops", hops };
  }
  const ranges = text.split(",").map((s) => s.trim()).filter(Boolean).map((entry): [ipaddr.IPv4 | ipaddr.IPv6, number] => {
    try {
      if (entry.includes("/")) return ipaddr.parseCIDR(entry);
      const addr = ipaddr.process(entry);
      return [addr, addr.kind() === "ipv4" ? 32 : 128];
    } catch {
      throw new Error(`RUNWATCH_TRUSTED_PROXIES: ${JSON.stringify(entry)} is neither a hop count, an IP address nor a CIDR range`);
    }
  });
  return { kind: "ranges", ranges, text };
}

/** The address as ipaddr.js reads it, IPv4-mapped IPv6 as IPv4; undefined when it is not an address. */
function parse(address: string): ipaddr.IPv4 | ipaddr.IPv6 | undefined {
  try {
    return ipaddr.process(address.trim());
  } catch {
    return undefined;
  }
}

function trusted(trust: TrustedProxies & { kind: "ranges" }, address: string): boolean {
  const a = parse(address);
  return a !== undefined && trust.ranges.some(([range, bits]) => a.kind() === range.kind() && a.match(range, bits));
}

/** The client's address, from the socket's peer and the X-Forwarded-For header(s) it sent. */
export function clientAddress(peer: string, forwardedFor: string | undefined, trust: TrustedProxies): string {
  const self = parse(peer)?.toString() ?? peer;
  if (trust.kind === "none" || !forwardedFor) return self;
  // Nearest first: the peer, then the header's entries from its right end.
  const chain = [self, ...forwardedFor.split(",").map((s) => s.trim()).filter(Boolean).reverse()];
  let i = 0;
  if (trust.kind === "hops") {
    i = Math.min(trust.hops, chain.length - 1);
  } else {
    while (i < chain.length - 1 && trusted(trust, chain[i]!)) i++;
  }
  // An entry that is not an address stops the walk: the last address before it is as far as anyone vouched.
  while (i > 0 && !parse(chain[i]!)) i--;
  return parse(chain[i]!)?.toString() ?? chain[i]!;
}
