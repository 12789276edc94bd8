import { describe, expect, it } from "vitest";
import { clientAddress, parseTrustedProxies } from "./client-address.js";

describe("client address behind trusted proxies", () => {
  it("without trusted proxies X-Forwarded-For is ignored: the socket's peer is the client", () => {
    const none = parseTrustedProxies(undefined);
    expect(clientAddress("203.0.113.9", "1.2.3.4, 5.6.7.8", none)).toBe("203.0.113.9");
    expect(clientAddress("::ffff:203.0.113.9", "1.2.3.4", none)).toBe("203.0.113.9");
    expect(parseTrustedProxies("0")).toEqual(none);
  });

  it("a hop count trusts that many proxies from the server outwards", () => {
    expect(clientAddress("10.0.0.2", "198.51.100.7", parseTrustedProxies("1"))).toBe("198.51.100.7");
    // A client's own header is to the left of what the proxy appended: it cannot choose its address.
    expect(clientAddress("10.0.0.2", "6.6.6.6, 198.51.100.7", parseTrustedProxies("1"))).toBe("198.51.100.7");
    expect(clientAddress("10.0.0.2", "6.6.6.6, 198.51.100.7, 10.0.0.3", parseTrustedProxies("2"))).toBe("198.51.100.7");
    expect(clientAddress("10.0.0.2", "198.51.100.7", parseTrustedProxies("5"))).toBe("198.51.100.7");
  });

  it("addresses and CIDRs: read from the right while trusted; the first untrusted entry is the client", () => {
    const trust = parseTrustedProxies("127.0.0.1, 10.0.0.0/8, fd00::/8");
    expect(clientAddress("127.0.0.1", "198.51.100.7", trust)).toBe("198.51.100.7");
    expect(clientAddress("127.0.0.1", "6.6.6.6, 198.51.100.7, 10.1.2.3", trust)).toBe("198.51.100.7");
    expect(clientAddress("::ffff:127.0.0.1", "2001:db8::1", trust)).toBe("2001:db8::1");
    expect(clientAddress("fd00::5", "10.0.0.9, 10.0.0.8", trust)).toBe("10.0.0.9");
    // The peer itself is not trusted: its header is ignored.
    expect(clientAddress("198.51.100.50", "1.1.1.1", trust)).toBe("198.51.100.50");
    // Garbage in the header stops the walk at the last address somebody vouched for.
    expect(clientAddress("127.0.0.1", "not-an-ip", trust)).toBe("127.0.0.1");
    expect(clientAddress("127.0.0.1", "1.1.1.1, garbage, 10.0.0.1", trust)).toBe("10.0.0.1");
  });

  it("refuses a setting that is neither a hop count, an address nor a CIDR, naming the entry", () => {
    expect(() => parseTrustedProxies("10.0.0.0/8, proxy.internal")).toThrow(/"proxy.internal"/);
    expect(() => parseTrustedProxies("10.0.0.0/99")).toThrow(/RUNWATCH_TRUSTED_PROXIES/);
  });
});
