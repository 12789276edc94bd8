/** What the CLI's commands share: how they print, and how they refuse a command line (exit 2 with the usage). */
export class UsageError extends Error {}

export const out = (s: string) => process.stdout.write(s + "\n");

export function required(values: Record<string, unknown>, ...names: string[]): void {
  const missing = names.filter((n) => typeof values[n] !== "string" || values[n] === "");
  if (missing.length) throw new UsageError(`missing ${missing.map((n) => `--${n}`).join(", ")}`);
}
