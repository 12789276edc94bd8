import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { signRealtimeToken, verifyRealtimeToken } from "./tokens.js";

describe("realtime tokens", () => {
  const now = Date.parse("2026-11-23T10:00:00Z");
  const SID = "sid-0123456789abcdef";
  it("round-trips uid, session binding and expiry", () => {
    const { token, exp } = signRealtimeToken("s", 42, SID, 60, now);
    expect(verifyRealtimeToken("s", token, now)).toEqual({ ok: true, claims: { uid: 42, exp, sid: SID } });
  });
  it("refuses a token that is not bound to a session", () => {
    const body = Buffer.from(JSON.stringify({ p: "rt", uid: 42, exp: 9e9 })).toString("base64url");
    const sig = createHmac("sha256", "s").update(body).digest("base64url");
    expect(verifyRealtimeToken("s", `${body}.${sig}`, now)).toEqual({ ok: false, error: "malformed" });
  });
  it("rejects expiry, another secret, tampering and garbage", () => {
    const { token } = signRealtimeToken("s", 42, SID, 60, now);
    expect(verifyRealtimeToken("s", token, now + 60_000)).toEqual({ ok: false, error: "expired" });
    expect(verifyRealtimeToken("t", token, now)).toEqual({ ok: false, error: "bad_signature" });
    const [body, sig] = token.split(".");
    const forged = Buffer.from(JSON.stringify({ p: "rt", uid: 43, exp: 9e9 })).toString("base64url");
    expect(verifyRealtimeToken("s", `${forged}.${sig}`, now)).toEqual({ ok: false, error: "bad_signature" });
    expect(verifyRealtimeToken("s", `${body}`, now)).toEqual({ ok: false, error: "malformed" });
    expect(verifyRealtimeToken("s", "a.b.c", now)).toEqual({ ok: false, error: "malformed" });
  });
});
