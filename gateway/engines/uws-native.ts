/**
 * Loads uWebSockets.js's native addon for the running Node.js, or says why it cannot.
 *
 * The addon is loaded by file, not through the package's entry point: the unofficial fork installed by default
 * (`@trufflesuite/uws-js-unofficial`, aliased as `uWebSockets.js`) falls back to a JavaScript implementation when it
 * has no binary for this Node.js ABI, and that fallback implements neither `publish` nor WebSocket upgrades. Both
 * layouts are known: the official package keeps `uws_<platform>_<arch>_<abi>.node` at its root, the fork under
 * `binaries/`. Where neither loads, the gateway runs on the `ws` engine instead (choose.ts).
 */
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import type uWS from "uWebSockets.js";

export type NativeUws = typeof uWS;

const require = createRequire(import.meta.url);

/** The installed package's directory; by its entry point if its `exports` hide package.json. */
function packageRoot(): string | undefined {
  for (const locate of [() => path.dirname(require.resolve("uWebSockets.js/package.json")), () => path.dirname(require.resolve("uWebSockets.js"))]) {
    try {
      return locate();
    } catch { /* next */ }
  }
  return undefined;
}

export function loadNativeUws(): { ok: true; uws: NativeUws; file: string } | { ok: false; why: string } {
  const root = packageRoot();
  if (!root) return { ok: false, why: "uWebSockets.js is not installed" };
  const binary = `uws_${process.platform}_${process.arch}_${process.versions.modules}.node`;
  const candidates = [root, path.join(root, "binaries"), path.join(root, "..", "binaries")].map((d) => path.join(d, binary)).filter((f) => existsSync(f));
  const failures: string[] = [];
  for (const file of candidates) {
    try {
      return { ok: true, uws: require(file) as NativeUws, file };
    } catch (err) {
      failures.push(`${path.relative(root, file)}: ${(err as Error).message.split("\n")[0]}`);
    }
  }
  const node = `Node.js ${process.version} (ABI ${process.versions.modules}, ${process.platform}-${process.arch})`;
  return failures.length
    ? { ok: false, why: `uWebSockets.js's native build for ${node} does not load (${failures.join("; ")})` }
    : { ok: false, why: `uWebSockets.js has no native build for ${node}` };
}
