/** Imports a module named in configuration: a path relative to the working directory, an absolute path or a package. */
import path from "node:path";
import { pathToFileURL } from "node:url";

export async function importConfigured(spec: string): Promise<Record<string, unknown>> {
  const url = spec.startsWith(".") || path.isAbsolute(spec) ? pathToFileURL(path.resolve(spec)).href : spec;
  return (await import(url)) as Record<string, unknown>;
}
