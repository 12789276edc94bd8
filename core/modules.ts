/** Imports a module named in configuration: a path relative to the working directory, an absolute path or a package. */
import path from "node:path";
import { pathToFileURL } from "node:url";

export async function importConfigured(spec: string): Promise<Record<string, unknown>> {
  const url = spec.startsWith(".") || path.isAbsolute(spec) ? pathToFileURL(path.resolve(spec)).href : spec;
  if (/\.[mc]?ts$/.test(url)) await loadTypeScript();
  return (await import(url)) as Record<string, unknown>;
}

let typeScriptLoader: Promise<void> | undefined;

/**
 * A plugin or trigger written in TypeScript: the compiled server (dist/) registers tsx's loader once per thread, only
 * then. Running from the sources (tests, tsx), TypeScript already loads.
 */
function loadTypeScript(): Promise<void> {
  if (import.meta.url.endsWith(".ts")) return Promise.resolve();
  typeScriptLoader ??= import("tsx/esm/api").then(({ register }) => void register());
  return typeScriptLoader;
}
