/**
 * Secrets kept at rest sealed (a project's LLM provider keys): AES-256-GCM under a key derived (HKDF-SHA256) from the
 * server's SESSION_SECRET and the purpose, so a copy of the database alone reveals nothing, and a sealed value
 * cannot be moved to another purpose. A changed SESSION_SECRET leaves the sealed values unreadable: `open` throws,
 * and they must be entered again.
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto";

export interface Sealer {
  seal(plain: string): string;
  /** The sealed value's plain text; throws SealBroken when it was sealed under another secret or changed. */
  open(sealed: string): string;
}

export class SealBroken extends Error {
  constructor() {
    super("the sealed value cannot be opened: it was sealed under another SESSION_SECRET, or changed");
    this.name = "SealBroken";
  }
}

const VERSION = "v1";

export function sealerFor(secret: string, purpose: string): Sealer {
  const key = Buffer.from(hkdfSync("sha256", secret, "runwatch-sealed", purpose, 32));
  return {
    seal(plain) {
      const iv = randomBytes(12);
      const cipher = createCipheriv("aes-256-gcm", key, iv);
      const body = Buffer.concat([cipher.update(plain, "utf8"), cipher.final()]);
      return `${VERSION}:${Buffer.concat([iv, cipher.getAuthTag(), body]).toString("base64url")}`;
    },
    open(sealed) {
      const [version, data] = sealed.split(":");
      if (version !== VERSION || !data) throw new SealBroken();
      const raw = Buffer.from(data, "base64url");
      if (raw.length < 28) throw new SealBroken();
      try {
        const decipher = createDecipheriv("aes-256-gcm", key, raw.subarray(0, 12));
        decipher.setAuthTag(raw.subarray(12, 28));
        return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString("utf8");
      } catch {
        throw new SealBroken();
      }
    },
  };
}
